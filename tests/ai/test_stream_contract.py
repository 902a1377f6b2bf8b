"""The stream contract of one call, on the faux provider: order, identity, deltas, terminals."""

from __future__ import annotations

import json

import pytest

from tau.ai import (
    AssistantMessageEvent,
    Context,
    TextContent,
    ThinkingContent,
    ToolCall,
    UserMessage,
    stream,
)
from tau.ai.providers.faux import FauxResponse, faux_model, text, thinking, tool_call

from .stream_checks import check_grammar

CTX = Context([UserMessage("go")])


async def _collect(response: FauxResponse) -> list[AssistantMessageEvent]:
    s = stream(faux_model([response]), CTX)
    return [e async for e in s]


@pytest.mark.parametrize("chunk_size", [0, 1, 3, 1000])
async def test_mixed_blocks_grammar_and_content(chunk_size: int) -> None:
    response = FauxResponse(
        [
            thinking('Let me think about "quotes" and ünïcode', signature="sig-1"),
            text("Calling two tools."),
            tool_call("read", {"path": "a.txt", "lines": [1, 2]}, id="c1"),
            tool_call("write", {"path": "b.txt", "text": "x\ny", "nested": {"k": None}}, id="c2"),
        ],
        chunk_size=chunk_size,
    )
    events = await _collect(response)
    check_grammar(events)
    final = events[-1]
    assert final.type == "done" and final.reason == "toolUse"
    message = final.message
    kinds = [type(b) for b in message.content]
    assert kinds == [ThinkingContent, TextContent, ToolCall, ToolCall]

    deltas: dict[int, str] = {}
    for e in events:
        if e.type.endswith("_delta"):
            deltas[e.content_index] = deltas.get(e.content_index, "") + e.delta  # type: ignore[union-attr]
            if e.type == "toolcall_delta":
                # Arguments are a dict at every step of streaming, never None or a string.
                assert isinstance(e.partial.content[e.content_index].arguments, dict)  # type: ignore[union-attr]
    assert deltas[0] == 'Let me think about "quotes" and ünïcode'
    assert deltas[1] == "Calling two tools."
    assert json.loads(deltas[2]) == {"path": "a.txt", "lines": [1, 2]}
    assert json.loads(deltas[3]) == {"path": "b.txt", "text": "x\ny", "nested": {"k": None}}

    ends = {e.content_index: e for e in events if e.type.endswith("_end")}  # type: ignore[union-attr]
    assert ends[0].content == message.content[0].thinking  # type: ignore[union-attr]
    assert ends[1].content == "Calling two tools."  # type: ignore[union-attr]
    assert ends[2].tool_call is message.content[2]  # type: ignore[union-attr]
    assert message.content[2].arguments == {"path": "a.txt", "lines": [1, 2]}  # type: ignore[union-attr]
    assert message.content[0].thinking_signature == "sig-1"  # type: ignore[union-attr]


async def test_partial_is_one_object_and_is_the_final_message() -> None:
    s = stream(faux_model([FauxResponse([thinking("hm"), text("hello world")], chunk_size=2)]), CTX)
    events = [e async for e in s]
    result = await s.result()
    partials = {id(e.partial) for e in events if hasattr(e, "partial")}
    assert partials == {id(result)}
    assert events[-1].message is result  # type: ignore[union-attr]
    assert result.text == "hello world"


async def test_partial_grows_while_streaming() -> None:
    s = stream(faux_model([FauxResponse([text("abcdef")], chunk_size=2)]), CTX)
    seen = [
        e.partial.content[0].text  # type: ignore[union-attr]
        async for e in s
        if e.type == "text_delta"
    ]
    assert seen == ["ab", "abcd", "abcdef"]


async def test_text_only_stop() -> None:
    events = await _collect(FauxResponse(["plain string"]))
    check_grammar(events)
    assert [e.type for e in events] == ["start", "text_start"] + ["text_delta"] * 3 + [
        "text_end",
        "done",
    ]
    assert events[-1].reason == "stop"  # type: ignore[union-attr]


async def test_empty_response_is_start_then_done() -> None:
    events = await _collect(FauxResponse([]))
    assert [e.type for e in events] == ["start", "done"]


async def test_scripted_error_keeps_partial_content() -> None:
    events = await _collect(FauxResponse([text("partial answer")], error="upstream exploded"))
    check_grammar(events)
    final = events[-1]
    assert final.type == "error" and final.reason == "error"
    assert final.error.error_message == "upstream exploded"
    assert final.error.stop_reason == "error"
    assert final.error.text == "partial answer"
    assert final.error.usage.output == 4  # usage so far travels with the error


async def test_length_stop_reason() -> None:
    events = await _collect(FauxResponse([text("cut")], stop_reason="length"))
    assert events[-1].type == "done" and events[-1].reason == "length"  # type: ignore[union-attr]


async def test_exhausted_script_is_an_error_event_not_an_exception() -> None:
    model = faux_model([])
    s = stream(model, CTX)
    events = [e async for e in s]
    assert [e.type for e in events] == ["start", "error"]
    assert "no scripted response left" in (events[-1].error.error_message or "")  # type: ignore[union-attr]


async def test_awaiting_the_stream_gives_the_result() -> None:
    message = await stream(faux_model([FauxResponse(["x"])]), CTX)
    assert message.text == "x"


def test_stream_outside_an_event_loop_says_what_to_use() -> None:
    with pytest.raises(RuntimeError, match=r"complete_sync\(\) or tau.ai.stream_sync\(\)"):
        stream(faux_model([FauxResponse(["x"])]), CTX)
