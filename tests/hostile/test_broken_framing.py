"""Streams whose framing is broken: spliced messages, arguments out of order, orphan parts.

Each is written from the provider's documented wire format, then broken the way a relay, a
retrying proxy or a provider bug breaks it. The stream must end with one clear ``error``
event, keep what came before, and never merge two answers or invent a call.
"""

from __future__ import annotations

from typing import Any

import pytest

from tau.ai.core.types import TextContent, ToolCall
from tests.ai import test_anthropic as anthropic
from tests.ai import test_google as google
from tests.ai.stream_checks import check_grammar
from tests.ai.test_google_streamed_args import END, args, opening, value
from tests.factories import sse


def message_start(message_id: str, input_tokens: int = 20) -> dict[str, Any]:
    event = anthropic.start(input_tokens=input_tokens)
    event["message"]["id"] = message_id
    return event


# --------------------------------------------------------------------------- anthropic


async def test_a_new_message_inside_an_open_one_is_an_error() -> None:
    body = sse(
        message_start("msg_1"),
        anthropic.block(0, {"type": "text", "text": ""}),
        anthropic.delta(0, type="text_delta", text="Let me check."),
        anthropic.stop(0),
        anthropic.block(1, {"type": "tool_use", "id": "toolu_1", "name": "get", "input": {}}),
        anthropic.delta(1, type="input_json_delta", partial_json='{"city": "Par'),
        # A second response starts (a retry spliced in): it repeats the same call, whole.
        message_start("msg_2"),
        anthropic.block(0, {"type": "text", "text": ""}),
        anthropic.delta(0, type="text_delta", text="Let me check."),
        anthropic.stop(0),
        anthropic.block(1, {"type": "tool_use", "id": "toolu_1", "name": "get", "input": {}}),
        anthropic.delta(1, type="input_json_delta", partial_json='{"city": "Paris"}'),
        anthropic.stop(1),
        *anthropic.end("tool_use"),
    )
    events, message, _ = await anthropic.run_stream(body)
    check_grammar(events, message)
    assert events[-1].type == "error" and message.stop_reason == "error"
    assert "'msg_2'" in (message.error_message or "")
    assert "'msg_1'" in (message.error_message or "")
    # The partial content of the first message is kept, nothing of the second is merged in,
    # and the truncated call was never delivered as finished.
    assert message.content == [
        TextContent("Let me check."),
        ToolCall("toolu_1", "get", {"city": "Par"}),
    ]
    assert not [e for e in events if e.type == "toolcall_end"]


async def test_the_same_message_announced_again_is_harmless() -> None:
    body = sse(
        message_start("msg_1", input_tokens=20),
        anthropic.block(0, {"type": "text", "text": ""}),
        anthropic.delta(0, type="text_delta", text="Hello"),
        message_start("msg_1", input_tokens=999),
        anthropic.delta(0, type="text_delta", text=" there"),
        anthropic.stop(0),
        *anthropic.end("end_turn", output=7),
    )
    events, message, _ = await anthropic.run_stream(body)
    check_grammar(events, message)
    assert events[-1].type == "done" and message.text == "Hello there"
    assert (message.usage.input, message.usage.output) == (20, 7)
    assert sum(e.type == "start" for e in events) == 1


# --------------------------------------------------------------------------- gemini


async def gemini(*parts: dict[str, Any], finish: str = "STOP") -> tuple[list[Any], Any]:
    body = [
        google.chunk(part, finish=finish if i == len(parts) - 1 else None)
        for i, part in enumerate(parts)
    ]
    events, message, _ = await google.run(body)
    return events, message


@pytest.mark.parametrize(
    ("values", "problem"),
    [
        (
            [
                value("$.a.x", numberValue=1),
                value("$.b", numberValue=2),
                value("$.a.y", numberValue=3),
            ],
            "already written",
        ),
        ([value("$.l[0]", numberValue=1), value("$.l[5]", numberValue=2)], "next index is 1"),
        ([value("$..a", numberValue=1)], "unsupported JSON path"),
        ([value("$.a", stringValue=7)], "not a string"),
        ([value("$", stringValue="x")], "replace the arguments object"),
    ],
)
async def test_gemini_arguments_that_cannot_be_built(values: list[Any], problem: str) -> None:
    events, message = await gemini(opening("plan", id="p1"), args(*values), END)
    check_grammar(events, message)
    assert events[-1].type == "error"
    error = message.error_message or ""
    assert "tool call 'plan' (id 'p1')" in error and problem in error
    assert not [e for e in events if e.type == "toolcall_end"]


async def test_gemini_arguments_without_a_call_never_make_one() -> None:
    events, message = await gemini({"text": "Hi."}, args(value("$.city", stringValue="Paris")), END)
    check_grammar(events, message)
    assert events[-1].type == "error"
    assert "without a call to belong to" in (message.error_message or "")
    assert message.tool_calls == [] and message.text == "Hi."


async def test_gemini_stray_end_markers_are_ignored() -> None:
    events, message = await gemini({"functionCall": {"name": "plan", "args": {"a": 1}}}, END, END)
    assert events[-1].type == "done"
    assert [c.arguments for c in message.tool_calls] == [{"a": 1}]


async def test_gemini_new_call_while_a_string_streams() -> None:
    events, message = await gemini(
        opening("plan", id="p1"),
        args(value("$.note", stringValue="to be", willContinue=True)),
        opening("plan", id="p2"),
        args(value("$.note", stringValue="other"), more=False),
    )
    check_grammar(events, message)
    assert events[-1].type == "error"
    assert "began while its argument $.note was still streaming" in (message.error_message or "")
    assert len(message.tool_calls) == 1
