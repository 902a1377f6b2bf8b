"""Every recorded Mistral stream replayed through the ``mistral-conversations`` adapter, checked
against values computed here, independently, from the raw chunks."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest

from tau.ai import Context, UserMessage, stream
from tau.ai.core.types import ModelCost, TextContent, ThinkingContent, ToolCall
from tau.ai.lookup.catalog import get_model
from tests.ai import replay
from tests.ai.servers import LocalServer
from tests.ai.stream_checks import check_grammar
from tests.conftest import RECORDED

STOP = {"stop": "stop", "length": "length", "model_length": "length", "tool_calls": "toolUse"}


CASSETTES = sorted((RECORDED / "test_mistral").glob("*.yaml")) if RECORDED.is_dir() else []
RECORDINGS = [
    (name, recorded)
    for name, recorded in replay.streamed(CASSETTES)
    if recorded.uri.startswith("https://api.mistral.ai/")
]


def test_mistral_recordings_are_found() -> None:
    if not RECORDED.is_dir():
        pytest.skip("recordings not present")
    assert len(RECORDINGS) == 1


def raw_chunks(body: str) -> list[dict[str, Any]]:
    return [
        json.loads(line[5:])
        for line in body.splitlines()
        if line.startswith("data:") and line[5:].strip() != "[DONE]"
    ]


def expected(
    chunks: list[dict[str, Any]],
) -> tuple[list[tuple[str, str]], list[tuple[str, str, Any]], str, dict[str, int]]:
    """(text/thinking runs in order, tool calls, finish reason, usage) from the raw chunks."""
    runs: list[list[str]] = []
    calls: dict[str, list[Any]] = {}
    finish = ""
    usage: dict[str, int] = {}
    for data in chunks:
        usage = data.get("usage") or usage
        choice = data["choices"][0]
        finish = choice.get("finish_reason") or finish
        content = choice["delta"].get("content")
        pieces: list[tuple[str, str]] = []
        if isinstance(content, str):
            pieces.append(("text", content))
        elif isinstance(content, list):
            for part in content:
                if part["type"] == "text":
                    pieces.append(("text", part["text"]))
                elif part["type"] == "thinking":
                    pieces.append(("thinking", "".join(p["text"] for p in part["thinking"])))
        for kind, text in pieces:
            if not text:
                continue
            if runs and runs[-1][0] == kind:
                runs[-1][1] += text
            else:
                runs.append([kind, text])
        for call in choice["delta"].get("tool_calls") or []:
            entry = calls.setdefault(call["id"], [call["function"]["name"], ""])
            arguments = call["function"]["arguments"]
            entry[1] += arguments if isinstance(arguments, str) else json.dumps(arguments)
    tool_calls = [(cid, name, json.loads(args)) for cid, (name, args) in calls.items()]
    return [(k, t) for k, t in runs], tool_calls, finish, usage


@pytest.mark.parametrize(("name", "recorded"), RECORDINGS, ids=[n for n, _ in RECORDINGS])
async def test_recorded_mistral_stream(name: str, recorded: replay.Recorded) -> None:
    model = get_model("mistral", "magistral-medium-latest")
    assert model is not None
    model.cost = ModelCost(input=2.0, output=5.0)
    runs, calls, finish, usage = expected(raw_chunks(recorded.text))
    assert runs and finish  # the recording has content and an end

    async with LocalServer(replay.replies([recorded])) as server:
        s = stream(replace(model, base_url=server.url), Context([UserMessage("hi")]), api_key="k")
        seen = [e async for e in s]
        message = await s.result()
    assert server.requests[0].path == "/v1/chat/completions"

    check_grammar(seen, message)
    assert seen[-1].type == "done", message.error_message
    got_runs = [
        ("text", b.text) if isinstance(b, TextContent) else ("thinking", b.thinking)
        for b in message.content
        if isinstance(b, TextContent | ThinkingContent)
    ]
    assert got_runs == runs
    assert [
        (c.id, c.name, c.arguments) for c in message.content if isinstance(c, ToolCall)
    ] == calls
    assert message.stop_reason == STOP[finish]
    assert message.usage.input == usage["prompt_tokens"]
    assert message.usage.output == usage["completion_tokens"]
    assert message.usage.total_tokens == usage["total_tokens"]
    assert message.usage.cost.total == pytest.approx(
        (usage["prompt_tokens"] * 2.0 + usage["completion_tokens"] * 5.0) / 1e6
    )
