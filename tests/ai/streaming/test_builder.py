"""MessageBuilder: blocks addressed by the provider's key, the rules every protocol shares,
and the cost computed once when the stream ends."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tau.ai import AssistantMessage, AssistantMessageEvent
from tau.ai.adapters import MessageBuilder, launch_stream
from tau.ai.core.types import Model, ModelCost, TextContent, ThinkingContent, ToolCall
from tests.ai.stream_checks import check_grammar

MODEL = Model("m", "m", "x", "p", "http://h", cost=ModelCost(input=2, output=10))


async def build(steps: Callable[[MessageBuilder], Any]) -> tuple[list[str], AssistantMessage]:
    async def run(builder: MessageBuilder) -> None:
        steps(builder)

    s = launch_stream(MODEL, {}, run)
    events: list[AssistantMessageEvent] = [e async for e in s]
    message = await s.result()
    check_grammar(events, message)
    return [_show(e) for e in events[1:-1]], message


def _show(event: AssistantMessageEvent) -> str:
    index = getattr(event, "content_index", "")
    return f"{event.type}{index}"


async def test_sequential_text_and_thinking_switch_under_none() -> None:
    def steps(b: MessageBuilder) -> None:
        b.thinking(None, "hm", signature="reasoning_content")
        b.thinking(None, "m")
        b.text(None, "A")
        b.text(None, "B")
        b.thinking(None, "again")

    events, message = await build(steps)
    assert message.content == [
        ThinkingContent("hmm", "reasoning_content"),
        TextContent("AB"),
        ThinkingContent("again"),
    ]
    assert events == [
        "thinking_start0",
        "thinking_delta0",
        "thinking_delta0",
        "thinking_end0",
        "text_start1",
        "text_delta1",
        "text_delta1",
        "text_end1",
        "thinking_start2",
        "thinking_delta2",
        "thinking_end2",
    ]


async def test_opening_a_call_closes_the_current_block_and_keys_interleave() -> None:
    def steps(b: MessageBuilder) -> None:
        b.text(None, "Let me look.")
        b.tool_call(0, id="a", name="f", args_delta='{"x"')
        b.tool_call(1, id="b", name="g", args_delta="{}")
        b.tool_call(0, args_delta=": 1}")
        b.text(None, "more")  # text after the calls: a new block, the calls stay open
        b.close(None)
        b.close_calls()
        b.message.stop_reason = "toolUse"

    events, message = await build(steps)
    assert message.content == [
        TextContent("Let me look."),
        ToolCall("a", "f", {"x": 1}),
        ToolCall("b", "g", {}),
        TextContent("more"),
    ]
    assert events[2] == "text_end0" and events[3] == "toolcall_start1"
    assert events[-3:] == ["text_end3", "toolcall_end1", "toolcall_end2"]


async def test_start_false_only_extends_open_blocks() -> None:
    def steps(b: MessageBuilder) -> None:
        assert b.text(7, "never opened", start=False) is None
        assert b.text(1, "") == 0  # opened without a delta
        assert b.thinking(1, "wrong kind", start=False) is None
        assert b.text(1, "ok", start=False) == 0
        assert b.tool_call(2, args_delta="{}", start=False) is None
        b.close(1)
        assert b.text(1, "again", start=False) is None

    events, message = await build(steps)
    assert message.content == [TextContent("ok")]
    assert events == ["text_start0", "text_delta0", "text_end0"]


async def test_a_key_that_changes_kind_names_a_new_block() -> None:
    def steps(b: MessageBuilder) -> None:
        b.thinking("item", "think")
        b.text("item", "say")
        assert isinstance(b.block("item"), TextContent)
        b.close("item")
        assert b.block("item") is None

    events, message = await build(steps)
    assert message.content == [ThinkingContent("think"), TextContent("say")]
    assert events.index("thinking_end0") < events.index("text_start1")


async def test_signatures_are_set_when_a_block_opens() -> None:
    def steps(b: MessageBuilder) -> None:
        b.text(None, "a", signature="s1")
        b.text(None, "b", signature="ignored: the block is open")
        b.thinking("t", "x", signature="t1", redacted=True)
        block = b.block("t")
        assert isinstance(block, ThinkingContent)
        block.thinking_signature = "t2"

    _, message = await build(steps)
    assert message.content == [TextContent("ab", "s1"), ThinkingContent("x", "t2", redacted=True)]


async def test_a_whole_call_and_closing_with_final_arguments() -> None:
    def steps(b: MessageBuilder) -> None:
        b.tool_call("whole", id="w", name="f", arguments={"a": [1]})
        b.tool_call(3, id="c", name="g", args_delta='{"partial": ')
        b.close(3, {"final": True})
        b.message.stop_reason = "toolUse"

    events, message = await build(steps)
    assert message.content == [ToolCall("w", "f", {"a": [1]}), ToolCall("c", "g", {"final": True})]
    assert events[:3] == ["toolcall_start0", "toolcall_delta0", "toolcall_end0"]


async def test_a_call_cut_inside_its_arguments_stays_unfinished() -> None:
    def steps(b: MessageBuilder) -> None:
        b.tool_call(0, id="c", name="write", args_delta='{"path": "a')
        b.close_calls()
        b.message.stop_reason = "toolUse"

    events, message = await build(steps)
    assert "toolcall_end0" not in events
    assert message.stop_reason == "error"
    assert "'write' (id 'c')" in (message.error_message or "")


@pytest.mark.parametrize("fails", [False, True])
async def test_cost_is_computed_once_at_the_end(fails: bool) -> None:
    def steps(b: MessageBuilder) -> None:
        b.message.usage.input = 1_000_000
        b.text(None, "x")
        b.message.usage.output = 100_000
        b.cost_multiplier = 0.5
        if fails:
            raise RuntimeError("boom")

    _, message = await build(steps)
    assert message.stop_reason == ("error" if fails else "stop")
    assert message.usage.cost.input == 1.0 and message.usage.cost.output == 0.5
    assert message.usage.cost.total == 1.5


async def test_cost_given_upstream_is_kept() -> None:
    def steps(b: MessageBuilder) -> None:
        b.cost_multiplier = None
        b.message.usage.input = 1_000_000
        b.message.usage.cost.total = 42.0
        b.text(None, "x")

    _, message = await build(steps)
    assert message.usage.cost.total == 42.0 and message.usage.cost.input == 0.0
