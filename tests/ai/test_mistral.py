"""The ``mistral-conversations`` adapter: request shape and stream mapping."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from tau.ai.core.types import (
    AssistantMessage,
    Context,
    ImageContent,
    Model,
    TextContent,
    ThinkingContent,
    Tool,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from tau.ai.lookup.catalog import get_model
from tau.ai.providers.mistral import adapter
from tau.ai.providers.mistral import request as mistral
from tau.ai.providers.mistral.decoder import (
    THINKING_SIGNATURE,
    MistralDecoder,
    derived_tool_call_id,
)
from tau.ai.providers.mistral.request import IMAGE_OMITTED, request_body
from tau.ai.streaming.builder import MessageBuilder
from tau.ai.streaming.launch import launch_stream

PNG = "iVBORw0KGgo="


def magistral() -> Model:
    model = get_model("mistral", "magistral-medium-latest")
    assert model is not None
    return model


def pixtral() -> Model:
    model = get_model("mistral", "pixtral-large-latest")
    assert model is not None
    assert model.supports_images
    return model


def chunk(
    delta: dict[str, Any] | None = None, finish: str | None = None, **extra: Any
) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": delta or {}, "finish_reason": finish}], **extra}


async def run(chunks: list[dict[str, Any] | str]) -> tuple[list[Any], AssistantMessage]:
    async def adapter(builder: MessageBuilder) -> None:
        processor = MistralDecoder(builder)
        for item in chunks:
            if isinstance(item, str):
                processor.feed(item)
            else:
                processor.apply(item)
        processor.finish()

    stream = launch_stream(magistral(), {}, adapter)
    seen = [event async for event in stream]
    return seen, await stream.result()


# --------------------------------------------------------------------------- stream


async def test_thinking_then_text_with_usage() -> None:
    events, message = await run(
        [
            chunk({"role": "assistant", "content": ""}),
            chunk(
                {"content": [{"type": "thinking", "thinking": [{"type": "text", "text": "Hmm"}]}]}
            ),
            chunk(
                {"content": [{"type": "thinking", "thinking": [{"type": "text", "text": ", ok"}]}]}
            ),
            chunk({"content": "Cross"}),
            chunk({"content": [{"type": "text", "text": " safely."}]}),
            chunk(
                {"content": ""},
                "stop",
                usage={"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
            ),
            "[DONE]",
        ]
    )
    assert [e.type for e in events] == [
        "start",
        "thinking_start",
        "thinking_delta",
        "thinking_delta",
        "thinking_end",
        "text_start",
        "text_delta",
        "text_delta",
        "text_end",
        "done",
    ]
    thinking, text = message.content
    assert isinstance(thinking, ThinkingContent) and thinking.thinking == "Hmm, ok"
    assert thinking.thinking_signature == THINKING_SIGNATURE
    assert isinstance(text, TextContent) and text.text == "Cross safely."
    assert (message.usage.input, message.usage.output, message.usage.total_tokens) == (10, 5, 15)
    assert message.usage.cost.total > 0
    assert message.stop_reason == "stop"


async def test_tool_calls_close_text_and_end_after_the_stream() -> None:
    events, message = await run(
        [
            chunk({"content": "Let me look."}),
            chunk(
                {
                    "tool_calls": [
                        {
                            "id": "abcDEF123",
                            "index": 0,
                            "function": {"name": "a", "arguments": '{"x":'},
                        },
                    ]
                }
            ),
            chunk({"tool_calls": [{"id": None, "index": 0, "function": {"arguments": "1}"}}]}),
            chunk(
                {
                    "tool_calls": [
                        {
                            "id": "ghiJKL456",
                            "index": 0,
                            "function": {"name": "b", "arguments": {"y": [2]}},
                        },
                    ]
                },
                "tool_calls",
            ),
        ]
    )
    types = [e.type for e in events]
    assert types.index("text_end") < types.index("toolcall_start")
    # every toolcall_end comes after the last delta of any call
    last_delta = max(i for i, t in enumerate(types) if t == "toolcall_delta")
    assert all(i > last_delta for i, t in enumerate(types) if t == "toolcall_end")
    calls = message.tool_calls
    assert [(c.id, c.name, c.arguments) for c in calls] == [
        ("abcDEF123", "a", {"x": 1}),
        ("ghiJKL456", "b", {"y": [2]}),
    ]
    assert message.stop_reason == "toolUse"


async def test_tool_call_without_id_gets_a_nine_character_id() -> None:
    _, message = await run(
        [
            chunk(
                {
                    "tool_calls": [
                        {"id": "null", "index": 2, "function": {"name": "f", "arguments": "{}"}}
                    ]
                },
                "tool_calls",
            )
        ]
    )
    call_id = message.tool_calls[0].id
    assert call_id == derived_tool_call_id(2)
    assert len(call_id) == 9 and call_id.isalnum()


async def test_id_less_fragments_stream_into_one_call() -> None:
    _, message = await run(
        [
            chunk({"tool_calls": [{"index": 0, "function": {"name": "f", "arguments": '{"a"'}}]}),
            chunk({"tool_calls": [{"id": "", "index": 0, "function": {"arguments": ":1}"}}]}),
            chunk({}, "tool_calls"),
        ]
    )
    assert [(c.id, c.name, c.arguments) for c in message.tool_calls] == [
        (derived_tool_call_id(0), "f", {"a": 1})
    ]


@pytest.mark.parametrize(
    ("finish", "stop"),
    [
        ("stop", "stop"),
        ("length", "length"),
        ("model_length", "length"),
        ("tool_calls", "toolUse"),
        ("weird", "stop"),
    ],
)
async def test_finish_reasons(finish: str, stop: str) -> None:
    _, message = await run([chunk({"content": "x"}, finish)])
    assert message.stop_reason == stop


async def test_error_finish_reason_is_an_error() -> None:
    events, message = await run([chunk({"content": "x"}, "error")])
    assert events[-1].type == "error"
    assert message.error_message == "Mistral ended the response with finish_reason 'error'"


async def test_truncated_stream_is_an_error() -> None:
    events, message = await run([chunk({"content": "partial"})])
    assert events[-1].type == "error"
    assert message.text == "partial"
    assert "truncated" in (message.error_message or "")


async def test_malformed_json_and_error_chunks() -> None:
    _, message = await run(['{"choices": ['])
    assert (message.error_message or "").startswith("Malformed JSON in Mistral stream chunk")
    _, message = await run([{"object": "error", "message": "Rate limit exceeded"}])
    assert message.error_message == "Mistral API error: Rate limit exceeded"


async def test_unknown_content_chunks_are_ignored() -> None:
    _, message = await run(
        [
            chunk(
                {
                    "content": [
                        {"type": "reference", "reference_ids": [1]},
                        {"type": "text", "text": "ok"},
                    ]
                }
            ),
            chunk({"content": [{"type": "image_url", "image_url": "data:..."}]}, "stop"),
        ]
    )
    assert message.text == "ok" and len(message.content) == 1


async def test_lone_surrogates_in_deltas_are_sanitized() -> None:
    _, message = await run([chunk({"content": "a\ud83db"}, "stop")])
    message.text.encode("utf-8")  # would raise on a lone surrogate


# --------------------------------------------------------------------------- request


def test_payload_fields() -> None:
    tools = [Tool("get", "Get it.", {"type": "object", "properties": {}})]
    payload = request_body(
        magistral(),
        Context([UserMessage("hi")], system_prompt="sys", tools=tools),
        {"temperature": 0.3, "max_tokens": 99, "tool_choice": "any", "prompt_mode": "reasoning"},
    )
    assert payload == {
        "model": "magistral-medium-latest",
        "stream": True,
        "messages": [{"role": "system", "content": "sys"}, {"role": "user", "content": "hi"}],
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "get",
                    "description": "Get it.",
                    "parameters": {"type": "object", "properties": {}},
                    "strict": False,
                },
            }
        ],
        "temperature": 0.3,
        "max_tokens": 99,
        "tool_choice": "any",
        "prompt_mode": "reasoning",
    }


def test_messages_same_model_history() -> None:
    model = pixtral()
    history = AssistantMessage(
        [
            ThinkingContent("Thinking.", THINKING_SIGNATURE),
            ThinkingContent("unsigned: not replayed"),
            TextContent("Answer."),
            TextContent("   "),
            ToolCall("abcDEF123", "shot", {"a": 1}),
        ],
        api=model.api,
        provider=model.provider,
        model=model.id,
    )
    results = [
        ToolResultMessage(
            "abcDEF123", "shot", [TextContent("  pic  "), ImageContent(PNG, "image/png")]
        ),
    ]
    context = Context(
        [UserMessage([TextContent("see"), ImageContent(PNG, "image/png")]), history, *results]
    )
    messages = mistral.convert_messages(model, context)
    image = {"type": "image_url", "image_url": f"data:image/png;base64,{PNG}"}
    assert messages == [
        {"role": "user", "content": [{"type": "text", "text": "see"}, image]},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": [{"type": "text", "text": "Thinking."}]},
                {"type": "text", "text": "Answer."},
            ],
            "tool_calls": [
                {
                    "id": "abcDEF123",
                    "type": "function",
                    "function": {"name": "shot", "arguments": '{"a": 1}'},
                }
            ],
        },
        {
            "role": "tool",
            "tool_call_id": "abcDEF123",
            "name": "shot",
            "content": [{"type": "text", "text": "pic"}, image],
        },
    ]


def test_tool_results_without_images_support_errors_and_empty() -> None:
    model = magistral()
    assert not model.supports_images
    calls = AssistantMessage(
        [
            ToolCall("aaaaaaaa1", "t", {}),
            ToolCall("aaaaaaaa2", "t", {}),
            ToolCall("aaaaaaaa3", "t", {}),
        ],
        api=model.api,
        provider=model.provider,
        model=model.id,
    )
    context = Context(
        [
            UserMessage([ImageContent(PNG, "image/png")]),
            calls,
            ToolResultMessage(
                "aaaaaaaa1", "t", [TextContent("txt"), ImageContent(PNG, "image/png")]
            ),
            ToolResultMessage("aaaaaaaa2", "t", [ImageContent(PNG, "image/png")], is_error=True),
            ToolResultMessage("aaaaaaaa3", "t", []),
        ]
    )
    messages = mistral.convert_messages(model, context)
    assert messages[0] == {"role": "user", "content": [{"type": "text", "text": IMAGE_OMITTED}]}
    texts = [m["content"][0]["text"] for m in messages if m["role"] == "tool"]
    assert texts == [
        "txt\n[tool image omitted: model does not support images]",
        f"[tool error] {IMAGE_OMITTED}",
        "(no tool output)",
    ]


def test_empty_assistant_messages_are_skipped() -> None:
    model = magistral()
    empty = AssistantMessage(
        [TextContent(" ")], api=model.api, provider=model.provider, model=model.id
    )
    assert mistral.convert_messages(model, Context([UserMessage("a"), empty])) == [
        {"role": "user", "content": "a"}
    ]


def test_foreign_tool_call_ids_become_nine_characters() -> None:
    model = magistral()
    foreign = AssistantMessage(
        [ToolCall("call_pAYb+/=|fc_t5nnb2q", "t", {}), ToolCall("toolu_01XYZ", "t", {})],
        api="openai-responses",
        provider="openai",
        model="gpt-5-mini",
    )
    context = Context(
        [
            UserMessage("q"),
            foreign,
            ToolResultMessage("call_pAYb+/=|fc_t5nnb2q", "t", [TextContent("1")]),
            ToolResultMessage("toolu_01XYZ", "t", [TextContent("2")]),
        ]
    )
    messages = mistral.convert_messages(model, context)
    ids = [c["id"] for c in messages[1]["tool_calls"]]
    assert all(len(i) == 9 and i.isalnum() for i in ids)
    assert len(set(ids)) == 2
    assert [m["tool_call_id"] for m in messages[2:]] == ids


def test_stream_simple_prompt_mode() -> None:
    captured: list[dict[str, Any]] = []

    def grab(model: Model, context: Context, options: dict[str, Any]) -> Any:
        captured.append(options)
        return None

    original = adapter.stream
    adapter.stream = grab  # type: ignore[assignment]
    try:
        adapter.stream_simple(magistral(), Context([]), {"reasoning": "low"})
        adapter.stream_simple(magistral(), Context([]), {})
        plain = dataclasses.replace(magistral(), reasoning=False)
        adapter.stream_simple(plain, Context([]), {"reasoning": "high"})
    finally:
        adapter.stream = original  # type: ignore[assignment]
    assert [o.get("prompt_mode") for o in captured] == ["reasoning", None, None]
    assert json.dumps(captured[0]["max_tokens"])


def test_chat_url() -> None:
    assert (
        mistral.chat_url("https://api.mistral.ai") == "https://api.mistral.ai/v1/chat/completions"
    )
    assert mistral.chat_url("https://x.example/v1/") == "https://x.example/v1/chat/completions"
