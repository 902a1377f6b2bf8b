"""Structured output decoded from each provider's wire format, served from 127.0.0.1: the
answer is split into many deltas as providers send it, the adapter decodes it, and the
structured layer validates partials and the final object. Every stream follows the
provider's documented (and recorded) event shapes."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pydantic
import pytest

from tau.ai import Model, StructuredOutputError, stream_structured
from tau.ai.structured import OUTPUT_TOOL_NAME
from tests import factories
from tests.ai.servers import SSE_HEADERS, LocalServer, Reply
from tests.factories import sse


class Stop(pydantic.BaseModel):
    name: str
    nights: int


class Trip(pydantic.BaseModel):
    title: str
    stops: list[Stop]


TRIP = {
    "title": 'Rhône "valley" – été',
    "stops": [{"name": "Lyon", "nights": 2}, {"name": "Avignon", "nights": 3}],
}
TEXT = json.dumps(TRIP, ensure_ascii=False)


def pieces(text: str, size: int = 5) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


async def run_structured(
    model: Model, body: bytes, mode: Any, **options: Any
) -> tuple[list[Any], Any, list[dict[str, Any]]]:
    """Serve ``body`` to one structured call; the partials, the result and the request
    bodies."""
    async with LocalServer([Reply(200, SSE_HEADERS, [body])]) as server:
        model = factories.model(model.api, model.provider, model.id, server.url)
        s = stream_structured(model, "Plan a trip", Trip, mode=mode, api_key="k", **options)
        partials = [p async for p in s]
        result = await s.result()
        sent = [json.loads(r.body) for r in server.requests]
    return partials, result, sent


def check_partials(partials: list[Any], output: Any) -> None:
    assert output == Trip.model_validate(TRIP)
    assert len(partials) > 3
    assert partials[-1] == output
    assert all(a != b for a, b in itertools.pairwise(partials))
    titles = [p.title for p in partials if p.title]
    assert all(TRIP["title"].startswith(t) for t in titles)


# --------------------------------------------------------------------------- Anthropic


def anthropic_events(blocks: list[dict[str, Any]], stop_reason: str = "end_turn") -> bytes:
    events: list[Any] = [
        {
            "type": "message_start",
            "message": {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "content": [],
                "model": "claude-sonnet-4-5",
                "stop_reason": None,
                "usage": {"input_tokens": 40, "output_tokens": 1},
            },
        }
    ]
    for index, (start, deltas) in enumerate((b["start"], b["deltas"]) for b in blocks):
        events.append({"type": "content_block_start", "index": index, "content_block": start})
        events.extend({"type": "content_block_delta", "index": index, "delta": d} for d in deltas)
        events.append({"type": "content_block_stop", "index": index})
    events.append(
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason, "stop_sequence": None},
            "usage": {"output_tokens": 60},
        }
    )
    events.append({"type": "message_stop"})
    return sse(*events)


CLAUDE = factories.model("anthropic-messages", "anthropic", "claude-sonnet-4-5")


async def test_anthropic_native_text_becomes_the_object() -> None:
    body = anthropic_events(
        [
            {
                "start": {"type": "text", "text": ""},
                "deltas": [{"type": "text_delta", "text": p} for p in pieces(TEXT)],
            }
        ]
    )
    partials, result, sent = await run_structured(CLAUDE, body, "auto")
    check_partials(partials, result.output)
    assert sent[0]["output_config"]["format"]["type"] == "json_schema"


async def test_anthropic_tool_mode_streams_the_output_calls_arguments() -> None:
    body = anthropic_events(
        [
            {
                "start": {
                    "type": "tool_use",
                    "id": "toolu_1",
                    "name": OUTPUT_TOOL_NAME,
                    "input": {},
                },
                "deltas": [{"type": "input_json_delta", "partial_json": p} for p in pieces(TEXT)],
            }
        ],
        stop_reason="tool_use",
    )
    partials, result, sent = await run_structured(CLAUDE, body, "tool")
    check_partials(partials, result.output)
    assert sent[0]["tool_choice"] == {"type": "tool", "name": OUTPUT_TOOL_NAME}


async def test_anthropic_refusal_is_a_refusal_error() -> None:
    body = anthropic_events(
        [
            {
                "start": {"type": "text", "text": ""},
                "deltas": [{"type": "text_delta", "text": "I can't help with that."}],
            }
        ],
        stop_reason="refusal",
    )
    with pytest.raises(StructuredOutputError) as info:
        await run_structured(CLAUDE, body, "native")
    assert info.value.reason == "refusal" and len(info.value.attempts) == 1


async def test_anthropic_length_stop_inside_the_object_is_a_length_error() -> None:
    body = anthropic_events(
        [
            {
                "start": {"type": "text", "text": ""},
                "deltas": [{"type": "text_delta", "text": p} for p in pieces(TEXT[:40])],
            }
        ],
        stop_reason="max_tokens",
    )
    with pytest.raises(StructuredOutputError) as info:
        await run_structured(CLAUDE, body, "native")
    assert info.value.reason == "length" and info.value.raw_text == TEXT[:40]


# --------------------------------------------------------------------------- OpenAI chat


def chat_chunk(
    delta: dict[str, Any], finish: str | None = None, model: str = "gpt-4.1"
) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def chat_events(deltas: list[dict[str, Any]], finish: str = "stop") -> bytes:
    usage = {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "gpt-4.1",
        "choices": [],
        "usage": {"prompt_tokens": 30, "completion_tokens": 50, "total_tokens": 80},
    }
    return sse(
        chat_chunk({"role": "assistant", "content": ""}),
        *(chat_chunk(d) for d in deltas),
        chat_chunk({}, finish),
        usage,
        "[DONE]",
    )


GPT = factories.model("openai-completions", "openai", "gpt-4.1")


async def test_chat_completions_native_content_becomes_the_object() -> None:
    body = chat_events([{"content": p} for p in pieces(TEXT, 3)])
    partials, result, sent = await run_structured(GPT, body, "native")
    check_partials(partials, result.output)
    assert sent[0]["response_format"]["json_schema"]["strict"] is True
    assert result.message.usage.output == 50


async def test_chat_completions_tool_mode_streams_the_call() -> None:
    first = {
        "tool_calls": [
            {
                "index": 0,
                "id": "call_1",
                "type": "function",
                "function": {"name": OUTPUT_TOOL_NAME, "arguments": ""},
            }
        ]
    }
    rest = [{"tool_calls": [{"index": 0, "function": {"arguments": p}}]} for p in pieces(TEXT)]
    body = chat_events([first, *rest], finish="tool_calls")
    partials, result, _ = await run_structured(GPT, body, "tool")
    check_partials(partials, result.output)


# --------------------------------------------------------------------------- Responses


async def test_responses_native_output_text_becomes_the_object() -> None:
    item = {"type": "message", "id": "msg_1", "role": "assistant", "status": "in_progress"}
    events: list[Any] = [
        {"type": "response.created", "response": {"id": "resp_1", "status": "in_progress"}},
        {"type": "response.output_item.added", "output_index": 0, "item": {**item, "content": []}},
        {
            "type": "response.content_part.added",
            "item_id": "msg_1",
            "output_index": 0,
            "content_index": 0,
            "part": {"type": "output_text", "text": "", "annotations": []},
        },
    ]
    events += [
        {
            "type": "response.output_text.delta",
            "item_id": "msg_1",
            "output_index": 0,
            "content_index": 0,
            "delta": p,
        }
        for p in pieces(TEXT)
    ]
    events += [
        {
            "type": "response.output_item.done",
            "output_index": 0,
            "item": {
                **item,
                "status": "completed",
                "content": [{"type": "output_text", "text": TEXT, "annotations": []}],
            },
        },
        {
            "type": "response.completed",
            "response": {
                "id": "resp_1",
                "status": "completed",
                "usage": {"input_tokens": 20, "output_tokens": 40, "total_tokens": 60},
            },
        },
    ]
    model = factories.model("openai-responses", "openai", "gpt-5")
    partials, result, sent = await run_structured(model, sse(*events), "native")
    check_partials(partials, result.output)
    assert sent[0]["text"]["format"]["name"] == "Trip"


# --------------------------------------------------------------------------- Gemini


async def test_gemini_native_text_parts_become_the_object() -> None:
    chunks = [
        {"candidates": [{"content": {"role": "model", "parts": [{"text": p}]}}]}
        for p in pieces(TEXT, 20)
    ]
    chunks[-1]["candidates"][0]["finishReason"] = "STOP"
    chunks[-1]["usageMetadata"] = {
        "promptTokenCount": 10,
        "candidatesTokenCount": 30,
        "totalTokenCount": 40,
    }
    model = factories.model("google-generative-ai", "google", "gemini-2.5-flash")
    partials, result, sent = await run_structured(model, sse(*chunks), "auto")
    check_partials(partials, result.output)
    assert sent[0]["generationConfig"]["responseMimeType"] == "application/json"


async def test_gemini_tool_mode_takes_the_whole_call() -> None:
    call = {"functionCall": {"name": OUTPUT_TOOL_NAME, "args": TRIP}}
    chunk = {
        "candidates": [{"content": {"role": "model", "parts": [call]}, "finishReason": "STOP"}]
    }
    model = factories.model("google-generative-ai", "google", "gemini-2.5-flash")
    partials, result, _ = await run_structured(model, sse(chunk), "tool")
    # One delta carries the whole call: its partial, then the validated output.
    assert partials[-1] == result.output == Trip.model_validate(TRIP)
    assert len(partials) == 2


# --------------------------------------------------------------------------- Mistral


async def test_mistral_native_content_becomes_the_object() -> None:
    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return chat_chunk(delta, finish, model="mistral-large-latest")

    events = [chunk({"role": "assistant", "content": ""})]
    events += [chunk({"content": p}) for p in pieces(TEXT)]
    last = chunk({}, "stop")
    last["usage"] = {"prompt_tokens": 10, "completion_tokens": 40, "total_tokens": 50}
    model = factories.model("mistral-conversations", "mistral", "mistral-large-latest")
    partials, result, sent = await run_structured(model, sse(*events, last, "[DONE]"), "native")
    check_partials(partials, result.output)
    assert sent[0]["response_format"]["type"] == "json_schema"


# --------------------------------------------------------------------------- Bedrock


async def test_bedrock_native_text_becomes_the_object() -> None:
    pytest.importorskip("botocore")
    from tests.factories import bedrock_event

    frames = [bedrock_event("messageStart", {"role": "assistant"})]
    frames += [
        bedrock_event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": p}})
        for p in pieces(TEXT)
    ]
    frames += [
        bedrock_event("contentBlockStop", {"contentBlockIndex": 0}),
        bedrock_event("messageStop", {"stopReason": "end_turn"}),
        bedrock_event(
            "metadata",
            {"usage": {"inputTokens": 10, "outputTokens": 40, "totalTokens": 50}, "metrics": {}},
        ),
    ]
    headers = {"content-type": "application/vnd.amazon.eventstream"}
    async with LocalServer([Reply(200, headers, [b"".join(frames)])]) as server:
        model = factories.model(
            "bedrock-converse-stream",
            "amazon-bedrock",
            "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
            server.url,
        )
        s = stream_structured(model, "Plan a trip", Trip, api_key="k", region="us-east-1")
        partials = [p async for p in s]
        result = await s.result()
        sent = json.loads(server.requests[0].body)
    check_partials(partials, result.output)
    assert sent["outputConfig"]["textFormat"]["type"] == "json_schema"


async def test_chat_completions_refusal_in_native_mode_is_a_refusal_not_a_retry() -> None:
    # OpenAI's wire shape: content stays null while delta.refusal carries the refusal.
    body = chat_events(
        [{"content": None, "refusal": "I'm sorry, "}, {"refusal": "I can't help with that."}]
    )
    with pytest.raises(StructuredOutputError) as info:
        await run_structured(GPT, body, "native")
    assert info.value.reason == "refusal" and len(info.value.attempts) == 1
    assert "I can't help with that." in str(info.value)


async def test_a_length_stop_inside_the_output_call_is_a_length_error() -> None:
    body = anthropic_events(
        [
            {
                "start": {
                    "type": "tool_use",
                    "id": "toolu_1",
                    "name": OUTPUT_TOOL_NAME,
                    "input": {},
                },
                "deltas": [
                    {"type": "input_json_delta", "partial_json": p} for p in pieces(TEXT[:40])
                ],
            }
        ],
        stop_reason="max_tokens",
    )
    with pytest.raises(StructuredOutputError) as info:
        await run_structured(CLAUDE, body, "tool")
    assert info.value.reason == "length" and len(info.value.attempts) == 1
    assert info.value.raw_text == TEXT[:40]
