"""Failures never hang a run: every callback raising, a broken stream function, a failing
sink, and abort during streaming and during tools."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tau.agent import (
    AfterToolCallResult,
    AgentContext,
    AgentEvent,
    AgentLoopConfig,
    AgentTool,
    AgentToolResult,
    ToolExecutionEndEvent,
    TurnEndEvent,
    agent_loop,
    run_agent_loop,
)
from tau.ai import AbortController, AbortedError, AssistantMessage, TextContent, UserMessage
from tau.ai.providers.faux import FauxResponse, faux_calls, faux_model, text, tool_call
from tau.ai.streaming.event_stream import AssistantMessageEventStream

from .helpers import check_grammar, collect, echo_tool, hanging_stream_fn, kinds, result_text


def boom(*args: Any, **kwargs: Any) -> Any:
    raise ValueError("callback exploded")


async def aboom(*args: Any, **kwargs: Any) -> Any:
    await asyncio.sleep(0)
    raise ValueError("async callback exploded")


def tool_turn_model() -> Any:
    return faux_model(
        [
            FauxResponse([tool_call("echo", {"value": "a"}, id="A")]),
            FauxResponse([text("after tools")]),
        ]
    )


async def run_with(**kwargs: Any) -> tuple[list[AgentEvent], list[Any]]:
    model = kwargs.pop("model", None) or tool_turn_model()
    tools = kwargs.pop("tools", None) or [echo_tool()]
    stream = agent_loop(
        [UserMessage("go")], AgentContext("", [], tools), AgentLoopConfig(model=model, **kwargs)
    )
    events = await collect(stream)
    check_grammar(events)
    return events, await asyncio.wait_for(stream.result(), 1)


def last_assistant(messages: list[Any]) -> AssistantMessage:
    message = messages[-1]
    assert isinstance(message, AssistantMessage)
    return message


@pytest.mark.parametrize("fn", [boom, aboom], ids=["sync", "async"])
@pytest.mark.parametrize(
    "callback", ["convert_to_llm", "transform_context", "get_api_key", "stream_fn"]
)
async def test_llm_call_callbacks_raising_end_the_turn_with_an_error_message(
    callback: str, fn: Any
) -> None:
    events, messages = await run_with(**{callback: fn})
    error = last_assistant(messages)
    assert error.stop_reason == "error"
    assert error.error_message in ("callback exploded", "async callback exploded")
    assert [m.role for m in messages] == ["user", "assistant"]
    assert kinds(events)[-4:] == ["message_start", "message_end", "turn_end", "agent_end"]
    turn_end = next(e for e in events if isinstance(e, TurnEndEvent))
    assert turn_end.message is error


@pytest.mark.parametrize("fn", [boom, aboom], ids=["sync", "async"])
async def test_steering_poll_raising_at_start_ends_the_run(fn: Any) -> None:
    events, messages = await run_with(get_steering_messages=fn)
    error = last_assistant(messages)
    assert error.stop_reason == "error" and "exploded" in (error.error_message or "")
    assert kinds(events)[:2] == ["agent_start", "turn_start"]


async def test_steering_poll_raising_mid_batch_lets_every_call_get_a_result() -> None:
    polls = 0

    def steering() -> list[Any]:
        nonlocal polls
        polls += 1
        if polls == 2:  # the poll after the first tool of the batch
            raise ValueError("queue broke")
        return []

    model = faux_model(
        [
            FauxResponse(
                [
                    tool_call("echo", {"value": "a"}, id="A"),
                    tool_call("echo", {"value": "b"}, id="B"),
                ]
            ),
            FauxResponse(["never"]),
        ]
    )
    _events, messages = await run_with(
        model=model, get_steering_messages=steering, tool_execution="sequential"
    )
    assert [m.role for m in messages] == [
        "user",
        "assistant",
        "toolResult",
        "toolResult",
        "assistant",
    ]
    assert last_assistant(messages).error_message == "queue broke"
    assert len(faux_calls(model)) == 1  # no further LLM call after the failure


@pytest.mark.parametrize("fn", [boom, aboom], ids=["sync", "async"])
async def test_follow_up_poll_raising_ends_the_run(fn: Any) -> None:
    events, messages = await run_with(
        model=faux_model([FauxResponse(["hi"])]), get_follow_up_messages=fn
    )
    assert [m.role for m in messages] == ["user", "assistant", "assistant"]
    error = last_assistant(messages)
    assert error.stop_reason == "error" and "exploded" in (error.error_message or "")
    # The failure happened between turns: it gets a turn of its own.
    assert kinds(events)[-6:] == [
        "turn_end",
        "turn_start",
        "message_start",
        "message_end",
        "turn_end",
        "agent_end",
    ]


@pytest.mark.parametrize("fn", [boom, aboom], ids=["sync", "async"])
@pytest.mark.parametrize("hook", ["before_tool_call", "after_tool_call"])
async def test_tool_hooks_raising_give_an_error_result_and_the_run_goes_on(
    hook: str, fn: Any
) -> None:
    events, messages = await run_with(**{hook: fn})
    end = next(e for e in events if isinstance(e, ToolExecutionEndEvent))
    assert end.is_error and "exploded" in result_text(end.result)
    assert [m.role for m in messages] == ["user", "assistant", "toolResult", "assistant"]
    assert last_assistant(messages).text == "after tools"


async def test_prepare_arguments_raising_gives_an_error_result() -> None:
    tool = AgentTool(
        "echo",
        "echo",
        None,
        execute=lambda *a: "never",
        prepare_arguments=boom,
    )
    events, _messages = await run_with(tools=[tool])
    end = next(e for e in events if isinstance(e, ToolExecutionEndEvent))
    assert end.is_error and result_text(end.result) == "callback exploded"


async def test_after_tool_call_overrides_fields_one_by_one() -> None:
    def after(ctx: Any, signal: Any) -> AfterToolCallResult:
        assert result_text(ctx.result) == "echo: a" and ctx.is_error is False
        return AfterToolCallResult(content=[TextContent("redacted")], is_error=True)

    events, _messages = await run_with(after_tool_call=after)
    end = next(e for e in events if isinstance(e, ToolExecutionEndEvent))
    assert end.is_error is True and result_text(end.result) == "redacted"
    assert end.result.details == {"value": "a"}  # not overridden: kept


async def test_stream_that_ends_without_a_terminal_event_does_not_hang() -> None:
    def stream_fn(model: Any, context: Any, **options: Any) -> AssistantMessageEventStream:
        stream = AssistantMessageEventStream()
        stream.end()
        return stream

    _events, messages = await run_with(stream_fn=stream_fn)
    error = last_assistant(messages)
    assert error.stop_reason == "error"
    assert "without a done or error event" in (error.error_message or "")


async def test_provider_stream_raising_mid_iteration_keeps_the_partial() -> None:
    class Broken:
        def __init__(self, inner: AssistantMessageEventStream) -> None:
            self.inner = inner

        def __aiter__(self) -> Any:
            return self.gen()

        async def gen(self) -> Any:
            count = 0
            async for event in self.inner:
                yield event
                count += 1
                if count == 3:
                    raise ConnectionError("socket closed")

    from tau.ai import stream_simple

    def stream_fn(model: Any, context: Any, **options: Any) -> Any:
        return Broken(stream_simple(model, context, **options))

    model = faux_model([FauxResponse([text("abcdefghijkl")], chunk_size=2)])
    events, messages = await run_with(model=model, stream_fn=stream_fn)
    error = last_assistant(messages)
    assert error.stop_reason == "error" and error.error_message == "socket closed"
    assert error.text.startswith("ab")  # what had arrived is kept
    starts = [e for e in events if e.type == "message_start"]
    assert len(starts) == 2  # user, assistant: no second start for the error


async def test_sink_raising_ends_the_run_with_an_error_message() -> None:
    seen: list[AgentEvent] = []
    failed = False

    def sink(event: AgentEvent) -> None:
        nonlocal failed
        seen.append(event)
        if event.type == "tool_execution_start" and not failed:
            failed = True
            raise KeyError("listener bug")

    messages = await asyncio.wait_for(
        run_agent_loop(
            [UserMessage("go")],
            AgentContext("", [], [echo_tool()]),
            AgentLoopConfig(model=tool_turn_model()),
            sink,
        ),
        5,
    )
    check_grammar(seen)
    # The batch finished (the call has its result), then the run ended with the error.
    assert [m.role for m in messages] == ["user", "assistant", "toolResult", "assistant"]
    assert "listener bug" in (last_assistant(messages).error_message or "")


async def test_sink_that_always_raises_makes_run_agent_loop_raise() -> None:
    def sink(event: AgentEvent) -> None:
        raise RuntimeError("sink is broken")

    with pytest.raises(RuntimeError, match="sink is broken"):
        await asyncio.wait_for(
            run_agent_loop(
                [UserMessage("go")], AgentContext(), AgentLoopConfig(model=faux_model([])), sink
            ),
            5,
        )


# --------------------------------------------------------------------------- abort


async def test_abort_during_streaming_ends_with_an_aborted_message() -> None:
    started = asyncio.Event()
    controller = AbortController()
    stream = agent_loop(
        [UserMessage("go")],
        AgentContext(),
        AgentLoopConfig(model=faux_model([]), stream_fn=hanging_stream_fn(started)),
        controller.signal,
    )
    task = asyncio.ensure_future(collect(stream))
    await asyncio.wait_for(started.wait(), 2)
    controller.abort()
    events = await task
    check_grammar(events)
    message = last_assistant(await stream.result())
    assert message.stop_reason == "aborted" and message.error_message
    assert message.text == "partial"


async def test_abort_during_a_tool_reaches_the_tool_and_no_new_turn_starts() -> None:
    controller = AbortController()
    tool_running = asyncio.Event()

    async def execute(cid: str, params: Any, signal: Any, on_update: Any) -> str:
        aborted = asyncio.Event()
        loop = asyncio.get_running_loop()
        signal.add_callback(lambda: loop.call_soon_threadsafe(aborted.set))
        tool_running.set()
        await asyncio.wait_for(aborted.wait(), 2)
        raise AbortedError("Command aborted")

    tool = AgentTool("wait", "wait", None, execute=execute)
    model = faux_model(
        [FauxResponse([tool_call("wait", {}, id="A"), tool_call("wait", {}, id="B")])]
    )
    stream = agent_loop(
        [UserMessage("go")],
        AgentContext("", [], [tool]),
        AgentLoopConfig(model=model, get_follow_up_messages=lambda: [UserMessage("more")]),
        controller.signal,
    )
    task = asyncio.ensure_future(collect(stream))
    await asyncio.wait_for(tool_running.wait(), 2)
    controller.abort()
    events = await task
    check_grammar(events)
    ends = [e for e in events if isinstance(e, ToolExecutionEndEvent)]
    assert [(e.is_error, result_text(e.result)) for e in ends] == [
        (True, "Command aborted"),
        (True, "Command aborted"),
    ]
    assert len(faux_calls(model)) == 1  # no LLM call after the abort, no follow-up
    assert kinds(events)[-2:] == ["turn_end", "agent_end"]
    assert kinds(events).count("turn_start") == 1


async def test_abort_before_a_sequential_call_skips_it() -> None:
    controller = AbortController()
    ran: list[str] = []

    def execute(cid: str, params: Any, signal: Any, on_update: Any) -> str:
        ran.append(cid)
        controller.abort()
        return "ok"

    tool = AgentTool("step", "step", None, execute=execute)
    model = faux_model(
        [FauxResponse([tool_call("step", {}, id="A"), tool_call("step", {}, id="B")])]
    )
    stream = agent_loop(
        [UserMessage("go")],
        AgentContext("", [], [tool]),
        AgentLoopConfig(model=model, tool_execution="sequential"),
        controller.signal,
    )
    events = await collect(stream)
    assert ran == ["A"]
    ends = [e for e in events if isinstance(e, ToolExecutionEndEvent)]
    assert [(e.tool_call_id, e.is_error, result_text(e.result)) for e in ends] == [
        ("A", False, "ok"),
        ("B", True, "Operation aborted"),
    ]


async def test_tool_ignoring_the_signal_is_cancelled_after_the_grace_period() -> None:
    controller = AbortController()
    running = asyncio.Event()
    cancelled = asyncio.Event()

    async def execute(cid: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        running.set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return AgentToolResult([TextContent("never")])

    tool = AgentTool("stubborn", "ignores abort", None, execute=execute)
    model = faux_model([FauxResponse([tool_call("stubborn", {}, id="A")])])
    stream = agent_loop(
        [UserMessage("go")],
        AgentContext("", [], [tool]),
        AgentLoopConfig(model=model, tool_abort_grace=0.05),
        controller.signal,
    )
    task = asyncio.ensure_future(collect(stream))
    await asyncio.wait_for(running.wait(), 2)
    controller.abort()
    events = await task
    assert cancelled.is_set()
    end = next(e for e in events if isinstance(e, ToolExecutionEndEvent))
    assert end.is_error and result_text(end.result) == "Operation aborted"
    check_grammar(events)


async def test_pre_aborted_signal_makes_no_llm_call() -> None:
    controller = AbortController()
    controller.abort()
    model = faux_model([FauxResponse(["never"])])
    stream = agent_loop(
        [UserMessage("go")], AgentContext(), AgentLoopConfig(model=model), controller.signal
    )
    events = await collect(stream)
    check_grammar(events)
    message = last_assistant(await stream.result())
    assert message.stop_reason == "aborted"
    assert faux_calls(model) == []


@pytest.mark.parametrize("fail_on", ["message_update", "message_start", "turn_end"])
async def test_sink_failing_mid_message_keeps_the_grammar(fail_on: str) -> None:
    seen: list[AgentEvent] = []
    failed = False

    def sink(event: AgentEvent) -> None:
        nonlocal failed
        seen.append(event)
        if event.type == fail_on and not failed:
            failed = True
            raise RuntimeError(f"sink broke on {fail_on}")

    model = faux_model([FauxResponse([text("some streamed text")])])
    messages = await asyncio.wait_for(
        run_agent_loop([UserMessage("go")], AgentContext(), AgentLoopConfig(model=model), sink),
        5,
    )
    check_grammar(seen)
    error = last_assistant(messages)
    assert error.stop_reason == "error" and error.error_message == f"sink broke on {fail_on}"
