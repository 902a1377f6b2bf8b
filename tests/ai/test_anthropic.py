"""The anthropic-messages adapter: request bodies (checked against the official SDK's types),
headers, reasoning options, and the decoding of every stream shape, malformed ones included."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import Iterable, Iterator
from functools import partial
from typing import Any

import anthropic.types.message_create_params as sdk
import httpx2
import pydantic
import pytest

from tau.ai import AssistantMessageEvent, Context, Model, UserMessage, stream
from tau.ai import stream_simple as tau_stream_simple
from tau.ai.core.types import (
    AssistantMessage,
    ImageContent,
    ModelCost,
    TextContent,
    ThinkingContent,
    Tool,
    ToolCall,
    ToolResultMessage,
)
from tau.ai.providers.anthropic import request as adapter
from tests import factories
from tests.ai.servers import SSE_HEADERS, STALL, LocalServer, Reply, wait_until
from tests.ai.stream_checks import check_grammar, stream_aborting_at
from tests.factories import sse

SONNET = Model(
    id="claude-sonnet-4-5",
    name="Claude Sonnet 4.5",
    api="anthropic-messages",
    provider="anthropic",
    base_url="https://api.anthropic.com",
    reasoning=True,
    input=["text", "image"],
    cost=ModelCost(input=3, output=15, cache_read=0.3, cache_write=3.75),
    max_tokens=64_000,
)


def model(**changes: Any) -> Model:
    return dataclasses.replace(SONNET, **changes)


PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="

# --------------------------------------------------------------------------- SDK type check

_PARAMS = pydantic.TypeAdapter(sdk.MessageCreateParamsStreaming)


def _materialise(value: Any) -> Any:
    # The SDK types use Iterable[...]: pydantic validates those lazily, on iteration.
    if isinstance(value, dict):
        return {k: _materialise(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_materialise(v) for v in value]
    if isinstance(value, Iterator) or (
        isinstance(value, Iterable) and not isinstance(value, str | bytes)
    ):
        return [_materialise(v) for v in value]
    return value


def assert_sdk_valid(params: dict[str, Any]) -> None:
    """The body validates as ``MessageCreateParamsStreaming`` and has no key the SDK lacks.

    ``temperature`` is the one exception: the current SDK types no longer list it, but tau
    still sends it when the caller asks (older models and compatible endpoints take it).
    """
    body = json.loads(json.dumps(params))
    body.pop("temperature", None)
    validated = _materialise(_PARAMS.validate_python(body))
    assert validated == body


# --------------------------------------------------------------------------- request bodies

WEATHER = Tool(
    "get_weather",
    "Weather for a city",
    {
        "type": "object",
        "properties": {
            "city": {"type": "string", "minLength": 1},
            "unit": {"enum": ["c", "f"], "default": "c"},
        },
        "required": ["city"],
        "additionalProperties": False,
    },
)


class Place(pydantic.BaseModel):
    name: str
    country: str | None = None


class Trip(pydantic.BaseModel):
    stops: list[Place]


TRIP = Tool("plan_trip", "Plan a trip", Trip)


assistant = partial(factories.assistant, SONNET, stop_reason="toolUse")


def rich_context() -> Context:
    return Context(
        system_prompt="You are terse.",
        tools=[WEATHER, TRIP],
        messages=[
            UserMessage("What is the weather in Paris?"),
            assistant(
                ThinkingContent("The user wants weather.", "sig-abc"),
                ThinkingContent("", "opaque-redacted-data", redacted=True),
                ThinkingContent("unsigned thoughts from an aborted turn", None),
                ThinkingContent("   ", "sig-blank"),
                TextContent("Let me check."),
                TextContent("  "),
                ToolCall("toolu_1", "get_weather", {"city": "Paris"}),
                ToolCall("toolu_2", "plan_trip", {"stops": [{"name": "Lyon"}]}),
            ),
            ToolResultMessage(
                "toolu_1", "get_weather", [TextContent("18 C"), TextContent("sunny")]
            ),
            ToolResultMessage(
                "toolu_2", "plan_trip", [ImageContent(PNG, "image/png")], is_error=True
            ),
            UserMessage([TextContent("And this picture?"), ImageContent(PNG, "image/png")]),
        ],
    )


def test_full_context_body_matches_the_sdk_types() -> None:
    params = adapter.request_body(SONNET, rich_context(), {"max_tokens": 1000, "temperature": 0.2})
    assert_sdk_valid(params)
    assert params["model"] == "claude-sonnet-4-5" and params["stream"] is True
    assert params["max_tokens"] == 1000 and params["temperature"] == 0.2
    assert params["system"] == [
        {"type": "text", "text": "You are terse.", "cache_control": {"type": "ephemeral"}}
    ]
    messages = params["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "user"]
    assert messages[0] == {"role": "user", "content": "What is the weather in Paris?"}
    assert messages[1]["content"] == [
        {"type": "thinking", "thinking": "The user wants weather.", "signature": "sig-abc"},
        {"type": "redacted_thinking", "data": "opaque-redacted-data"},
        # unsigned thinking cannot be replayed (dropped); signed thinking goes back as is
        {"type": "thinking", "thinking": "   ", "signature": "sig-blank"},
        {"type": "text", "text": "Let me check."},
        {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}},
        {
            "type": "tool_use",
            "id": "toolu_2",
            "name": "plan_trip",
            "input": {"stops": [{"name": "Lyon"}]},
        },
    ]
    # consecutive tool results: one user message
    assert messages[2]["content"] == [
        {
            "type": "tool_result",
            "tool_use_id": "toolu_1",
            "content": "18 C\nsunny",
            "is_error": False,
        },
        {
            "type": "tool_result",
            "tool_use_id": "toolu_2",
            "content": [
                {"type": "text", "text": "(see attached image)"},
                {
                    "type": "image",
                    "source": {"type": "base64", "media_type": "image/png", "data": PNG},
                },
            ],
            "is_error": True,
        },
    ]
    # cache marker on the last block of the final user message only
    assert messages[3]["content"][-1]["cache_control"] == {"type": "ephemeral"}
    assert "cache_control" not in messages[3]["content"][0]
    assert "cache_control" not in json.dumps(messages[:3])


def test_tools_keep_their_whole_json_schema() -> None:
    params = adapter.request_body(SONNET, rich_context(), {})
    weather, trip = params["tools"]
    assert weather == {
        "name": "get_weather",
        "description": "Weather for a city",
        "input_schema": WEATHER.json_schema,
    }
    assert trip["input_schema"] == Trip.model_json_schema()
    assert "$defs" in trip["input_schema"]  # the reference implementation drops this
    assert adapter.convert_tools([Tool("t", "d", {"properties": {}})])[0]["input_schema"] == {
        "properties": {},
        "type": "object",
    }


def test_text_only_model_drops_user_images_but_not_tool_result_images() -> None:
    params = adapter.request_body(model(input=["text"]), rich_context(), {})
    assert_sdk_valid(params)
    assert params["messages"][3]["content"] == [
        {"type": "text", "text": "And this picture?", "cache_control": {"type": "ephemeral"}}
    ]
    assert params["messages"][2]["content"][1]["content"][1]["type"] == "image"


def test_blank_messages_are_dropped() -> None:
    context = Context(
        [
            UserMessage("   "),
            UserMessage([TextContent(" "), ImageContent(PNG, "image/png")]),
            assistant(TextContent(""), ThinkingContent(" ", None)),
            UserMessage("hi"),
        ]
    )
    params = adapter.request_body(model(input=["text"]), context, {"cache_retention": "none"})
    assert params["messages"] == [{"role": "user", "content": "hi"}]
    assert_sdk_valid(params)


@pytest.mark.parametrize(
    ("retention", "base_url", "expected"),
    [
        ("short", "https://api.anthropic.com", {"type": "ephemeral"}),
        ("long", "https://api.anthropic.com", {"type": "ephemeral", "ttl": "1h"}),
        ("long", "https://api.minimax.io/anthropic", {"type": "ephemeral"}),
        ("none", "https://api.anthropic.com", None),
    ],
)
def test_cache_retention(retention: str, base_url: str, expected: dict[str, str] | None) -> None:
    context = Context([UserMessage("hi")], system_prompt="sys")
    params = adapter.request_body(model(base_url=base_url), context, {"cache_retention": retention})
    assert_sdk_valid(params)
    assert params["system"][0].get("cache_control") == expected
    last = params["messages"][-1]["content"]
    if expected is None:
        assert last == "hi"
    else:
        assert last == [{"type": "text", "text": "hi", "cache_control": expected}]


def test_cache_retention_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TAU_CACHE_RETENTION", "long")
    params = adapter.request_body(SONNET, Context([UserMessage("hi")], system_prompt="s"), {})
    assert params["system"][0]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
    params = adapter.request_body(
        SONNET, Context([UserMessage("hi")], system_prompt="s"), {"cache_retention": "short"}
    )
    assert params["system"][0]["cache_control"] == {"type": "ephemeral"}


def test_no_cache_marker_after_an_assistant_turn() -> None:
    context = Context([UserMessage("hi"), assistant(TextContent("hello"))])
    params = adapter.request_body(SONNET, context, {})
    assert "cache_control" not in json.dumps(params)


def test_budget_thinking_drops_temperature() -> None:
    options = {"thinking_enabled": True, "thinking_budget_tokens": 4000, "temperature": 1.0}
    params = adapter.request_body(SONNET, Context([UserMessage("hi")]), options)
    assert_sdk_valid(params)
    assert params["thinking"] == {"type": "enabled", "budget_tokens": 4000}
    assert "temperature" not in params
    assert "system" not in params
    assert params["max_tokens"] == 64_000 // 3


def test_adaptive_thinking_with_effort() -> None:
    opus = model(id="claude-opus-4-6")
    options = {"thinking_enabled": True, "effort": "max", "max_tokens": 2000}
    params = adapter.request_body(opus, Context([UserMessage("hi")]), options)
    assert_sdk_valid(params)
    assert params["thinking"] == {"type": "adaptive"}
    assert params["output_config"] == {"effort": "max"}


def test_thinking_is_not_sent_to_a_model_without_reasoning() -> None:
    params = adapter.request_body(
        model(reasoning=False), Context([UserMessage("hi")]), {"thinking_enabled": True}
    )
    assert "thinking" not in params


def test_tool_choice_and_metadata() -> None:
    context = Context([UserMessage("hi")], tools=[WEATHER])
    params = adapter.request_body(
        SONNET, context, {"tool_choice": "any", "metadata": {"user_id": "u-1", "other": 3}}
    )
    assert_sdk_valid(params)
    assert params["tool_choice"] == {"type": "any"}
    assert params["metadata"] == {"user_id": "u-1"}
    choice = {"type": "tool", "name": "get_weather"}
    params = adapter.request_body(SONNET, context, {"tool_choice": choice})
    assert params["tool_choice"] == choice
    assert_sdk_valid(params)
    assert "metadata" not in adapter.request_body(SONNET, context, {"metadata": {"user_id": 5}})


def test_handoff_from_another_provider() -> None:
    """Thinking of another model is dropped, tool-call ids are made valid for Anthropic (and
    their results follow), an aborted turn and its results are left out, a call without a
    result gets a synthetic one, and lone surrogates never reach the wire."""
    foreign = AssistantMessage(
        [
            ThinkingContent("openai reasoning", "reasoning_content"),
            TextContent("Calling \ud83d tools."),
            ToolCall("call_A|b+c/=", "get_weather", {"city": "Oslo"}),
            ToolCall("call_2", "get_weather", {"city": "Rome"}),
        ],
        api="openai-completions",
        provider="openai",
        model="gpt-5",
        stop_reason="toolUse",
    )
    aborted = AssistantMessage(
        [ToolCall("toolu_lost", "get_weather", {"city": "Ber"})],
        api="anthropic-messages",
        provider="anthropic",
        model="claude-sonnet-4-5",
        stop_reason="aborted",
    )
    context = Context(
        system_prompt="sys \udc00",
        messages=[
            UserMessage("weather?"),
            foreign,
            ToolResultMessage("call_A|b+c/=", "get_weather", [TextContent("cold")]),
            UserMessage("and now?"),
            aborted,
            ToolResultMessage("toolu_lost", "get_weather", [TextContent("late")]),
            UserMessage("again"),
        ],
    )
    params = adapter.request_body(SONNET, context, {})
    assert_sdk_valid(params)
    assert params["system"][0]["text"] == "sys "
    messages = params["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "user", "user"]
    assert messages[1]["content"] == [
        {"type": "text", "text": "Calling  tools."},
        {
            "type": "tool_use",
            "id": "call_A_b_c__",
            "name": "get_weather",
            "input": {"city": "Oslo"},
        },
        {"type": "tool_use", "id": "call_2", "name": "get_weather", "input": {"city": "Rome"}},
    ]
    results = messages[2]["content"]
    assert [(r["tool_use_id"], r["content"], r["is_error"]) for r in results] == [
        ("call_A_b_c__", "cold", False),
        ("call_2", "No result provided", True),
    ]
    assert "toolu_lost" not in json.dumps(params) and "late" not in json.dumps(params)


# --------------------------------------------------------------------------- headers


def request_headers(m: Model, options: dict[str, Any], api_key: str) -> dict[str, str]:
    """The headers ``build_request`` sends with ``api_key``."""
    return adapter.build_request(
        m, Context([UserMessage("x")]), {**options, "api_key": api_key}
    ).headers  # type: ignore[typeddict-item]


def test_api_key_headers() -> None:
    headers = request_headers(SONNET, {}, "sk-ant-api03-x")
    assert headers["x-api-key"] == "sk-ant-api03-x"
    assert headers["anthropic-version"] == "2023-06-01"
    assert headers["anthropic-beta"] == (
        "fine-grained-tool-streaming-2025-05-14,interleaved-thinking-2025-05-14"
    )
    assert "authorization" not in headers


def test_interleaved_beta_rules_and_header_precedence() -> None:
    opus = model(id="claude-opus-4-6", headers={"x-model": "m", "anthropic-version": "v-model"})
    headers = request_headers(opus, {"headers": {"x-model": "opt"}}, "k")
    assert headers["anthropic-beta"] == "fine-grained-tool-streaming-2025-05-14"
    assert headers["x-model"] == "opt" and headers["anthropic-version"] == "v-model"
    off = request_headers(SONNET, {"interleaved_thinking": False}, "k")
    assert "interleaved" not in off["anthropic-beta"]


def test_oauth_token_headers_system_and_tool_names() -> None:
    token = "sk-ant-oat01-abc"
    headers = request_headers(SONNET, {}, token)
    assert headers["authorization"] == f"Bearer {token}" and "x-api-key" not in headers
    assert headers["anthropic-beta"].startswith("claude-code-20250219,oauth-2025-04-20,")
    tools = [Tool("todowrite", "todo"), Tool("find", "find files")]
    context = Context([UserMessage("x"), assistant(ToolCall("t1", "todowrite", {}))], "sys", tools)
    params = adapter.request_body(SONNET, context, {}, oauth=True)
    assert_sdk_valid(params)
    assert [t["name"] for t in params["tools"]] == ["TodoWrite", "find"]
    assert params["messages"][1]["content"][0]["name"] == "TodoWrite"
    assert [b["text"] for b in params["system"]] == [adapter.CLAUDE_CODE_IDENTITY, "sys"]


# --------------------------------------------------------------------------- stream_simple


def captured_params(m: Model, **options: Any) -> dict[str, Any]:
    seen: list[dict[str, Any]] = []

    def grab(payload: dict[str, Any], _model: Model) -> None:
        seen.append(payload)
        raise RuntimeError("stop here")

    async def go() -> None:
        await tau_stream_simple(
            m, Context([UserMessage("hi")]), api_key="k", on_payload=grab, **options
        ).result()

    asyncio.run(go())
    return seen[0]


def test_simple_reasoning_budget_model() -> None:
    params = captured_params(SONNET, reasoning="high")
    assert params["thinking"] == {"type": "enabled", "budget_tokens": 16384}
    assert params["max_tokens"] == 32_000 + 16384
    params = captured_params(
        SONNET, reasoning="low", thinking_budgets={"low": 3000}, max_tokens=500
    )
    assert params["thinking"]["budget_tokens"] == 3000 and params["max_tokens"] == 3500


def test_simple_reasoning_adaptive_models() -> None:
    assert captured_params(model(id="claude-opus-4-6"), reasoning="xhigh")["output_config"] == {
        "effort": "max"
    }
    assert captured_params(model(id="claude-sonnet-4-6"), reasoning="xhigh")["output_config"] == {
        "effort": "high"
    }
    params = captured_params(model(id="claude-sonnet-4-6"), reasoning="minimal")
    assert params["thinking"] == {"type": "adaptive"} and params["output_config"] == {
        "effort": "low"
    }


def test_simple_without_reasoning_or_on_a_plain_model() -> None:
    assert "thinking" not in captured_params(SONNET)
    params = captured_params(
        model(reasoning=False, max_tokens=8192), reasoning="high", temperature=0.5
    )
    assert "thinking" not in params and params["temperature"] == 0.5
    assert params["max_tokens"] == 8192


# --------------------------------------------------------------------------- decoding


def start(input_tokens: int = 20, cache_read: int = 5, cache_write: int = 7) -> dict[str, Any]:
    usage = {
        "input_tokens": input_tokens,
        "output_tokens": 1,
        "cache_read_input_tokens": cache_read,
        "cache_creation_input_tokens": cache_write,
    }
    return {"type": "message_start", "message": {"id": "msg_1", "model": "m", "usage": usage}}


def block(index: int, content_block: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_start", "index": index, "content_block": content_block}


def delta(index: int, **d: Any) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index, "delta": d}


def stop(index: int) -> dict[str, Any]:
    return {"type": "content_block_stop", "index": index}


def end(reason: str = "end_turn", output: int = 30, **usage: Any) -> list[dict[str, Any]]:
    return [
        {
            "type": "message_delta",
            "delta": {"stop_reason": reason},
            "usage": {"output_tokens": output, **usage},
        },
        {"type": "message_stop"},
    ]


async def run_stream(
    body: bytes, context: Context | None = None, m: Model = SONNET, **options: Any
) -> tuple[list[AssistantMessageEvent], AssistantMessage, list[httpx2.Request]]:
    seen: list[httpx2.Request] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        seen.append(request)
        return httpx2.Response(200, headers=SSE_HEADERS, content=body)

    async with httpx2.AsyncClient(transport=httpx2.MockTransport(handler)) as client:
        s = stream(
            m, context or Context([UserMessage("hi")]), api_key="k", client=client, **options
        )
        events = [e async for e in s]
    message = await s.result()
    check_grammar(events, message)
    return events, message, seen


async def test_text_and_tool_call_stream() -> None:
    body = sse(
        start(),
        {"type": "ping"},
        block(0, {"type": "text", "text": ""}),
        delta(0, type="text_delta", text="Checking"),
        delta(0, type="text_delta", text=" now."),
        stop(0),
        block(1, {"type": "tool_use", "id": "toolu_9", "name": "get_weather", "input": {}}),
        delta(1, type="input_json_delta", partial_json=""),
        delta(1, type="input_json_delta", partial_json='{"city": "Pa'),
        delta(1, type="input_json_delta", partial_json='ris", "unit": "c"}'),
        stop(1),
        *end("tool_use", output=42),
    )
    events, message, seen = await run_stream(body, Context([UserMessage("hi")], tools=[WEATHER]))
    assert message.stop_reason == "toolUse"
    assert message.text == "Checking now."
    assert message.tool_calls == [
        ToolCall("toolu_9", "get_weather", {"city": "Paris", "unit": "c"})
    ]
    assert [e.type for e in events if e.type.startswith("toolcall")] == [
        "toolcall_start",
        "toolcall_delta",
        "toolcall_delta",
        "toolcall_end",
    ]
    usage = message.usage
    assert (usage.input, usage.output, usage.cache_read, usage.cache_write) == (20, 42, 5, 7)
    assert usage.total_tokens == 74
    assert usage.cost.total == pytest.approx((20 * 3 + 42 * 15 + 5 * 0.3 + 7 * 3.75) / 1e6)
    request = seen[0]
    assert request.url == "https://api.anthropic.com/v1/messages"
    assert request.headers["x-api-key"] == "k"
    assert json.loads(request.content)["tools"][0]["name"] == "get_weather"


async def test_empty_arguments_and_arguments_only_in_the_start_block() -> None:
    body = sse(
        start(),
        block(0, {"type": "tool_use", "id": "a", "name": "noargs", "input": {}}),
        delta(0, type="input_json_delta", partial_json=""),
        stop(0),
        block(1, {"type": "tool_use", "id": "b", "name": "whole", "input": {"x": [1, 2]}}),
        stop(1),
        *end("tool_use"),
    )
    _, message, _ = await run_stream(body)
    assert [(c.name, c.arguments) for c in message.tool_calls] == [
        ("noargs", {}),
        ("whole", {"x": [1, 2]}),
    ]


async def test_thinking_with_signature_and_redacted_thinking() -> None:
    body = sse(
        start(),
        block(0, {"type": "thinking", "thinking": "", "signature": ""}),
        delta(0, type="thinking_delta", thinking="Let me think"),
        delta(0, type="thinking_delta", thinking=" hard."),
        delta(0, type="signature_delta", signature="EqQBCkgIAR"),
        delta(0, type="signature_delta", signature="-more"),
        stop(0),
        block(1, {"type": "redacted_thinking", "data": "EmwKAhgBEgy"}),
        stop(1),
        block(2, {"type": "text", "text": "Answer"}),
        stop(2),
        *end(),
    )
    events, message, _ = await run_stream(body)
    assert message.content == [
        ThinkingContent("Let me think hard.", "EqQBCkgIAR-more"),
        ThinkingContent("[Reasoning redacted]", "EmwKAhgBEgy", redacted=True),
        TextContent("Answer"),
    ]
    assert [e.type for e in events].count("thinking_end") == 2


async def test_server_tools_and_unknown_shapes_are_skipped() -> None:
    body = sse(
        start(),
        {"type": "brand_new_event", "x": 1},
        block(0, {"type": "server_tool_use", "id": "srv", "name": "web_search", "input": {}}),
        delta(0, type="input_json_delta", partial_json='{"query": "x"}'),
        stop(0),
        block(1, {"type": "web_search_tool_result", "tool_use_id": "srv", "content": []}),
        stop(1),
        block(2, {"type": "text", "text": ""}),
        delta(2, type="citations_delta", citation={"type": "web_search_result_location"}),
        delta(2, type="text_delta", text="Found it."),
        delta(2, type="future_delta", stuff=1),
        stop(2),
        delta(7, type="text_delta", text="no such block"),
        stop(9),
        *end(),
    )
    _, message, _ = await run_stream(body)
    assert message.content == [TextContent("Found it.")]
    assert message.stop_reason == "stop"


async def test_message_delta_usage_updates_only_non_null_fields() -> None:
    body = sse(
        start(input_tokens=100, cache_read=50, cache_write=0),
        block(0, {"type": "text", "text": "ok"}),
        stop(0),
        *end(output=9, input_tokens=None, cache_read_input_tokens=None),
    )
    _, message, _ = await run_stream(body)
    assert (message.usage.input, message.usage.output, message.usage.cache_read) == (100, 9, 50)


@pytest.mark.parametrize(
    ("reason", "stop_reason", "error"),
    [
        ("max_tokens", "length", None),
        ("stop_sequence", "stop", None),
        ("pause_turn", "stop", None),
        ("model_context_window_exceeded", "length", None),
        ("refusal", "error", "The model stopped with stop_reason 'refusal'"),
        ("sensitive", "error", "The model stopped with stop_reason 'sensitive'"),
        ("galaxy_brain", "error", "Unhandled Anthropic stop reason: 'galaxy_brain'"),
    ],
)
async def test_stop_reasons(reason: str, stop_reason: str, error: str | None) -> None:
    body = sse(start(), block(0, {"type": "text", "text": "t"}), stop(0), *end(reason))
    events, message, _ = await run_stream(body)
    assert message.stop_reason == stop_reason
    assert message.error_message == error
    assert events[-1].type == ("error" if error else "done")
    assert message.text == "t"


async def test_truncated_stream_is_a_clear_error_keeping_partial_content() -> None:
    body = sse(
        start(), block(0, {"type": "text", "text": ""}), delta(0, type="text_delta", text="Half")
    )
    events, message, _ = await run_stream(body)
    assert events[-1].type == "error" and message.stop_reason == "error"
    assert message.error_message == (
        "The Anthropic stream ended before message_stop: the response is incomplete "
        "(connection closed early)"
    )
    assert message.text == "Half" and message.usage.input == 20


async def test_json_syntax_error_in_one_event_is_a_clear_error() -> None:
    body = (
        sse(
            start(),
            block(0, {"type": "text", "text": ""}),
            delta(0, type="text_delta", text="ok"),
        )
        + b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_de\n\n'
        + sse(*end())
    )
    _, message, _ = await run_stream(body)
    assert message.stop_reason == "error" and message.text == "ok"
    assert message.error_message is not None
    assert message.error_message.startswith(
        "Malformed 'content_block_delta' event from Anthropic (invalid JSON: "
    )
    assert '{"type":"content_block_delta"' in message.error_message


async def test_event_missing_fields_is_a_clear_error() -> None:
    body = sse(
        start(), block(0, {"type": "text", "text": ""}), {"type": "content_block_delta", "index": 0}
    )
    _, message, _ = await run_stream(body)
    assert message.error_message is not None
    assert message.error_message.startswith(
        "Malformed 'content_block_delta' event from Anthropic (no 'delta' field)"
    )


async def test_error_event_carries_the_provider_message() -> None:
    body = sse(
        start(),
        block(0, {"type": "text", "text": "Par"}),
        {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
    )
    events, message, _ = await run_stream(body)
    assert events[-1].type == "error"
    assert message.error_message == "overloaded_error: Overloaded"
    assert message.text == "Par"


async def _prompt_too_long() -> AssistantMessage:
    """The message of a call that Anthropic refuses with its 400 "prompt is too long"."""
    body = {
        "type": "error",
        "error": {
            "type": "invalid_request_error",
            "message": "prompt is too long: 250000 tokens > 200000 maximum",
        },
    }

    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(400, json=body)

    async with httpx2.AsyncClient(transport=httpx2.MockTransport(handler)) as client:
        return await stream(
            SONNET, Context([UserMessage("hi")]), api_key="k", client=client
        ).result()


async def test_http_error_carries_status_and_message() -> None:
    message = await _prompt_too_long()
    assert message.stop_reason == "error"
    assert message.error_message == (
        "400 invalid_request_error: prompt is too long: 250000 tokens > 200000 maximum"
    )


async def test_context_overflow_is_recognisable() -> None:
    from tau.ai.capabilities.overflow import is_context_overflow

    assert is_context_overflow(await _prompt_too_long())


async def test_missing_api_key_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_OAUTH_TOKEN", raising=False)
    message = await stream(SONNET, Context([UserMessage("hi")])).result()
    assert message.stop_reason == "error"
    assert (
        message.error_message is not None
        and "No API key for provider 'anthropic'" in message.error_message
    )


async def test_oauth_tool_names_are_mapped_back() -> None:
    body = sse(
        start(),
        block(0, {"type": "tool_use", "id": "t", "name": "TodoWrite", "input": {}}),
        delta(0, type="input_json_delta", partial_json="{}"),
        stop(0),
        *end("tool_use"),
    )

    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, headers=SSE_HEADERS, content=body)

    context = Context([UserMessage("hi")], tools=[Tool("todowrite", "todo")])
    async with httpx2.AsyncClient(transport=httpx2.MockTransport(handler)) as client:
        message = await stream(SONNET, context, api_key="sk-ant-oat01-x", client=client).result()
    assert message.tool_calls[0].name == "todowrite"


async def test_abort_mid_tool_call_keeps_partial_arguments_and_usage() -> None:
    head = sse(
        start(),
        block(0, {"type": "tool_use", "id": "t", "name": "get_weather", "input": {}}),
        delta(0, type="input_json_delta", partial_json='{"city": "Ber'),
    )
    async with LocalServer([Reply(200, SSE_HEADERS, [head, STALL])]) as server:
        events, message = await stream_aborting_at(
            model(base_url=server.url), "toolcall_delta", api_key="k"
        )
        await wait_until(lambda: server.open_connections == 0)  # the connection was closed
    check_grammar(events, message)
    assert message.stop_reason == "aborted"
    assert message.tool_calls[0].arguments == {"city": "Ber"}
    assert message.usage.input == 20


async def test_consumer_leaving_early_closes_the_connection() -> None:
    head = sse(
        start(), block(0, {"type": "text", "text": ""}), delta(0, type="text_delta", text="x")
    )
    async with LocalServer([Reply(200, SSE_HEADERS, [head, STALL])]) as server:
        s = stream(model(base_url=server.url), Context([UserMessage("hi")]), api_key="k")
        async for event in s:
            if event.type == "text_delta":
                break
        await s.aclose()
        message = await asyncio.wait_for(s.result(), 5)
        await wait_until(lambda: server.open_connections == 0)
    assert message.stop_reason == "aborted"


async def test_sequential_calls_reuse_one_pooled_connection() -> None:
    body = sse(start(), block(0, {"type": "text", "text": "hi"}), stop(0), *end())
    replies = [Reply(200, SSE_HEADERS, [body]) for _ in range(3)]
    async with LocalServer(replies) as server:
        for _ in range(3):
            s = stream(model(base_url=server.url), Context([UserMessage("hi")]), api_key="k")
            assert (await s.result()).text == "hi"
        assert server.connections == 1
