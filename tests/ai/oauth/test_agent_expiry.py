"""A login that expires during a long agent run: the next turn's request refreshes it (once),
with no key passed anywhere: the agent's requests resolve it from ``$TAU_HOME/auth.json``."""

from __future__ import annotations

import dataclasses
import json
import time
from pathlib import Path
from typing import Any

import pytest

from tau.agent import Agent, AgentTool
from tau.ai import get_model
from tau.ai.oauth import (
    CredentialStore,
    OAuthCredentials,
    OpenAICodexOAuth,
    get_oauth_provider,
    register_oauth_provider,
)
from tests import factories
from tests.ai.oauth.fakes import FakeOpenAIAuth
from tests.ai.servers import SSE_HEADERS, LocalServer, Reply


def _answer(item: dict[str, Any]) -> bytes:
    return factories.sse(
        {"type": "response.output_item.added", "output_index": 0, "item": item},
        {"type": "response.output_item.done", "output_index": 0, "item": item},
        {"type": "response.done", "response": {"id": "r", "status": "completed"}},
    )


async def test_the_turn_after_the_token_expires_refreshes_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The login is pointed at the fake auth server for this test only.
    monkeypatch.setenv("TAU_HOME", str(tmp_path))
    real = get_oauth_provider("openai-codex")
    assert real is not None
    try:
        await _run(tmp_path)
    finally:
        register_oauth_provider(real)


async def _run(tmp_path: Path) -> None:
    auth = FakeOpenAIAuth()
    with auth.running():
        register_oauth_provider(OpenAICodexOAuth(auth_url=auth.url))
        first = auth._issue()
        store = CredentialStore(tmp_path / "auth.json")
        store.set_oauth(
            "openai-codex",
            OAuthCredentials(first["access_token"], first["refresh_token"], time.time() + 3600),
        )

        def work(call_id: str, params: Any, signal: Any, on_update: Any) -> str:
            # The tool runs long: the stored token is now 10 s from expiry.
            current = store.oauth("openai-codex")
            assert current is not None
            store.set_oauth("openai-codex", dataclasses.replace(current, expires=time.time() + 10))
            return "worked"

        call = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "work",
                "arguments": "{}"}  # fmt: skip
        text = {"type": "message", "id": "m_1", "role": "assistant",
                "content": [{"type": "output_text", "text": "done"}]}  # fmt: skip
        async with LocalServer(
            [Reply(200, SSE_HEADERS, [_answer(call)]), Reply(200, SSE_HEADERS, [_answer(text)])]
        ) as server:
            model = dataclasses.replace(
                get_model("openai-codex", "gpt-5.2-codex"), base_url=server.url
            )
            agent = Agent(model=model, tools=[AgentTool("work", "work", None, execute=work)])
            await agent.prompt("go")
    tokens = [r.headers["authorization"].removeprefix("Bearer ") for r in server.requests]
    assert len(tokens) == 2 and tokens[0] == first["access_token"]
    assert tokens[1] != first["access_token"] and auth.refreshes == 1
    renewed = json.loads((tmp_path / "auth.json").read_text())["openai-codex"]
    assert renewed["access"] == tokens[1] and renewed["refresh"] != first["refresh_token"]
