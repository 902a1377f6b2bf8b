"""Arbitrary (also nonsensical) event sequences never break the stream contract: the Responses
and Mistral processors end every stream with exactly one ``done`` or ``error`` and a valid
block grammar, whatever arrives."""

from __future__ import annotations

import asyncio
from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tau.ai.lookup.catalog import get_model
from tau.ai.providers.mistral.decoder import MistralDecoder
from tau.ai.providers.openai_responses.decoder import OpenAIResponsesDecoder
from tau.ai.streaming.builder import MessageBuilder, ProviderError
from tau.ai.streaming.launch import launch_stream
from tests.ai.stream_checks import check_grammar

MODEL = get_model("openai", "gpt-5-mini")
assert MODEL is not None

junk = st.one_of(st.none(), st.integers(), st.text(max_size=5), st.lists(st.integers(), max_size=2))
index = st.one_of(st.integers(0, 2), junk)
item_type = st.sampled_from(["message", "reasoning", "function_call", "web_search_call", None, 3])
items = st.fixed_dictionaries(
    {"type": item_type},
    optional={
        "id": st.one_of(st.text(max_size=4), junk),
        "call_id": st.one_of(st.text(max_size=4), junk),
        "name": st.one_of(st.text(max_size=4), junk),
        "arguments": st.one_of(st.sampled_from(['{"a":1}', "{", ""]), junk),
        "summary": st.one_of(
            st.lists(st.fixed_dictionaries({"text": st.text(max_size=3)}), max_size=2), junk
        ),
        "content": st.one_of(
            st.lists(
                st.fixed_dictionaries(
                    {
                        "type": st.sampled_from(["output_text", "refusal", "reasoning_text"]),
                        "text": st.text(max_size=3),
                    }
                ),
                max_size=2,
            ),
            junk,
        ),
        "phase": st.one_of(st.sampled_from(["commentary", "final_answer"]), junk),
    },
)
responses = st.fixed_dictionaries(
    {"status": st.sampled_from(["completed", "incomplete", "failed", "cancelled", None, 1])},
    optional={
        "usage": st.one_of(
            st.fixed_dictionaries(
                {"input_tokens": st.integers(0, 9), "output_tokens": st.integers(0, 9)},
                optional={
                    "input_tokens_details": st.fixed_dictionaries(
                        {"cached_tokens": st.integers(0, 9)}
                    )
                },
            ),
            junk,
        ),
        "error": st.one_of(
            st.fixed_dictionaries({"code": st.text(max_size=3), "message": st.text(max_size=3)}),
            junk,
        ),
        "service_tier": st.one_of(st.sampled_from(["flex", "priority"]), junk),
    },
)
EVENT_TYPES = [
    "response.output_item.added",
    "response.output_item.done",
    "response.reasoning_summary_part.added",
    "response.reasoning_summary_text.delta",
    "response.reasoning_text.delta",
    "response.content_part.added",
    "response.output_text.delta",
    "response.refusal.delta",
    "response.function_call_arguments.delta",
    "response.function_call_arguments.done",
    "response.completed",
    "response.incomplete",
    "response.failed",
    "error",
    "response.unknown",
]
events = st.fixed_dictionaries(
    {"type": st.sampled_from(EVENT_TYPES)},
    optional={
        "output_index": index,
        "item_id": st.one_of(st.text(max_size=3), junk),
        "item": st.one_of(items, junk),
        "delta": st.one_of(st.text(max_size=4), junk),
        "arguments": st.one_of(st.sampled_from(['{"a":1}', "{", ""]), junk),
        "part": st.one_of(
            st.fixed_dictionaries(
                {"type": st.sampled_from(["output_text", "reasoning_text", "refusal"])}
            ),
            junk,
        ),
        "response": st.one_of(responses, junk),
        "code": junk,
        "message": junk,
    },
)


def run_sync(processor_type: type[Any], sequence: list[Any]) -> None:
    escaped: list[BaseException] = []

    async def adapter(builder: MessageBuilder) -> None:
        processor = processor_type(builder)
        try:
            for event in sequence:
                processor.apply(event)
            processor.finish()
        except ProviderError:
            raise
        except Exception as exc:  # anything else is a bug: a traceback where a message belongs
            escaped.append(exc)
            raise

    async def main() -> None:
        stream = launch_stream(MODEL, {}, adapter)
        seen = [e async for e in stream]
        check_grammar(seen)
        message = await stream.result()
        assert not escaped, escaped
        if message.stop_reason == "error":
            assert message.error_message
        for block in message.content:
            # every block is readable and well-typed at the end
            value = getattr(block, "text", None) or getattr(block, "thinking", None)
            assert value is None or isinstance(value, str)

    asyncio.run(main())


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(events, max_size=12))
@example(  # once found at random: a done item whose text the deltas never carried
    [
        {
            "type": "response.output_item.done",
            "output_index": 0,
            "item": {"type": "reasoning", "id": "", "content": [], "summary": [{"text": ""}] * 2},
        }
    ]
)
def test_responses_processor_survives_anything(sequence: list[dict[str, Any]]) -> None:
    run_sync(OpenAIResponsesDecoder, sequence)


tool_calls = st.lists(
    st.fixed_dictionaries(
        {},
        optional={
            "id": st.one_of(st.sampled_from(["abcDEF123", "null"]), junk),
            "index": index,
            "function": st.one_of(
                st.fixed_dictionaries(
                    {},
                    optional={
                        "name": st.one_of(st.text(max_size=3), junk),
                        "arguments": st.one_of(
                            st.sampled_from(['{"a":', "1}"]),
                            st.dictionaries(st.text(max_size=2), st.integers(), max_size=2),
                            junk,
                        ),
                    },
                ),
                junk,
            ),
        },
    ),
    max_size=2,
)
content = st.one_of(
    st.text(max_size=4),
    st.lists(
        st.one_of(
            st.fixed_dictionaries(
                {"type": st.just("text"), "text": st.one_of(st.text(max_size=3), junk)}
            ),
            st.fixed_dictionaries(
                {
                    "type": st.just("thinking"),
                    "thinking": st.one_of(
                        st.lists(
                            st.fixed_dictionaries(
                                {"type": st.just("text"), "text": st.text(max_size=3)}
                            ),
                            max_size=2,
                        ),
                        junk,
                    ),
                }
            ),
            junk,
        ),
        max_size=2,
    ),
    junk,
)
chunks = st.fixed_dictionaries(
    {},
    optional={
        "choices": st.one_of(
            st.lists(
                st.fixed_dictionaries(
                    {},
                    optional={
                        "delta": st.one_of(
                            st.fixed_dictionaries(
                                {},
                                optional={
                                    "content": content,
                                    "tool_calls": st.one_of(tool_calls, junk),
                                },
                            ),
                            junk,
                        ),
                        "finish_reason": st.one_of(
                            st.sampled_from(["stop", "length", "tool_calls", "error"]), junk
                        ),
                    },
                ),
                max_size=1,
            ),
            junk,
        ),
        "usage": st.one_of(
            st.fixed_dictionaries(
                {"prompt_tokens": st.integers(0, 9), "completion_tokens": st.integers(0, 9)}
            ),
            junk,
        ),
    },
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(chunks, max_size=10))
def test_mistral_processor_survives_anything(sequence: list[dict[str, Any]]) -> None:
    run_sync(MistralDecoder, sequence)
