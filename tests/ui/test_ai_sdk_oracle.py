"""The AI SDK's own client is the oracle: every chunk tau streams validates against the
``ai`` package's ``uiMessageChunkSchema``, and the ``UIMessage`` its ``readUIMessageStream``
assembles equals, part by part, tau's transcript of the same run (``GET /api/chats/{id}``)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx2
import pydantic

from tau.agent import Agent, AgentTool, agent_tool
from tau.ai.providers.faux import FauxResponse, faux_model, text, thinking, tool_call
from tau.ui import MemoryChatStore, chat_app
from tests.ui.conftest import run_node, serving

KEEP = ("type", "text", "state", "toolCallId", "input", "output", "errorText", "approval")


def parts(message: dict[str, Any]) -> list[dict[str, Any]]:
    """A message's parts with what both sides define (no provider metadata, no part ids)."""
    out = []
    for part in message["parts"]:
        kept = {key: part[key] for key in KEEP if key in part}
        if part["type"].startswith("data-"):
            kept["id"], kept["data"] = part.get("id"), part["data"]
        out.append(kept)
    return out


def user(text_: str, id_: str = "u1") -> dict[str, Any]:
    return {"id": id_, "role": "user", "parts": [{"type": "text", "text": text_}]}


async def ask(
    cache: Path, url: str, chat_id: str, messages: list[dict[str, Any]], **extra: Any
) -> dict[str, Any]:
    body = {"id": chat_id, "messages": messages, "trigger": "submit-message"}
    answer = await run_node(
        cache, "ai_sdk_client.mjs", {"url": f"{url}/api/chat", "body": body, **extra}
    )
    assert answer["status"] == 200, answer
    assert answer["headers"]["x-vercel-ai-ui-message-stream"] == "v1"
    assert answer["headers"]["content-type"].startswith("text/event-stream")
    assert answer["invalid"] == [], answer["invalid"]
    return answer


async def transcript(url: str, chat_id: str) -> dict[str, Any]:
    async with httpx2.AsyncClient() as client:
        response = await client.get(f"{url}/api/chats/{chat_id}")
    assert response.status_code == 200, response.text
    data: dict[str, Any] = response.json()
    return data


async def same_as_transcript(url: str, chat_id: str, answer: dict[str, Any]) -> dict[str, Any]:
    chat = await transcript(url, chat_id)
    last = chat["messages"][-1]
    assert answer["message"]["id"] == last["id"]
    assert answer["message"]["role"] == "assistant"
    assert parts(answer["message"]) == parts(last)
    return chat


async def test_text_and_reasoning(node_oracle: Path) -> None:
    model = faux_model(
        [FauxResponse([thinking("The user greets me."), text("Hello there, friend!")])],
        reasoning=True,
    )
    app = chat_app(lambda: Agent(model=model))
    async with serving(app) as url:
        answer = await ask(node_oracle, url, "c1", [user("hi")])
        chat = await same_as_transcript(url, "c1", answer)
    kinds = [c["type"] for c in answer["chunks"]]
    assert kinds[0] == "start" and kinds[-1] == "finish" and answer["done"]
    assert "message-metadata" in kinds and "reasoning-delta" in kinds
    assert [p["type"] for p in parts(answer["message"])] == ["step-start", "reasoning", "text"]
    assert answer["message"]["parts"][2]["text"] == "Hello there, friend!"
    usage = answer["message"]["metadata"]["usage"]
    assert usage["turns"] == 1 and usage["inputTokens"] > 0
    assert chat["messages"][0]["parts"] == [{"type": "text", "text": "hi"}]


def tools() -> list[AgentTool]:
    @agent_tool
    def add(a: int, b: int) -> str:
        """Add two numbers."""
        return str(a + b)

    @agent_tool
    def explode(reason: str) -> str:
        """Fail."""
        raise RuntimeError(f"exploded: {reason}")

    return [add, explode]


async def test_parallel_tool_calls_and_a_tool_error(node_oracle: Path) -> None:
    model = faux_model(
        [
            FauxResponse(
                [
                    text("Working on it."),
                    tool_call("add", {"a": 2, "b": 3}, id="call_add"),
                    tool_call("explode", {"reason": "test"}, id="call_boom"),
                ]
            ),
            FauxResponse([text("2 + 3 = 5; the other failed.")]),
        ]
    )
    app = chat_app(lambda: Agent(model=model, tools=tools()))
    async with serving(app) as url:
        answer = await ask(node_oracle, url, "tools", [user("add and explode")])
        await same_as_transcript(url, "tools", answer)
    got = parts(answer["message"])
    assert [p["type"] for p in got] == [
        "step-start", "text", "tool-add", "tool-explode", "step-start", "text",
    ]
    assert got[2]["state"] == "output-available" and got[2]["output"] == "5"
    assert got[3]["state"] == "output-error" and "exploded: test" in got[3]["errorText"]


async def test_a_model_error(node_oracle: Path) -> None:
    model = faux_model([FauxResponse([text("Partial answ")], error="upstream exploded")])
    app = chat_app(lambda: Agent(model=model))
    async with serving(app) as url:
        answer = await ask(node_oracle, url, "err", [user("hi")])
        await same_as_transcript(url, "err", answer)
    assert answer["errors"] == ["upstream exploded"]
    assert answer["chunks"][-1] == {"type": "finish", "finishReason": "error"}
