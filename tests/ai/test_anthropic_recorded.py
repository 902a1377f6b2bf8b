"""Every recorded real Anthropic stream, replayed to tau, against values read from the raw SSE.

The expected values come from a deliberately small independent reading of the recording
(split on blank lines, ``data:`` lines, ``json.loads``), not from tau's decoder or output.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import pytest

from tau.ai import Context, Model, UserMessage, stream
from tau.ai.core.types import ModelCost, TextContent, ThinkingContent, ToolCall
from tests.ai import replay
from tests.ai.servers import LocalServer
from tests.ai.stream_checks import check_grammar
from tests.conftest import RECORDED

CASSETTES = sorted((RECORDED / "test_anthropic").glob("*.yaml")) if RECORDED.is_dir() else []
STREAMS = list(replay.streamed(CASSETTES))

STOP = {"end_turn": "stop", "pause_turn": "stop", "max_tokens": "length", "tool_use": "toolUse"}
USAGE_KEYS = (
    "input_tokens",
    "output_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
)


@dataclass
class Expected:
    texts: list[str] = field(default_factory=list)
    thinking: list[tuple[str, str, bool]] = field(default_factory=list)
    tools: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)
    stop_reason: str = ""
    usage: dict[str, int] = field(default_factory=dict)
    model: str = ""


def read_recording(raw: str) -> Expected:
    """What the recorded stream says, by hand."""
    out = Expected()
    blocks: dict[int, dict[str, Any]] = {}
    order: list[dict[str, Any]] = []
    for record in raw.replace("\r\n", "\n").split("\n\n"):
        payload = "\n".join(
            line[len("data: ") :] for line in record.split("\n") if line.startswith("data: ")
        )
        if not payload:
            continue
        event = json.loads(payload)
        kind = event["type"]
        if kind == "message_start":
            out.model = event["message"]["model"]
            out.usage = {k: v for k, v in event["message"]["usage"].items() if isinstance(v, int)}
        elif kind == "content_block_start":
            block = dict(event["content_block"], parts=[], sig=[])
            blocks[event["index"]] = block
            order.append(block)
        elif kind == "content_block_delta":
            block, delta = blocks[event["index"]], event["delta"]
            piece = {
                "text_delta": "text",
                "thinking_delta": "thinking",
                "input_json_delta": "partial_json",
            }.get(delta["type"])
            if piece:
                block["parts"].append(delta[piece])
            if delta["type"] == "signature_delta":
                block["sig"].append(delta["signature"])
        elif kind == "message_delta":
            out.stop_reason = STOP[event["delta"]["stop_reason"]]
            usage = event.get("usage") or {}
            for key, value in usage.items():
                if isinstance(value, int):
                    out.usage[key] = value
            # The usage rule for iterations: the top level already counts the executor's own
            # "message" calls and leaves out the summarising "compaction" calls, so those are
            # added (all four counts); "advisor_message" calls are another model's, billed at
            # its price, and never added; with a "fallback_message" the top level is taken as
            # it is.
            iterations = usage.get("iterations") or []
            if not any(it["type"] == "fallback_message" for it in iterations):
                for iteration in iterations:
                    if iteration["type"] == "compaction":
                        for key in USAGE_KEYS:
                            out.usage[key] = out.usage.get(key, 0) + iteration.get(key, 0)
    for block in order:
        if block["type"] == "text":
            out.texts.append(block["text"] + "".join(block["parts"]))
        elif block["type"] == "thinking":
            signature = block["signature"] + "".join(block["sig"])
            out.thinking.append((block["thinking"] + "".join(block["parts"]), signature, False))
        elif block["type"] == "redacted_thinking":
            out.thinking.append(("[Reasoning redacted]", block["data"], True))
        elif block["type"] == "tool_use":
            args = "".join(block["parts"])
            out.tools.append((block["id"], block["name"], json.loads(args) if args else {}))
    return out


def test_the_recordings_are_there() -> None:
    if not RECORDED.is_dir():
        pytest.skip("recordings not present")
    assert len(STREAMS) >= 14


def model_for(recorded: replay.Recorded, base_url: str) -> Model:
    body = recorded.request_body if isinstance(recorded.request_body, dict) else {}
    return Model(
        id=body.get("model", "claude-sonnet-4-5"),
        name="recorded",
        api="anthropic-messages",
        provider="anthropic",
        base_url=base_url,
        reasoning=True,
        input=["text", "image"],
        cost=ModelCost(input=3, output=15, cache_read=0.3, cache_write=3.75),
        max_tokens=64_000,
    )


@pytest.mark.parametrize("transport", ["mock", "server"])
@pytest.mark.parametrize(("name", "recorded"), STREAMS, ids=[name for name, _ in STREAMS])
async def test_recorded_stream(name: str, recorded: replay.Recorded, transport: str) -> None:
    expected = read_recording(recorded.text)
    context = Context([UserMessage("replayed")], system_prompt="You are a test.")
    if transport == "mock":
        client = replay.mock_client([recorded])
        s = stream(
            model_for(recorded, "https://api.anthropic.com"), context, api_key="k", client=client
        )
        events = [event async for event in s]
        await client.aclose()
    else:
        async with LocalServer(replay.replies([recorded])) as server:
            s = stream(model_for(recorded, server.url), context, api_key="k")
            events = [event async for event in s]
        assert server.requests[0].path == "/v1/messages"
    message = await s.result()
    assert message.error_message is None
    check_grammar(events, message)

    assert [b.text for b in message.content if isinstance(b, TextContent)] == expected.texts
    assert [
        (b.thinking, b.thinking_signature, bool(b.redacted))
        for b in message.content
        if isinstance(b, ThinkingContent)
    ] == expected.thinking
    assert [(c.id, c.name, c.arguments) for c in message.content if isinstance(c, ToolCall)] == (
        expected.tools
    )
    assert message.stop_reason == expected.stop_reason
    usage = message.usage
    assert usage.input == expected.usage["input_tokens"]
    assert usage.output == expected.usage["output_tokens"]
    assert usage.cache_read == expected.usage.get("cache_read_input_tokens", 0)
    assert usage.cache_write == expected.usage.get("cache_creation_input_tokens", 0)
    assert usage.total_tokens == usage.input + usage.output + usage.cache_read + usage.cache_write
    assert usage.cost.output == pytest.approx(15 * usage.output / 1e6)
    assert usage.cost.input == pytest.approx(3 * usage.input / 1e6)


def test_recording_set_covers_the_interesting_shapes() -> None:
    if not STREAMS:
        pytest.skip("recordings not present")
    read = [read_recording(r.text) for _, r in STREAMS]
    assert any(e.thinking and not e.thinking[0][2] for e in read)  # signed thinking
    assert any(any(t[2] for t in e.thinking) for e in read)  # redacted thinking
    assert any(e.usage.get("cache_read_input_tokens") for e in read)
    assert {e.stop_reason for e in read} >= {"stop"}
    raw = "".join(r.text for _, r in STREAMS)
    for shape in ("server_tool_use", "web_search_tool_result", "citations_delta", "ping"):
        assert shape in raw


def test_iterations_rule_on_the_advisor_and_compaction_recordings() -> None:
    """The usage rule, spelled out on the two recordings that carry ``iterations``."""
    if not STREAMS:
        pytest.skip("recordings not present")
    read = {name.split("[")[0]: read_recording(r.text) for name, r in STREAMS}
    advisor = read["test_anthropic_advisor_tool_stream"].usage
    # Top level: input 2411 (1128 + 1283, the two "message" iterations) and output 145
    # (135 + 10); the advisor's 2543 input and 18 output tokens are Opus's, not added.
    prompt = (
        advisor["input_tokens"]
        + advisor["cache_read_input_tokens"]
        + advisor["cache_creation_input_tokens"]
    )
    assert (advisor["output_tokens"], prompt) == (145, 2411)
    compaction = read["test_anthropic_compaction_usage_with_cache_streaming"].usage
    # Top level 181 in / 8 out, plus the compaction call's 100 in / 83 out / 55096 cache read.
    assert (compaction["input_tokens"], compaction["output_tokens"]) == (281, 91)
    assert compaction["cache_read_input_tokens"] == 55096
