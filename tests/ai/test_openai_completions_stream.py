"""Chunk-to-event mapping of the chat-completions adapter, including malformed streams."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tau.ai import AssistantMessage, AssistantMessageEvent
from tau.ai.adapters import launch_stream
from tau.ai.capabilities.overflow import is_context_overflow
from tau.ai.core.types import Model, ModelCost, ThinkingContent
from tau.ai.providers.openai_completions.decoder import OpenAICompletionsDecoder, parse_usage
from tau.ai.streaming.builder import MessageBuilder
from tests.ai.stream_checks import check_grammar

MODEL = Model(
    id="gpt-test",
    name="gpt-test",
    api="openai-completions",
    provider="openai",
    base_url="https://api.openai.com/v1",
    cost=ModelCost(input=1.0, output=2.0, cache_read=0.5),
)


def chunk(delta: dict[str, Any] | None = None, finish: str | None = None, **extra: Any) -> str:
    choice: dict[str, Any] = {"index": 0, "delta": delta or {}, "finish_reason": finish}
    return json.dumps({"id": "c", "object": "chat.completion.chunk", "choices": [choice], **extra})


def tc(
    index: int | None, id: str | None = None, name: str | None = None, args: Any = None
) -> dict[str, Any]:
    function: dict[str, Any] = {}
    if name is not None:
        function["name"] = name
    if args is not None:
        function["arguments"] = args
    item: dict[str, Any] = {"function": function}
    if index is not None:
        item["index"] = index
    if id is not None:
        item["id"] = id
        item["type"] = "function"
    return item


async def replay(
    datas: list[str], events: list[str | None] | None = None
) -> tuple[list[AssistantMessageEvent], AssistantMessage]:
    async def run(builder: MessageBuilder) -> None:
        mapper = OpenAICompletionsDecoder(builder)
        for i, data in enumerate(datas):
            if not mapper.feed(data, events[i] if events else "message"):
                break
        mapper.finish()

    s = launch_stream(MODEL, {}, run)
    seen = [e async for e in s]
    message = await s.result()
    check_grammar(seen)
    return seen, message


async def test_text_usage_and_cost() -> None:
    usage = {
        "prompt_tokens": 100,
        "completion_tokens": 30,
        "total_tokens": 130,
        "prompt_tokens_details": {"cached_tokens": 40},
        "completion_tokens_details": {"reasoning_tokens": 10},
    }
    _, m = await replay(
        [
            chunk({"role": "assistant", "content": ""}),
            chunk({"content": "Hel"}),
            chunk({"content": "lo"}),
            chunk({}, "stop"),
            json.dumps({"choices": [], "usage": usage}),
            "[DONE]",
        ]
    )
    assert m.stop_reason == "stop" and m.text == "Hello"
    u = m.usage
    # completion_tokens already includes reasoning: not added again.
    assert (u.input, u.output, u.cache_read, u.reasoning, u.total_tokens) == (60, 30, 40, 10, 130)
    assert abs(u.cost.total - (60 * 1.0 + 30 * 2.0 + 40 * 0.5) / 1e6) < 1e-12


def test_usage_variants() -> None:
    assert (
        parse_usage({"prompt_tokens": 10, "completion_tokens": 5, "cached_tokens": 4}).cache_read
        == 4
    )
    ds = parse_usage({"prompt_tokens": 10, "completion_tokens": 5, "prompt_cache_hit_tokens": 6})
    assert (ds.input, ds.cache_read) == (4, 6)
    orr = parse_usage(
        {
            "prompt_tokens": 100,
            "completion_tokens": 1,
            "prompt_tokens_details": {"cached_tokens": 20, "cache_write_tokens": 30},
        },
    )
    assert (orr.input, orr.cache_read, orr.cache_write, orr.total_tokens) == (50, 20, 30, 101)
    # Reasoning is never added on top, even when a server reports more of it than output.
    odd = parse_usage(
        {
            "prompt_tokens": 1,
            "completion_tokens": 5,
            "completion_tokens_details": {"reasoning_tokens": 50},
        },
    )
    assert (odd.output, odd.reasoning, odd.total_tokens) == (5, 50, 6)
    assert parse_usage({"prompt_tokens": None, "completion_tokens": "x"}).total_tokens == 0
    assert parse_usage({"prompt_tokens": 3}).reasoning is None


async def test_usage_from_choice_and_x_groq() -> None:
    _, m = await replay(
        [
            chunk({"content": "a"}),
            json.dumps(
                {
                    "choices": [
                        {
                            "index": 0,
                            "delta": {},
                            "finish_reason": "stop",
                            "usage": {"prompt_tokens": 7, "completion_tokens": 2},
                        }
                    ]
                }
            ),
            "[DONE]",
        ]
    )
    assert (m.usage.input, m.usage.output) == (7, 2)
    _, g = await replay(
        [
            chunk({"content": "a"}),
            chunk({}, "stop", x_groq={"usage": {"prompt_tokens": 3, "completion_tokens": 4}}),
            "[DONE]",
        ]
    )
    assert (g.usage.input, g.usage.output) == (3, 4)


async def test_reasoning_fields_and_signature() -> None:
    events, m = await replay(
        [
            chunk({"reasoning_content": "Let me ", "reasoning": "Let me "}),
            chunk({"reasoning_content": "think."}),
            chunk({"content": "Done."}),
            chunk({}, "stop"),
            "[DONE]",
        ]
    )
    thinking = m.content[0]
    assert isinstance(thinking, ThinkingContent)
    assert thinking.thinking == "Let me think."  # the duplicate field is not read twice
    assert thinking.thinking_signature == "reasoning_content"
    assert m.text == "Done."
    assert [e.type for e in events].count("thinking_end") == 1


async def test_mistral_typed_content_parts() -> None:
    _, m = await replay(
        [
            chunk(
                {"content": [{"type": "thinking", "thinking": [{"type": "text", "text": "Hmm"}]}]}
            ),
            chunk({"content": [{"type": "text", "text": "Yes"}]}),
            chunk({"content": "!"}, "stop"),
            "[DONE]",
        ]
    )
    assert isinstance(m.content[0], ThinkingContent) and m.content[0].thinking == "Hmm"
    assert m.text == "Yes!"


async def test_reasoning_details_only() -> None:
    detail = {"type": "reasoning.text", "text": "15 * 27", "index": 0}
    _, m = await replay(
        [
            chunk({"content": "", "reasoning_details": [detail]}),
            chunk({"content": "405"}, "stop"),
            "[DONE]",
        ]
    )
    assert isinstance(m.content[0], ThinkingContent) and m.content[0].thinking == "15 * 27"


async def test_parallel_interleaved_tool_calls_by_index() -> None:
    _, m = await replay(
        [
            chunk(
                {
                    "tool_calls": [
                        tc(0, "call_a", "get_weather", ""),
                        tc(1, "call_b", "get_time", ""),
                    ]
                }
            ),
            chunk({"tool_calls": [tc(1, args='{"tz": "')]}),
            chunk({"tool_calls": [tc(0, args='{"city": ')]}),
            chunk({"tool_calls": [tc(1, args='CET"}')]}),
            chunk({"tool_calls": [tc(0, args='"Paris"}')]}),
            chunk({}, "tool_calls"),
            "[DONE]",
        ]
    )
    calls = m.tool_calls
    assert [(c.id, c.name, c.arguments) for c in calls] == [
        ("call_a", "get_weather", {"city": "Paris"}),
        ("call_b", "get_time", {"tz": "CET"}),
    ]
    assert m.stop_reason == "toolUse"


async def test_llama_cpp_repeats_name_and_id_in_every_delta() -> None:
    _, m = await replay(
        [
            chunk({"tool_calls": [tc(0, "c1", "final_result", '{"a"')]}),
            chunk({"tool_calls": [tc(0, "c1", "final_result", ": 1")]}),
            chunk({"tool_calls": [tc(0, "c1", "final_result", "}")]}),
            chunk({}, "tool_calls"),
            "[DONE]",
        ]
    )
    assert [(c.id, c.name, c.arguments) for c in m.tool_calls] == [("c1", "final_result", {"a": 1})]


async def test_same_index_new_id_is_a_new_call_and_missing_ids_are_filled() -> None:
    _, m = await replay(
        [
            chunk({"tool_calls": [tc(0, "x1", "f", '{"n": 1}')]}),
            chunk({"tool_calls": [tc(0, "x2", "f", '{"n": 2}')]}),
            chunk({"tool_calls": [tc(None, None, "g", "{}")]}),
            chunk({}, "tool_calls"),
            "[DONE]",
        ]
    )
    assert [(c.id, c.arguments) for c in m.tool_calls][:2] == [("x1", {"n": 1}), ("x2", {"n": 2})]
    # No index and no id: it continues the last call (g's name does not overwrite f).
    assert len(m.tool_calls) == 2
    _, lone = await replay(
        [chunk({"tool_calls": [tc(None, None, "h", "{}")]}), chunk({}, "tool_calls"), "[DONE]"]
    )
    assert lone.tool_calls[0].id.startswith("call_") and lone.tool_calls[0].name == "h"


async def test_empty_and_absent_arguments_are_an_empty_object() -> None:
    _, m = await replay(
        [
            chunk({"tool_calls": [tc(0, "a", "no_args", "")]}),
            chunk({"tool_calls": [tc(1, "b", "null_args", None)]}),
            chunk({}, "tool_calls"),
            "[DONE]",
        ]
    )
    assert [c.arguments for c in m.tool_calls] == [{}, {}]


async def test_arguments_only_complete_at_the_end_or_as_an_object() -> None:
    _, m = await replay(
        [
            chunk({"tool_calls": [tc(0, "a", "f")]}),
            chunk({"tool_calls": [tc(0, args="")]}),
            chunk({"tool_calls": [tc(0, args='{"q": "all at once", "n": [1, 2]}')]}),
            chunk({"tool_calls": [tc(1, "b", "g", {"as": "object"})]}),
            chunk({}, "tool_calls"),
            "[DONE]",
        ]
    )
    assert [c.arguments for c in m.tool_calls] == [
        {"q": "all at once", "n": [1, 2]},
        {"as": "object"},
    ]


async def test_stop_with_tool_calls_becomes_tool_use() -> None:
    _, m = await replay(
        [chunk({"tool_calls": [tc(0, "a", "f", "{}")]}), chunk({}, "stop"), "[DONE]"]
    )
    assert m.stop_reason == "toolUse"


async def test_finish_reasons() -> None:
    _, m = await replay([chunk({"content": "x"}), chunk({}, "length"), "[DONE]"])
    assert m.stop_reason == "length"
    _, f = await replay([chunk({"content": "x"}), chunk({}, "content_filter"), "[DONE]"])
    assert f.stop_reason == "error" and "content_filter" in (f.error_message or "")
    _, z = await replay(
        [chunk({"content": "x"}), chunk({}, "model_context_window_exceeded"), "[DONE]"]
    )
    assert z.stop_reason == "error"
    assert "model_context_window_exceeded" in (z.error_message or "")
    assert z.text == "x"  # partial content is kept
    assert is_context_overflow(z)


# What compatible servers document besides OpenAI's own reasons, and what each one means.
@pytest.mark.parametrize(
    ("reason", "stop"),
    [
        ("eos", "stop"),  # Together: the model's end-of-sequence token
        ("eos_token", "stop"),  # Hugging Face text-generation-inference
        ("stop_sequence", "stop"),
        ("end", "stop"),  # Ollama, LM Studio
        ("end_turn", "stop"),
        ("STOP", "stop"),
        ("complete", "stop"),
        ("max_tokens", "length"),
        ("model_length", "length"),  # Mistral: the context window is full
        ("tool_use", "toolUse"),
        ("tool_call", "toolUse"),
    ],
)
async def test_non_standard_finish_reasons(reason: str, stop: str) -> None:
    events, m = await replay([chunk({"content": "Done."}), chunk({}, reason), "[DONE]"])
    assert events[-1].type == "done"
    assert m.stop_reason == stop and m.text == "Done."


@pytest.mark.parametrize(
    ("reason", "says"),
    [
        ("sensitive", "content filter"),  # z.ai
        ("insufficient_system_resource", "capacity"),  # DeepSeek
        ("network_error", "network error"),  # z.ai
        ("error", "reported an error"),  # OpenRouter
        ("abort", "aborted"),  # vLLM
        ("something_new", "Unhandled stop reason: something_new"),
    ],
)
async def test_failing_finish_reasons_are_errors_naming_them(reason: str, says: str) -> None:
    events, m = await replay([chunk({"content": "Par"}), chunk({}, reason), "[DONE]"])
    assert events[-1].type == "error" and m.text == "Par"
    assert says in (m.error_message or "") and reason in (m.error_message or "")


async def test_a_streamed_refusal_is_delivered_as_text() -> None:
    # OpenAI's wire shape: content stays null while delta.refusal carries the refusal.
    events, m = await replay(
        [
            chunk({"role": "assistant", "content": None, "refusal": None}),
            chunk({"content": None, "refusal": "I can't help"}),
            chunk({"refusal": " with that."}),
            chunk({}, "stop"),
            "[DONE]",
        ]
    )
    assert events[-1].type == "done" and m.stop_reason == "stop"
    assert m.text == "I can't help with that."
    assert [e.delta for e in events if e.type == "text_delta"] == ["I can't help", " with that."]


def test_cached_tokens_are_capped_at_the_prompt() -> None:
    # An xAI model served through Azure: prompt 7, cached 161, total 15.
    u = parse_usage(
        {
            "prompt_tokens": 7,
            "completion_tokens": 8,
            "total_tokens": 15,
            "prompt_tokens_details": {"cached_tokens": 161},
        },
    )
    assert (u.input, u.cache_read, u.output, u.total_tokens) == (0, 7, 8, 15)
    # Reads and writes together never exceed the prompt either.
    both = parse_usage(
        {
            "prompt_tokens": 10,
            "completion_tokens": 1,
            "prompt_tokens_details": {"cached_tokens": 6, "cache_write_tokens": 9},
        },
    )
    assert (both.input, both.cache_read, both.cache_write, both.total_tokens) == (0, 6, 4, 11)


async def test_truncated_stream_is_an_error_with_the_partial_text() -> None:
    _, m = await replay([chunk({"content": "Hello"}), chunk({"content": " wor"})])
    assert m.stop_reason == "error"
    assert "ended before the response was complete" in (m.error_message or "")
    assert m.text == "Hello wor"


async def test_done_without_finish_reason_is_accepted_when_content_arrived() -> None:
    _, m = await replay([chunk({"content": "Hi"}), "[DONE]"])
    assert m.stop_reason == "stop" and m.text == "Hi"
    _, empty = await replay([chunk({"role": "assistant"}), "[DONE]"])
    assert empty.stop_reason == "error" and "without any content" in (empty.error_message or "")


async def test_empty_body_is_a_clear_error() -> None:
    _, m = await replay([])
    assert m.stop_reason == "error"
    assert "empty response" in (m.error_message or "")


async def test_json_syntax_error_in_one_event() -> None:
    _, m = await replay(
        [chunk({"content": "ok"}), '{"choices": [{"delta": {"content": "x"}', chunk({}, "stop")]
    )
    assert m.stop_reason == "error"
    assert "malformed JSON" in (m.error_message or "")
    assert m.text == "ok"


async def test_unknown_fields_keepalives_and_chunks_without_choices_are_ignored() -> None:
    _, m = await replay(
        [
            json.dumps({"object": "chat.completion.chunk", "choices": []}),
            json.dumps({"object": "chat.completion.chunk"}),
            "ping",
            json.dumps({"choices": [None]}),
            json.dumps({"choices": [{"delta": "weird"}]}),
            chunk(
                {"content": "A", "audio": {"x": 1}, "refusal": None},
                obfuscation="zz",
                x_new={"y": 2},
            ),
            json.dumps({"choices": [], "moderation": {"flagged": False}}),
            chunk({}, "stop"),
            "[DONE]",
        ]
    )
    assert m.stop_reason == "stop" and m.text == "A"


async def test_mid_stream_error_chunk_and_event() -> None:
    err = {"code": 400, "message": "Token limit reached", "metadata": {"raw": "upstream said no"}}
    _, m = await replay(
        [
            chunk({"content": "part"}),
            json.dumps(
                {"error": err, "choices": [], "usage": {"prompt_tokens": 4, "completion_tokens": 1}}
            ),
        ]
    )
    assert m.stop_reason == "error"
    assert m.error_message == "Token limit reached (code: 400)\nupstream said no"
    assert m.usage.input == 4 and m.text == "part"
    _, g = await replay(
        [
            chunk({"content": "maybe"}),
            json.dumps(
                {"error": {"message": "Tool choice is required", "code": "tool_use_failed"}}
            ),
        ],
        [None, "error"],
    )
    assert g.error_message == "Tool choice is required (code: tool_use_failed)"


async def test_openrouter_encrypted_reasoning_attached_to_tool_call() -> None:
    detail = {"type": "reasoning.encrypted", "id": "tool_1", "data": "ZW5j", "format": "google"}
    _, m = await replay(
        [
            chunk({"reasoning_details": [detail]}),
            chunk({"tool_calls": [tc(0, "tool_1", "f", "{}")]}),
            chunk({}, "tool_calls"),
            "[DONE]",
        ]
    )
    assert json.loads(m.tool_calls[0].thought_signature or "") == detail
