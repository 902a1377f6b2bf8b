"""The Responses stream mapping, event by event, on hand-written streams."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tau.ai.core.types import (
    AssistantMessage,
    Model,
    ModelCost,
    TextContent,
    ThinkingContent,
    ToolCall,
)
from tau.ai.providers.openai_responses.decoder import OpenAIResponsesDecoder
from tau.ai.streaming.builder import MessageBuilder
from tau.ai.streaming.launch import launch_stream

MODEL = Model(
    id="gpt-5-mini",
    name="GPT-5 Mini",
    api="openai-responses",
    provider="openai",
    base_url="https://api.openai.com/v1",
    reasoning=True,
    cost=ModelCost(input=1.0, output=10.0, cache_read=0.1),
)


async def run(
    events: list[dict[str, Any] | str], *, service_tier: str | None = None
) -> tuple[list[Any], AssistantMessage]:
    """Feed events (dicts, or raw data strings) through the processor; collect the stream."""

    async def adapter(builder: MessageBuilder) -> None:
        processor = OpenAIResponsesDecoder(builder, service_tier=service_tier)
        for event in events:
            if isinstance(event, str):
                processor.feed(event)
            else:
                processor.apply(event)
        processor.finish()

    stream = launch_stream(MODEL, {}, adapter)
    seen = [event async for event in stream]
    return seen, await stream.result()


def completed(status: str = "completed", **extra: Any) -> dict[str, Any]:
    usage = {
        "input_tokens": 100,
        "input_tokens_details": {"cached_tokens": 40},
        "output_tokens": 30,
        "output_tokens_details": {"reasoning_tokens": 12},
        "total_tokens": 130,
    }
    return {"type": "response.completed", "response": {"status": status, "usage": usage, **extra}}


def fc_added(
    index: int, call_id: str, item_id: str, name: str, arguments: str = ""
) -> dict[str, Any]:
    return {
        "type": "response.output_item.added",
        "output_index": index,
        "item": {
            "type": "function_call",
            "id": item_id,
            "call_id": call_id,
            "name": name,
            "arguments": arguments,
        },
    }


def fc_done(
    index: int, call_id: str, item_id: str, name: str, arguments: str | None
) -> dict[str, Any]:
    item: dict[str, Any] = {
        "type": "function_call",
        "id": item_id,
        "call_id": call_id,
        "name": name,
    }
    if arguments is not None:
        item["arguments"] = arguments
    return {"type": "response.output_item.done", "output_index": index, "item": item}


def kinds(events: list[Any]) -> list[str]:
    return [e.type for e in events]


async def test_text_message_with_phase_and_usage() -> None:
    events, message = await run(
        [
            {"type": "response.created", "response": {"status": "in_progress"}},
            {
                "type": "response.output_item.added",
                "output_index": 0,
                "item": {"type": "message", "id": "msg_1", "phase": "final_answer", "content": []},
            },
            {
                "type": "response.content_part.added",
                "output_index": 0,
                "part": {"type": "output_text", "text": ""},
            },
            {"type": "response.output_text.delta", "output_index": 0, "delta": "Hel"},
            {"type": "response.output_text.delta", "output_index": 0, "delta": "lo"},
            {
                "type": "response.output_item.done",
                "output_index": 0,
                "item": {
                    "type": "message",
                    "id": "msg_1",
                    "phase": "final_answer",
                    "content": [{"type": "output_text", "text": "Hello"}],
                },
            },
            completed(),
        ]
    )
    assert kinds(events) == ["start", "text_start", "text_delta", "text_delta", "text_end", "done"]
    block = message.content[0]
    assert isinstance(block, TextContent)
    assert block.text == "Hello"
    assert json.loads(block.text_signature or "") == {
        "v": 1,
        "id": "msg_1",
        "phase": "final_answer",
    }
    usage = message.usage
    assert (usage.input, usage.cache_read, usage.output, usage.total_tokens) == (60, 40, 30, 130)
    assert usage.reasoning == 12
    assert usage.cost.input == pytest.approx(60e-6)
    assert usage.cost.cache_read == pytest.approx(40 * 0.1e-6)
    assert usage.cost.output == pytest.approx(300e-6)
    assert message.stop_reason == "stop"


async def test_reasoning_summary_parts_and_encrypted_item_kept_whole() -> None:
    done_item = {
        "type": "reasoning",
        "id": "rs_1",
        "summary": [
            {"type": "summary_text", "text": "First."},
            {"type": "summary_text", "text": "Second."},
        ],
        "encrypted_content": "gAAAA-secret",
    }
    events, message = await run(
        [
            {
                "type": "response.output_item.added",
                "output_index": 0,
                "item": {"type": "reasoning", "id": "rs_1", "summary": []},
            },
            {
                "type": "response.reasoning_summary_part.added",
                "output_index": 0,
                "summary_index": 0,
            },
            {"type": "response.reasoning_summary_text.delta", "output_index": 0, "delta": "First."},
            {"type": "response.reasoning_summary_part.done", "output_index": 0, "summary_index": 0},
            {
                "type": "response.reasoning_summary_part.added",
                "output_index": 0,
                "summary_index": 1,
            },
            {
                "type": "response.reasoning_summary_text.delta",
                "output_index": 0,
                "delta": "Second.",
            },
            {"type": "response.reasoning_summary_part.done", "output_index": 0, "summary_index": 1},
            {"type": "response.output_item.done", "output_index": 0, "item": done_item},
            completed(),
        ]
    )
    deltas = [e.delta for e in events if e.type == "thinking_delta"]
    block = message.content[0]
    assert isinstance(block, ThinkingContent)
    # The deltas add up to exactly the final text (no trailing separator, unlike pi).
    assert "".join(deltas) == block.thinking == "First.\n\nSecond."
    assert json.loads(block.thinking_signature or "") == done_item
    end = next(e for e in events if e.type == "thinking_end")
    assert end.content == "First.\n\nSecond."


async def test_function_call_arguments_from_deltas_finalized_in_place() -> None:
    events, message = await run(
        [
            fc_added(0, "call_1", "fc_1", "get_weather"),
            {
                "type": "response.function_call_arguments.delta",
                "output_index": 0,
                "delta": '{"city"',
            },
            {
                "type": "response.function_call_arguments.delta",
                "output_index": 0,
                "delta": ':"Paris"}',
            },
            {
                "type": "response.function_call_arguments.done",
                "output_index": 0,
                "arguments": '{"city":"Paris"}',
            },
            # A late delta after .done must not corrupt the final arguments.
            {"type": "response.function_call_arguments.delta", "output_index": 0, "delta": "}}"},
            fc_done(0, "call_1", "fc_1", "get_weather", '{"city":"Paris"}'),
            completed(),
        ]
    )
    call = message.content[0]
    assert isinstance(call, ToolCall)
    assert call.id == "call_1|fc_1"
    assert call.arguments == {"city": "Paris"}
    assert call.arguments_text == ""  # no partial state left on the final block
    end = next(e for e in events if e.type == "toolcall_end")
    assert end.tool_call is call
    deltas = [e.delta for e in events if e.type == "toolcall_delta"]
    assert "".join(deltas) == '{"city":"Paris"}'
    assert message.stop_reason == "toolUse"


async def test_function_call_arguments_only_in_done_events() -> None:
    # LM Studio + Qwen3 send .done instead of deltas; others put them only on the item.
    _, message = await run(
        [
            fc_added(0, "call_1", "fc_1", "a"),
            {
                "type": "response.function_call_arguments.done",
                "output_index": 0,
                "arguments": '{"x":1}',
            },
            fc_done(0, "call_1", "fc_1", "a", '{"x":1}'),
            fc_added(1, "call_2", "fc_2", "b"),
            fc_done(1, "call_2", "fc_2", "b", '{"y":[1,2]}'),
            fc_added(2, "call_3", "fc_3", "c", arguments='{"z":true}'),
            fc_done(2, "call_3", "fc_3", "c", None),
            completed(),
        ]
    )
    assert [c.arguments for c in message.tool_calls] == [{"x": 1}, {"y": [1, 2]}, {"z": True}]


async def test_done_arguments_that_disagree_with_deltas_win() -> None:
    events, message = await run(
        [
            fc_added(0, "call_1", "fc_1", "a"),
            {"type": "response.function_call_arguments.delta", "output_index": 0, "delta": '{"x":'},
            {
                "type": "response.function_call_arguments.done",
                "output_index": 0,
                "arguments": '{"x":2}',
            },
            fc_done(0, "call_1", "fc_1", "a", '{"x":2}'),
            completed(),
        ]
    )
    assert message.tool_calls[0].arguments == {"x": 2}
    assert "".join(e.delta for e in events if e.type == "toolcall_delta") == '{"x":2}'


async def test_interleaved_items_are_tracked_by_output_index() -> None:
    # OpenRouter keeps the reasoning item open while the message streams.
    _, message = await run(
        [
            {
                "type": "response.output_item.added",
                "output_index": 0,
                "item": {"type": "reasoning", "id": "rs"},
            },
            {
                "type": "response.content_part.added",
                "output_index": 0,
                "part": {"type": "reasoning_text"},
            },
            {"type": "response.reasoning_text.delta", "output_index": 0, "delta": "think"},
            {
                "type": "response.output_item.added",
                "output_index": 1,
                "item": {"type": "message", "id": "m"},
            },
            {"type": "response.output_text.delta", "output_index": 1, "delta": "4"},
            {"type": "response.reasoning_text.delta", "output_index": 0, "delta": "ing"},
            {
                "type": "response.output_item.done",
                "output_index": 1,
                "item": {
                    "type": "message",
                    "id": "m",
                    "content": [{"type": "output_text", "text": "4"}],
                },
            },
            {
                "type": "response.output_item.done",
                "output_index": 0,
                "item": {
                    "type": "reasoning",
                    "id": "rs",
                    "content": [{"type": "reasoning_text", "text": "thinking"}],
                },
            },
            completed(),
        ]
    )
    thinking, text = message.content
    assert isinstance(thinking, ThinkingContent) and thinking.thinking == "thinking"
    assert isinstance(text, TextContent) and text.text == "4"


async def test_refusal_is_text() -> None:
    _, message = await run(
        [
            {
                "type": "response.output_item.added",
                "output_index": 0,
                "item": {"type": "message", "id": "m"},
            },
            {"type": "response.content_part.added", "output_index": 0, "part": {"type": "refusal"}},
            {"type": "response.refusal.delta", "output_index": 0, "delta": "I can't"},
            {
                "type": "response.output_item.done",
                "output_index": 0,
                "item": {
                    "type": "message",
                    "id": "m",
                    "content": [{"type": "refusal", "refusal": "I can't"}],
                },
            },
            completed(),
        ]
    )
    assert message.text == "I can't"


@pytest.mark.parametrize(
    ("status", "details", "stop"),
    [
        ("completed", None, "stop"),
        ("incomplete", {"reason": "max_output_tokens"}, "length"),
        ("in_progress", None, "stop"),
        ("queued", None, "stop"),
        (None, None, "stop"),
    ],
)
async def test_status_mapping(status: str | None, details: Any, stop: str) -> None:
    event = completed(status or "completed", incomplete_details=details)
    if status is None:
        del event["response"]["status"]
    _, message = await run([event])
    assert message.stop_reason == stop


async def test_response_incomplete_event_is_length() -> None:
    event = completed("incomplete", incomplete_details={"reason": "max_output_tokens"})
    event["type"] = "response.incomplete"
    _, message = await run([event])
    assert message.stop_reason == "length"
    assert message.usage.output == 30


async def test_content_filter_is_an_error() -> None:
    event = completed("incomplete", incomplete_details={"reason": "content_filter"})
    _, message = await run([event])
    assert message.stop_reason == "error"
    assert message.error_message == "incomplete: content_filter"


async def test_failed_and_error_events() -> None:
    failed = {
        "type": "response.failed",
        "response": {"status": "failed", "error": {"code": "server_error", "message": "boom"}},
    }
    _, message = await run([failed])
    assert (message.stop_reason, message.error_message) == ("error", "server_error: boom")

    failed_no_details = {"type": "response.failed", "response": {"status": "failed"}}
    _, message = await run([failed_no_details])
    assert message.error_message == "Unknown error (no error details in response)"

    error = {"type": "error", "code": "rate_limit_exceeded", "message": "slow down", "param": None}
    _, message = await run([error])
    assert message.error_message == "Error Code rate_limit_exceeded: slow down"


async def test_cancelled_status_is_an_error() -> None:
    _, message = await run([completed("cancelled")])
    assert message.stop_reason == "error"


@pytest.mark.parametrize(("tier", "factor"), [("flex", 0.5), ("priority", 2.0), ("default", 1.0)])
async def test_service_tier_pricing(tier: str, factor: float) -> None:
    _, message = await run([completed(service_tier=tier)])
    cost = message.usage.cost
    assert cost.output == pytest.approx(300e-6 * factor)
    assert cost.total == pytest.approx((60 + 4 + 300) * 1e-6 * factor)


async def test_requested_tier_applies_when_response_names_none() -> None:
    _, message = await run([completed()], service_tier="flex")
    assert message.usage.cost.output == pytest.approx(150e-6)


async def test_truncated_stream_is_an_error_keeping_partial_text() -> None:
    events, message = await run(
        [
            {
                "type": "response.output_item.added",
                "output_index": 0,
                "item": {"type": "message", "id": "m"},
            },
            {"type": "response.output_text.delta", "output_index": 0, "delta": "partial"},
        ]
    )
    assert events[-1].type == "error"
    assert message.stop_reason == "error"
    assert message.error_message == "Responses stream ended before response.completed"
    assert message.text == "partial"


async def test_malformed_json_event_is_an_error() -> None:
    _, message = await run(['{"type": "response.output_text.delta", "delta": '])
    assert message.stop_reason == "error"
    assert (message.error_message or "").startswith("Malformed JSON in Responses stream event")


async def test_unknown_events_and_done_marker_are_ignored() -> None:
    events, message = await run(
        [
            {"type": "response.web_search_call.searching", "output_index": 0},
            {
                "type": "response.output_item.added",
                "output_index": 0,
                "item": {"type": "web_search_call", "id": "ws"},
            },
            {
                "type": "response.output_item.done",
                "output_index": 0,
                "item": {"type": "web_search_call", "id": "ws"},
            },
            {"type": "response.something_new", "payload": 1},
            completed(),
            "[DONE]",
        ]
    )
    assert kinds(events) == ["start", "done"]
    assert message.content == []


async def test_delta_before_item_added_opens_a_block() -> None:
    _, message = await run(
        [
            {
                "type": "response.output_text.delta",
                "output_index": 3,
                "item_id": "m",
                "delta": "hi",
            },
            completed(),
        ]
    )
    assert message.text == "hi"


async def test_events_after_completion_are_ignored() -> None:
    _, message = await run(
        [completed(), {"type": "response.output_text.delta", "output_index": 0, "delta": "late"}]
    )
    assert message.content == []


async def test_done_item_text_beyond_the_deltas_is_streamed_as_a_last_delta() -> None:
    # Found by the fuzz test: two empty summary parts and no deltas joined to "\n\n", which
    # replaced the (empty) streamed thinking without a delta, so deltas no longer added up.
    events, message = await run(
        [
            {
                "type": "response.output_item.done",
                "output_index": 0,
                "item": {"type": "reasoning", "id": "rs", "summary": [{"text": ""}, {"text": ""}]},
            },
            {"type": "response.output_text.delta", "output_index": 1, "delta": "Hel"},
            {
                "type": "response.output_item.done",
                "output_index": 1,
                "item": {
                    "type": "message",
                    "id": "msg",
                    "content": [{"type": "output_text", "text": "Hello"}],
                },
            },
            completed(),
        ]
    )
    deltas = [(e.type, e.delta) for e in events if e.type.endswith("_delta")]
    assert deltas == [("thinking_delta", "\n\n"), ("text_delta", "Hel"), ("text_delta", "lo")]
    thinking, text = message.content
    assert isinstance(thinking, ThinkingContent) and thinking.thinking == "\n\n"
    assert isinstance(text, TextContent) and text.text == "Hello"
    ends = [e.content for e in events if e.type.endswith("_end")]
    assert ends == ["\n\n", "Hello"]


async def test_done_item_text_contradicting_the_deltas_keeps_what_was_streamed() -> None:
    events, message = await run(
        [
            {"type": "response.output_text.delta", "output_index": 0, "delta": "shown"},
            {
                "type": "response.output_item.done",
                "output_index": 0,
                "item": {
                    "type": "message",
                    "id": "msg",
                    "content": [{"type": "output_text", "text": "other"}],
                },
            },
            completed(),
        ]
    )
    assert [e.delta for e in events if e.type == "text_delta"] == ["shown"]
    assert message.text == "shown"
    assert [e.content for e in events if e.type == "text_end"] == ["shown"]


async def test_cached_tokens_are_capped_at_the_input() -> None:
    usage = {
        "input_tokens": 7,
        "input_tokens_details": {"cached_tokens": 161},
        "output_tokens": 8,
        "total_tokens": 15,
    }
    _, message = await run(
        [{"type": "response.completed", "response": {"status": "completed", "usage": usage}}]
    )
    u = message.usage
    assert (u.input, u.cache_read, u.output, u.total_tokens) == (0, 7, 8, 15)
    assert u.input + u.cache_read + u.output == u.total_tokens
