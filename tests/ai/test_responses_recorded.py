"""Every recorded OpenAI Responses stream (any server: OpenAI, DeepSeek, OpenRouter, Bedrock
Mantle) replayed through the ``openai-responses`` adapter, checked against values computed
here, independently, from the raw recording: the final output items and ``usage`` the server
reported, and the stream grammar."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest

from tau.ai import AssistantMessageEvent, Context, UserMessage, stream
from tau.ai.core.types import (
    AssistantMessage,
    Model,
    ModelCost,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
)
from tau.ai.lookup.catalog import get_model
from tau.ai.providers.openai_responses import openai as openai_responses
from tests.ai import replay
from tests.ai.responses_sdk import validate_with_sdk
from tests.ai.servers import LocalServer
from tests.ai.stream_checks import check_grammar
from tests.conftest import RECORDED

TIER_FACTOR = {"flex": 0.5, "priority": 2.0}


CASSETTES = sorted(RECORDED.rglob("*.yaml")) if RECORDED.is_dir() else []
# Every streamed POST to a Responses endpoint, whichever server answered it.
RECORDINGS = [
    (name, recorded)
    for name, recorded in replay.streamed(CASSETTES)
    if recorded.method == "POST" and recorded.uri.split("?")[0].endswith("/responses")
]


def test_every_responses_recording_is_found() -> None:
    if not RECORDED.is_dir():
        pytest.skip("recordings not present")
    # 32 POST /responses streams (the README's 33 counts one background-mode resume GET).
    assert len(RECORDINGS) == 32
    hosts = {recorded.uri.split("/")[2] for _, recorded in RECORDINGS}
    assert hosts == {
        "api.openai.com",
        "api.deepseek.com",
        "openrouter.ai",
        "bedrock-mantle.us-east-1.api.aws",
    }


def raw_events(body: str) -> list[dict[str, Any]]:
    """The JSON payload of every ``data:`` line (each recorded event is one line)."""
    out = []
    for line in body.splitlines():
        if line.startswith("data:"):
            data = line[5:].strip()
            if data != "[DONE]":
                out.append(json.loads(data))
    return out


def expected_blocks(events: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """The content tau must end with: one block per reasoning / message / function_call output
    item, in the order the items were added, with the values of the item as finally done."""
    order: list[int] = []
    done: dict[int, dict[str, Any]] = {}
    for event in events:
        kind = event["type"]
        if kind == "response.output_item.added":
            if event["item"]["type"] in ("reasoning", "message", "function_call"):
                order.append(event["output_index"])
        elif kind == "response.output_item.done":
            done[event["output_index"]] = event["item"]
    blocks: list[tuple[Any, ...]] = []
    for index in order:
        item = done[index]
        if item["type"] == "message":
            text = "".join(
                part.get("text") or part.get("refusal") or "" for part in item["content"]
            )
            blocks.append(("text", text, item["id"], item.get("phase")))
        elif item["type"] == "reasoning":
            summary = [part["text"] for part in item.get("summary") or []]
            raw = [part["text"] for part in item.get("content") or []]
            blocks.append(("thinking", "\n\n".join(summary or raw), item))
        else:
            blocks.append(
                (
                    "toolCall",
                    f"{item['call_id']}|{item['id']}",
                    item["name"],
                    json.loads(item["arguments"]),
                )
            )
    return blocks


def actual_blocks(message: AssistantMessage) -> list[tuple[Any, ...]]:
    blocks: list[tuple[Any, ...]] = []
    for block in message.content:
        if isinstance(block, TextContent):
            signature = json.loads(block.text_signature or "{}")
            blocks.append(("text", block.text, signature.get("id"), signature.get("phase")))
        elif isinstance(block, ThinkingContent):
            blocks.append(("thinking", block.thinking, json.loads(block.thinking_signature or "")))
        else:
            assert isinstance(block, ToolCall)
            blocks.append(("toolCall", block.id, block.name, block.arguments))
    return blocks


async def replay_stream(
    model: Model, recorded: replay.Recorded, transport: str
) -> tuple[list[AssistantMessageEvent], AssistantMessage]:
    """The recorded answer, served over 127.0.0.1 (in odd-sized chunks) or a mock transport."""
    context = Context([UserMessage("hi")])
    if transport == "mock":
        s = stream(model, context, api_key="k", client=replay.mock_client([recorded]))
        return [e async for e in s], await s.result()
    async with LocalServer(replay.replies([recorded])) as server:
        s = stream(replace(model, base_url=server.url + "/v1"), context, api_key="k")
        seen = [e async for e in s]
        return seen, await s.result()


def model_for(events: list[dict[str, Any]]) -> Model:
    base = get_model("openai", "gpt-5-mini")
    assert base is not None
    # Fixed prices, so that the expected cost below is plain arithmetic.
    base.cost = ModelCost(input=2.0, output=8.0, cache_read=0.5)
    return base


@pytest.mark.parametrize("transport", ["server", "mock"])
@pytest.mark.parametrize(("name", "recorded"), RECORDINGS, ids=[n for n, _ in RECORDINGS])
async def test_recorded_responses_stream(
    name: str, recorded: replay.Recorded, transport: str
) -> None:
    events = raw_events(recorded.text)
    terminal = next(e for e in events if e["type"] in ("response.completed", "response.incomplete"))
    response = terminal["response"]
    model = model_for(events)

    seen, message = await replay_stream(model, recorded, transport)

    check_grammar(seen, message)
    assert seen[-1].type == "done", message.error_message
    assert actual_blocks(message) == expected_blocks(events)

    # (check_grammar compares text and thinking deltas with the blocks; calls here.)
    for index, block in enumerate(message.content):
        if isinstance(block, ToolCall):
            deltas = "".join(
                e.delta for e in seen if e.type == "toolcall_delta" and e.content_index == index
            )
            assert json.loads(deltas) == block.arguments

    has_calls = any(
        e["item"]["type"] == "function_call"
        for e in events
        if e["type"] == "response.output_item.done"
    )
    status_stop = {"completed": "stop", "incomplete": "length"}[response["status"]]
    assert message.stop_reason == (
        "toolUse" if has_calls and status_stop == "stop" else status_stop
    )

    usage = response["usage"]
    cached = usage["input_tokens_details"]["cached_tokens"]
    assert message.usage.input == usage["input_tokens"] - cached
    assert message.usage.cache_read == cached
    assert message.usage.output == usage["output_tokens"]
    assert message.usage.total_tokens == usage["total_tokens"]
    assert message.usage.reasoning == usage["output_tokens_details"]["reasoning_tokens"]
    factor = TIER_FACTOR.get(response.get("service_tier") or "", 1.0)
    expected_total = (
        ((usage["input_tokens"] - cached) * 2.0 + cached * 0.5 + usage["output_tokens"] * 8.0)
        / 1e6
        * factor
    )
    assert message.usage.cost.total == pytest.approx(expected_total)

    # The turn replays to the same model: every reasoning item verbatim and right before the
    # item that followed it, and the next request is one the SDK's types accept.
    results = [ToolResultMessage(c.id, c.name, [TextContent("ok")]) for c in message.tool_calls]
    follow_up = Context([UserMessage("hi"), message, *results, UserMessage("and?")])
    payload = openai_responses.request_body(model, follow_up, {"reasoning_effort": "low"})
    validate_with_sdk(payload)
    # What must be replayed, from the raw recording: the kept output items in output order,
    # each reasoning item only when the next kept item is not another reasoning item (then
    # a server-side tool call stood between them) and something follows it at all.
    done = {
        e["output_index"]: e["item"] for e in events if e["type"] == "response.output_item.done"
    }
    kept = [
        done[i]
        for i in sorted(done)
        if done[i]["type"] in ("message", "function_call", "reasoning")
    ]
    replayable = [
        item
        for position, item in enumerate(kept)
        if item["type"] != "reasoning"
        or (position + 1 < len(kept) and kept[position + 1]["type"] != "reasoning")
    ]
    items = payload["input"][1 : 1 + len(replayable)]
    assert [i["type"] for i in items] == [i["type"] for i in replayable]
    for sent, item in zip(items, replayable, strict=True):
        if item["type"] == "reasoning":
            assert sent == item
        elif item["type"] == "function_call":
            assert (sent["call_id"], sent["id"]) == (item["call_id"], item["id"])
        else:
            assert sent["id"] == item["id"] and sent.get("phase") == item.get("phase")
