"""A tool call whose arguments never closed is never delivered as a finished call.

The rule lives in :class:`tau.ai.streaming.builder.MessageBuilder`, so it holds for every adapter: a
call the wire format never closed (no ``content_block_stop``, no ``output_item.done``, no
``contentBlockStop``, a stream cut inside it), or one whose JSON text stops inside a value
(a token limit hit mid-call), gets no ``toolcall_end``, and the stream ends with an ``error``
that names it, the partial content kept. Each adapter is fed a stream written from its
provider's documented wire format.
"""

from __future__ import annotations

import json
from typing import Any

from tau.ai import AssistantMessage
from tau.ai.adapters import launch_stream
from tau.ai.core.types import TextContent, ToolCall
from tau.ai.streaming.builder import MessageBuilder
from tests.ai import test_anthropic as anthropic
from tests.ai import test_bedrock as bedrock
from tests.ai import test_google as google
from tests.ai import test_mistral as mistral
from tests.ai import test_openai_completions_stream as chat
from tests.ai import test_responses_stream as responses
from tests.ai.stream_checks import check_grammar
from tests.ai.test_google_streamed_args import END, args, opening, value
from tests.factories import bedrock_event, sse


def assert_unfinished(events: list[Any], message: AssistantMessage, *names: str) -> None:
    """The stream ended with an error naming each call, and none of them got an end event."""
    check_grammar(events, message)
    assert events[-1].type == "error"
    assert message.stop_reason == "error"
    assert "arguments never closed" in (message.error_message or "")
    for name in names:
        assert repr(name) in (message.error_message or "")
    ended = {e.tool_call.name for e in events if e.type == "toolcall_end"}
    assert not ended & set(names)


# --------------------------------------------------------------------------- the builder rule


async def build(steps: Any) -> tuple[list[Any], AssistantMessage]:
    async def run(builder: MessageBuilder) -> None:
        steps(builder)

    s = launch_stream(google.gemini(), {}, run)
    events = [e async for e in s]
    return events, await s.result()


async def test_a_call_never_closed_is_an_error_naming_it() -> None:
    def steps(b: MessageBuilder) -> None:
        b.text_delta(b.open_text(), "Writing.")
        index = b.open_tool_call("c1", "write")
        b.tool_call_delta(index, '{"path": "a.txt"}')
        b.message.stop_reason = "toolUse"

    events, message = await build(steps)
    assert_unfinished(events, message, "write")
    assert "(id 'c1')" in (message.error_message or "")
    assert message.content == [TextContent("Writing."), ToolCall("c1", "write", {"path": "a.txt"})]


async def test_json_cut_inside_a_value_leaves_the_call_unfinished() -> None:
    def steps(b: MessageBuilder) -> None:
        index = b.open_tool_call("c1", "write")
        b.tool_call_delta(index, '{"path": "a.txt", "content": "hel')
        b.close_tool_call(index)
        b.close_tool_call(index)  # a second close changes nothing
        b.message.stop_reason = "length"

    events, message = await build(steps)
    assert_unfinished(events, message, "write")
    assert "stop reason 'length'" in (message.error_message or "")
    assert message.tool_calls[0].arguments == {"path": "a.txt", "content": "hel"}


async def test_complete_malformed_and_explicit_arguments_are_finished() -> None:
    def steps(b: MessageBuilder) -> None:
        whole = b.open_tool_call("a", "f")
        b.tool_call_delta(whole, '{"x": 1}')
        b.close_tool_call(whole)
        # Malformed is not cut: the model closed it, badly; validation will say so.
        malformed = b.open_tool_call("b", "f")
        b.tool_call_delta(malformed, '{"x": 1}}')
        b.close_tool_call(malformed)
        given = b.open_tool_call("c", "f")
        b.tool_call_delta(given, '{"x": ')
        b.close_tool_call(given, {"x": 2})
        b.message.stop_reason = "toolUse"

    events, message = await build(steps)
    check_grammar(events, message)
    assert events[-1].type == "done"
    assert [c.arguments for c in message.tool_calls] == [{"x": 1}, {"x": 1}, {"x": 2}]


async def test_a_provider_error_keeps_its_own_message() -> None:
    def steps(b: MessageBuilder) -> None:
        b.open_tool_call("a", "f")
        b.message.stop_reason = "error"
        b.message.error_message = "overloaded"

    _, message = await build(steps)
    assert message.error_message == "overloaded"


# --------------------------------------------------------------------------- anthropic


async def test_anthropic_tool_use_without_content_block_stop() -> None:
    body = sse(
        anthropic.start(),
        anthropic.block(0, {"type": "tool_use", "id": "toolu_1", "name": "write", "input": {}}),
        anthropic.delta(0, type="input_json_delta", partial_json='{"path": "a.txt"}'),
        *anthropic.end("tool_use"),
    )
    events, message, _ = await anthropic.run_stream(body)
    assert_unfinished(events, message, "write")
    assert message.tool_calls == [ToolCall("toolu_1", "write", {"path": "a.txt"})]


async def test_anthropic_max_tokens_inside_the_arguments() -> None:
    body = sse(
        anthropic.start(),
        anthropic.block(0, {"type": "text", "text": "Saving."}),
        anthropic.stop(0),
        anthropic.block(1, {"type": "tool_use", "id": "toolu_2", "name": "write", "input": {}}),
        anthropic.delta(1, type="input_json_delta", partial_json='{"path": "a.txt", "cont'),
        anthropic.stop(1),
        *anthropic.end("max_tokens"),
    )
    events, message, _ = await anthropic.run_stream(body)
    assert_unfinished(events, message, "write")
    assert message.text == "Saving."


async def test_anthropic_stream_cut_inside_a_call() -> None:
    body = sse(
        anthropic.start(),
        anthropic.block(0, {"type": "tool_use", "id": "toolu_3", "name": "write", "input": {}}),
        anthropic.delta(0, type="input_json_delta", partial_json='{"path": "a'),
    )
    events, message, _ = await anthropic.run_stream(body)
    check_grammar(events, message)
    assert events[-1].type == "error" and "message_stop" in (message.error_message or "")
    assert not [e for e in events if e.type == "toolcall_end"]


# --------------------------------------------------------------------------- chat completions


async def test_chat_completions_length_inside_the_arguments() -> None:
    events, message = await chat.replay(
        [
            chat.chunk({"tool_calls": [chat.tc(0, "call_1", "write", '{"path": "a.txt", "con')]}),
            chat.chunk({}, "length"),
            "[DONE]",
        ]
    )
    assert_unfinished(events, message, "write")


async def test_chat_completions_calls_end_with_the_finish_reason() -> None:
    events, message = await chat.replay(
        [
            chat.chunk({"tool_calls": [chat.tc(0, "call_1", "write", '{"path": "a.txt"}')]}),
            chat.chunk({}, "tool_calls"),
            "[DONE]",
        ]
    )
    assert events[-1].type == "done" and message.stop_reason == "toolUse"


async def test_chat_completions_cut_inside_a_call() -> None:
    events, message = await chat.replay(
        [chat.chunk({"tool_calls": [chat.tc(0, "call_1", "write", '{"path": "a.txt"}')]})]
    )
    assert events[-1].type == "error" and "no finish_reason" in (message.error_message or "")
    assert not [e for e in events if e.type == "toolcall_end"]


# --------------------------------------------------------------------------- responses


async def test_responses_call_marked_incomplete() -> None:
    done = responses.fc_done(0, "call_1", "fc_1", "write", '{"path": "a.txt", "c')
    done["item"]["status"] = "incomplete"
    events, message = await responses.run(
        [
            responses.fc_added(0, "call_1", "fc_1", "write"),
            {
                "type": "response.function_call_arguments.delta",
                "output_index": 0,
                "item_id": "fc_1",
                "delta": '{"path": "a.txt", "c',
            },
            done,
            {"type": "response.incomplete", "response": {"status": "incomplete"}},
        ]
    )
    assert_unfinished(events, message, "write")


async def test_responses_call_never_done() -> None:
    events, message = await responses.run(
        [
            responses.fc_added(0, "call_1", "fc_1", "write"),
            {
                "type": "response.function_call_arguments.delta",
                "output_index": 0,
                "item_id": "fc_1",
                "delta": '{"path": "a.txt"}',
            },
            responses.completed(),
        ]
    )
    assert_unfinished(events, message, "write")


async def test_responses_arguments_done_is_enough() -> None:
    events, message = await responses.run(
        [
            responses.fc_added(0, "call_1", "fc_1", "write"),
            {
                "type": "response.function_call_arguments.done",
                "output_index": 0,
                "item_id": "fc_1",
                "arguments": '{"path": "a.txt"}',
            },
            responses.completed(),
        ]
    )
    check_grammar(events, message)
    assert events[-1].type == "done" and message.stop_reason == "toolUse"
    assert message.tool_calls[0].arguments == {"path": "a.txt"}


# --------------------------------------------------------------------------- mistral


async def test_mistral_cut_inside_a_call_gets_no_end_event() -> None:
    call = {"id": "abcdefghi", "index": 0, "function": {"name": "write", "arguments": '{"p'}}
    events, message = await mistral.run([mistral.chunk({"tool_calls": [call]})])
    check_grammar(events, message)
    assert events[-1].type == "error" and "finish_reason" in (message.error_message or "")
    assert not [e for e in events if e.type == "toolcall_end"]


# --------------------------------------------------------------------------- bedrock


async def test_bedrock_tool_use_without_content_block_stop() -> None:
    start = {"toolUse": {"toolUseId": "tu_1", "name": "write"}}
    events, message, _ = await bedrock.run(
        [
            bedrock_event("messageStart", {"role": "assistant"}),
            bedrock_event("contentBlockStart", {"contentBlockIndex": 0, "start": start}),
            bedrock_event(
                "contentBlockDelta",
                {"contentBlockIndex": 0, "delta": {"toolUse": {"input": '{"path": "a.txt"}'}}},
            ),
            *bedrock.stop("tool_use"),
        ]
    )
    assert_unfinished(events, message, "write")


# --------------------------------------------------------------------------- gemini


def gemini_body(*parts: dict[str, Any], finish: str | None = None) -> list[bytes]:
    return [
        google.chunk(part, finish=finish if i == len(parts) - 1 else None)
        for i, part in enumerate(parts)
    ]


async def test_gemini_max_tokens_while_a_call_streams() -> None:
    events, message, _ = await google.run(
        gemini_body(
            opening("write", id="g1"),
            args(value("$.path", stringValue="a.txt")),
            finish="MAX_TOKENS",
        )
    )
    assert_unfinished(events, message, "write")
    assert "stop reason 'length'" in (message.error_message or "")
    assert message.tool_calls[0].arguments == {"path": "a.txt"}


async def test_gemini_answer_ends_while_a_string_argument_streams() -> None:
    events, message, _ = await google.run(
        gemini_body(
            opening("write", id="g1"),
            args(value("$.content", stringValue="hel", willContinue=True)),
            finish="STOP",
        )
    )
    assert_unfinished(events, message, "write")
    assert message.tool_calls[0].arguments == {"content": "hel"}


async def test_gemini_stream_cut_while_a_call_streams() -> None:
    events, message, _ = await google.run(
        gemini_body(opening("write", id="g1"), args(value("$.path", stringValue="a")))
    )
    check_grammar(events, message)
    assert events[-1].type == "error" and "finish reason" in (message.error_message or "")
    assert not [e for e in events if e.type == "toolcall_end"]


async def test_gemini_terminated_call_before_a_cut_is_kept_finished() -> None:
    events, message, _ = await google.run(
        gemini_body(opening("write", id="g1"), args(value("$.path", stringValue="a")), END)
    )
    assert events[-1].type == "error" and "finish reason" in (message.error_message or "")
    assert [e.tool_call.arguments for e in events if e.type == "toolcall_end"] == [{"path": "a"}]
    assert json.loads("".join(e.delta for e in events if e.type == "toolcall_delta")) == {
        "path": "a"
    }
