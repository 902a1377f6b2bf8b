"""Every recorded Gemini / Vertex ``streamGenerateContent`` response, replayed through tau.

The expected values are computed here from the raw SSE text of each recording (split into
events and parsed with ``json``, no tau code involved) and compared with tau's events and
final message.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tau.ai import Context, UserMessage, stream
from tau.ai.core.types import Model, TextContent, ThinkingContent, ToolCall
from tests.ai import replay
from tests.ai.servers import LocalServer
from tests.ai.stream_checks import check_grammar
from tests.conftest import RECORDED


def _recordings() -> list[tuple[str, replay.Recorded]]:
    if not RECORDED.is_dir():
        return []
    found = []
    for path in sorted(RECORDED.rglob("*.yaml")):
        if ":streamGenerateContent" not in path.read_text():
            continue
        for i, recorded in enumerate(replay.load(path)):
            if ":streamGenerateContent" in recorded.uri:
                found.append((f"{path.relative_to(RECORDED)}#{i}", recorded))
    return found


RECORDINGS = _recordings()


def _expected(body: str) -> dict[str, Any]:
    """What the raw SSE says: block runs, calls, finish reason, last usage."""
    chunks = []
    for event in body.replace("\r\n", "\n").split("\n\n"):
        data = [line[5:].strip() for line in event.split("\n") if line.startswith("data:")]
        if data:
            chunks.append(json.loads("\n".join(data)))
    blocks: list[list[Any]] = []  # [kind, text, signature]
    calls = []
    finish = None
    usage: dict[str, int] = {}
    for chunk in chunks:
        for candidate in chunk.get("candidates", [])[:1]:
            for part in candidate.get("content", {}).get("parts", []):
                sig = part.get("thoughtSignature")
                if "functionCall" in part:
                    call = part["functionCall"]
                    calls.append((call["name"], call.get("args", {}), sig))
                    blocks.append(["call", None, sig])
                elif "text" in part:
                    kind = "thinking" if part.get("thought") is True else "text"
                    if blocks and blocks[-1][0] == kind:
                        blocks[-1][1] += part["text"]
                        blocks[-1][2] = sig or blocks[-1][2]
                    elif part["text"]:
                        blocks.append([kind, part["text"], sig])
            finish = candidate.get("finishReason", finish)
        usage = chunk.get("usageMetadata", usage)
    return {"blocks": blocks, "calls": calls, "finish": finish, "usage": usage}


def _model(recording: str, base_url: str) -> Model:
    vertex = "vertex" in recording
    return Model(
        id="gemini-test",
        name="Gemini",
        api="google-vertex" if vertex else "google-generative-ai",
        provider="google-vertex" if vertex else "google",
        base_url=base_url,
        reasoning=True,
    )


@pytest.mark.skipif(not RECORDINGS, reason="recordings not present")
@pytest.mark.parametrize(("name", "recorded"), RECORDINGS, ids=[n for n, _ in RECORDINGS])
async def test_recorded_stream_replays(name: str, recorded: replay.Recorded) -> None:
    expected = _expected(recorded.text)
    # Odd-sized chunks split events, lines and UTF-8 sequences across reads.
    async with LocalServer(replay.replies([recorded])) as server:
        model = _model(name, server.url + "/v1beta")
        options: dict[str, Any] = {"api_key": "test-key"}
        if model.api == "google-vertex":  # where the project is: Vertex AI's options only
            options.update(project="p", location="global")
        s = stream(model, Context([UserMessage("hi")]), **options)
        events = [e async for e in s]
        message = await s.result()
        check_grammar(events, message)
        request = server.requests[0]

    assert ":streamGenerateContent?alt=sse" in request.path
    assert request.headers["x-goog-api-key"] == "test-key"
    assert events[0].type == "start"
    assert events[-1].type == "done", message.error_message

    # Blocks: kind, text and retained signature, in order.
    got = []
    for block in message.content:
        if isinstance(block, TextContent):
            got.append(["text", block.text, block.text_signature])
        elif isinstance(block, ThinkingContent):
            got.append(["thinking", block.thinking, block.thinking_signature])
        else:
            got.append(["call", None, block.thought_signature])
    assert got == expected["blocks"]

    calls = [
        (b.name, b.arguments, b.thought_signature)
        for b in message.content
        if isinstance(b, ToolCall)
    ]
    assert calls == expected["calls"]
    assert len({b.id for b in message.tool_calls}) == len(calls)

    # Each call is start, exactly one delta with the whole JSON, end.
    for index_, block in enumerate(message.content):
        if isinstance(block, ToolCall):
            kinds = [e.type for e in events if getattr(e, "content_index", None) == index_]
            assert kinds == ["toolcall_start", "toolcall_delta", "toolcall_end"]
            delta = next(
                e for e in events if e.type == "toolcall_delta" and e.content_index == index_
            )
            assert json.loads(delta.delta) == block.arguments

    # Streamed deltas add up to the final text of each block.
    for index_, block in enumerate(message.content):
        deltas = "".join(
            e.delta
            for e in events
            if e.type in ("text_delta", "thinking_delta") and e.content_index == index_
        )
        if isinstance(block, TextContent):
            assert deltas == block.text
        elif isinstance(block, ThinkingContent):
            assert deltas == block.thinking

    finish = {"STOP": "stop", "MAX_TOKENS": "length"}[expected["finish"]]
    assert message.stop_reason == ("toolUse" if expected["calls"] else finish)

    meta = expected["usage"]
    cached = meta.get("cachedContentTokenCount", 0)
    thoughts = meta.get("thoughtsTokenCount")
    assert message.usage.input == meta["promptTokenCount"] - cached + meta.get(
        "toolUsePromptTokenCount", 0
    )
    assert message.usage.output == meta.get("candidatesTokenCount", 0) + (thoughts or 0)
    assert message.usage.cache_read == cached
    assert message.usage.reasoning == thoughts
    assert message.usage.total_tokens == meta["totalTokenCount"]
    assert (
        message.usage.input + message.usage.output + message.usage.cache_read
        == meta["totalTokenCount"]
    )


def test_every_gemini_recording_is_covered() -> None:
    if not RECORDED.is_dir():
        pytest.skip("recordings not present")
    # 13 under test_google (one of them Vertex) and one in test_stream_close.
    assert len(RECORDINGS) == 14
    assert any("vertex" in n for n, _ in RECORDINGS)
