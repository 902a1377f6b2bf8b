"""The stateful Agent: prompt and continue, queues and modes, continue rules, barriers."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tau.agent import (
    Agent,
    AgentError,
    AgentEvent,
    AgentMessage,
    AgentTool,
    AgentToolResult,
    BeforeToolCallResult,
)
from tau.ai import (
    AssistantMessage,
    ImageContent,
    TextContent,
    ToolResultMessage,
    UserMessage,
    stream_simple,
)
from tau.ai.adapters import MessageBuilder, launch_stream
from tau.ai.providers.faux import FauxResponse, faux_calls, faux_model, text, tool_call
from tests import factories

from .helpers import check_grammar, echo_tool, hanging_stream_fn, kinds


def assistant(text_value: str = "hi") -> AssistantMessage:
    return factories.assistant(FAUX, text_value)


FAUX = factories.model("faux", "faux", "faux-model")


def user_texts(messages: list[Any]) -> list[str]:
    out = []
    for m in messages:
        if isinstance(m, UserMessage):
            content = m.content
            out.append(
                content
                if isinstance(content, str)
                else "".join(b.text for b in content if isinstance(b, TextContent))
            )  # type: ignore[union-attr]
    return out


# --------------------------------------------------------------------------- the Agent


def test_default_state() -> None:
    agent = Agent()
    state = agent.state
    assert state.system_prompt == ""
    assert state.model is None  # no default model: prompt() says "No model configured"
    assert state.thinking_level == "off"
    assert state.tools == [] and state.messages == []
    assert state.is_streaming is False and state.stream_message is None
    assert state.pending_tool_calls == set() and state.error is None


def test_custom_initial_state() -> None:
    model = faux_model([])
    agent = Agent(system_prompt="You are helpful.", model=model, thinking_level="low")
    assert agent.state.system_prompt == "You are helpful."
    assert agent.state.model is model
    assert agent.state.thinking_level == "low"


async def test_subscribe_and_unsubscribe() -> None:
    seen: list[str] = []
    agent = Agent(model=faux_model([FauxResponse(["a"]), FauxResponse(["b"])]))
    unsubscribe = agent.subscribe(lambda e: seen.append(e.type))
    assert seen == []  # nothing on subscribe
    agent.set_system_prompt("x")
    agent.set_thinking_level("high")
    agent.append_message(UserMessage("m"))
    assert seen == []  # mutators emit nothing
    await agent.prompt("one")
    assert seen[0] == "agent_start" and seen[-1] == "agent_end"
    count = len(seen)
    unsubscribe()
    await agent.prompt("two")
    assert len(seen) == count


async def test_a_listener_subscribed_twice_is_stored_once() -> None:
    agent = Agent(model=faux_model([FauxResponse([text("hi")])]))
    seen: list[str] = []

    def listener(event: AgentEvent) -> None:
        seen.append(event.type)

    agent.subscribe(listener)
    agent.subscribe(listener)
    await agent.prompt("go")
    assert seen.count("agent_start") == 1


def test_mutators() -> None:
    agent = Agent()
    model = faux_model([])
    agent.set_system_prompt("sp")
    agent.set_model(model)
    agent.set_thinking_level("medium")
    tools = [echo_tool()]
    agent.set_tools(tools)
    assert agent.state.system_prompt == "sp" and agent.state.model is model
    assert agent.state.thinking_level == "medium"
    assert agent.state.tools is tools
    messages: list[AgentMessage] = [UserMessage("a")]
    agent.replace_messages(messages)
    assert agent.state.messages == messages and agent.state.messages is not messages
    extra = UserMessage("b")
    agent.append_message(extra)
    assert len(agent.state.messages) == 2 and agent.state.messages[1] is extra
    agent.clear_messages()
    assert agent.state.messages == []


def test_steer_and_follow_up_queue_without_touching_messages() -> None:
    agent = Agent()
    agent.steer("steer me")
    agent.follow_up(UserMessage("later"))
    assert agent.state.messages == []
    assert agent.has_queued_messages()
    assert user_texts(list(agent.steering_queue)) == ["steer me"]
    assert user_texts(list(agent.follow_up_queue)) == ["later"]
    agent.clear_steering_queue()
    assert agent.steering_queue == () and agent.has_queued_messages()
    agent.clear_all_queues()
    assert not agent.has_queued_messages()


def test_abort_when_idle_is_a_no_op() -> None:
    Agent().abort()


async def test_prompt_while_streaming_raises_and_abort_ends_the_run() -> None:
    started = asyncio.Event()
    agent = Agent(model=faux_model([]), stream_fn=hanging_stream_fn(started))
    run = asyncio.ensure_future(agent.prompt("first"))
    await asyncio.wait_for(started.wait(), 2)
    assert agent.state.is_streaming
    with pytest.raises(AgentError) as info:
        await agent.prompt("second")
    assert str(info.value) == (
        "Agent is already processing a prompt. Use steer() or follow_up() to queue messages, "
        "or wait for completion."
    )
    with pytest.raises(AgentError, match="Wait for completion before continuing"):
        await agent.continue_()
    agent.abort()
    await asyncio.wait_for(run, 2)
    last = agent.state.messages[-1]
    assert isinstance(last, AssistantMessage) and last.stop_reason == "aborted"
    assert agent.state.error == last.error_message
    assert not agent.state.is_streaming


async def test_second_unawaited_prompt_fails_at_once() -> None:
    agent = Agent(model=faux_model([FauxResponse(["one"], delay=0.01)]))
    first = asyncio.ensure_future(agent.prompt("a"))
    await asyncio.sleep(0)
    with pytest.raises(AgentError, match="already processing"):
        await agent.prompt("b")
    await first


async def test_continue_processes_a_queued_follow_up_after_an_assistant_turn() -> None:
    model = faux_model([FauxResponse(["processed"])])
    agent = Agent(model=model, messages=[UserMessage("initial"), assistant("initial response")])
    agent.follow_up("queued follow-up")
    await agent.continue_()
    assert "queued follow-up" in user_texts(agent.state.messages)
    last = agent.state.messages[-1]
    assert isinstance(last, AssistantMessage) and last.text == "processed"
    assert not agent.has_queued_messages()


async def test_continue_keeps_one_at_a_time_steering_from_an_assistant_tail() -> None:
    model = faux_model([FauxResponse(["r1"]), FauxResponse(["r2"])])
    agent = Agent(model=model, messages=[UserMessage("initial"), assistant("initial response")])
    agent.steer("steering 1")
    agent.steer("steering 2")
    await agent.continue_()
    roles = [m.role for m in agent.state.messages]
    assert roles[-4:] == ["user", "assistant", "user", "assistant"]
    assert len(faux_calls(model)) == 2
    assert user_texts(agent.state.messages)[-2:] == ["steering 1", "steering 2"]


async def test_session_id_reaches_the_stream_options_and_the_setter_applies_next_run() -> None:
    model = faux_model([FauxResponse(["a"]), FauxResponse(["b"])])
    agent = Agent(model=model, session_id="session-abc")
    await agent.prompt("hello")
    assert faux_calls(model)[0][1]["session_id"] == "session-abc"
    agent.session_id = "session-def"
    await agent.prompt("again")
    assert faux_calls(model)[1][1]["session_id"] == "session-def"


def test_continue_validation_without_a_model_or_messages() -> None:
    async def go() -> None:
        with pytest.raises(AgentError, match="No messages to continue from"):
            await Agent(model=faux_model([])).continue_()
        agent = Agent(model=faux_model([]), messages=[assistant()])
        with pytest.raises(AgentError, match="Cannot continue from message role: assistant"):
            await agent.continue_()
        with pytest.raises(AgentError, match="No model configured"):
            await Agent().prompt("hi")

    asyncio.run(go())


# --------------------------------------------------------------------------- more continue rules


async def test_continue_from_a_tool_result_runs_in_continue_mode() -> None:
    model = faux_model([FauxResponse(["The answer is 8."])])
    call = tool_call("calc", {"expr": "3+5"}, id="c1")
    history: list[AgentMessage] = [
        UserMessage("what is 3+5?"),
        AssistantMessage([call], "faux", "faux", "faux-model", stop_reason="toolUse"),
        ToolResultMessage("c1", "calc", [TextContent("8")]),
    ]
    agent = Agent(model=model, messages=history)
    seen: list[AgentEvent] = []
    agent.subscribe(seen.append)
    await agent.continue_()
    assert [e.message.role for e in seen if e.type == "message_end"] == ["assistant"]  # type: ignore[union-attr]
    assert [m.role for m in faux_calls(model)[0][0].messages] == ["user", "assistant", "toolResult"]
    assert len(agent.state.messages) == 4


async def test_continue_retries_after_removing_an_error_message() -> None:
    model = faux_model([FauxResponse([], error="overloaded"), FauxResponse(["recovered"])])
    agent = Agent(model=model)
    await agent.prompt("hi")
    last = agent.state.messages[-1]
    assert isinstance(last, AssistantMessage) and last.stop_reason == "error"
    assert agent.state.error == "overloaded"
    agent.replace_messages(agent.state.messages[:-1])
    await agent.continue_()
    assert agent.state.error is None
    last = agent.state.messages[-1]
    assert isinstance(last, AssistantMessage) and last.text == "recovered"


async def test_continue_from_assistant_tail_with_all_mode_steering_delivers_everything() -> None:
    model = faux_model([FauxResponse(["both handled"])])
    agent = Agent(model=model, messages=[UserMessage("u"), assistant()], steering_mode="all")
    agent.steer("s1")
    agent.steer("s2")
    await agent.continue_()
    assert len(faux_calls(model)) == 1
    assert user_texts(agent.state.messages)[-2:] == ["s1", "s2"]


# --------------------------------------------------------------------------- modes


def steering_from_tool(agent_ref: list[Agent], texts: list[str]) -> AgentTool:
    def execute(cid: str, params: Any, signal: Any, on_update: Any) -> str:
        for t in texts:
            agent_ref[0].steer(t)
        texts.clear()
        return "tool ran"

    return AgentTool("work", "work", None, execute=execute)


@pytest.mark.parametrize(("mode", "calls"), [("one-at-a-time", 3), ("all", 2)])
async def test_steering_modes(mode: Any, calls: int) -> None:
    model = faux_model(
        [FauxResponse([tool_call("work", {}, id="A")]), FauxResponse(["r2"]), FauxResponse(["r3"])]
    )
    ref: list[Agent] = []
    agent = Agent(model=model, steering_mode=mode)
    ref.append(agent)
    agent.set_tools([steering_from_tool(ref, ["s1", "s2"])])
    await agent.prompt("start")
    assert len(faux_calls(model)) == calls
    contexts = [[m.role for m in c.messages] for c, _ in faux_calls(model)]
    if mode == "all":
        assert contexts[1][-2:] == ["user", "user"]
    else:
        assert contexts[1][-2:] == ["toolResult", "user"]
        assert contexts[2][-3:] == ["user", "assistant", "user"]
    assert user_texts(agent.state.messages) == ["start", "s1", "s2"]


@pytest.mark.parametrize(("mode", "calls"), [("one-at-a-time", 3), ("all", 2)])
async def test_follow_up_modes(mode: Any, calls: int) -> None:
    model = faux_model([FauxResponse(["r1"]), FauxResponse(["r2"]), FauxResponse(["r3"])])
    agent = Agent(model=model, follow_up_mode=mode)
    agent.follow_up("f1")
    agent.follow_up("f2")
    seen: list[str] = []
    agent.subscribe(lambda e: seen.append(e.type))
    await agent.prompt("start")
    assert len(faux_calls(model)) == calls
    assert seen.count("turn_start") == calls
    assert user_texts(agent.state.messages) == ["start", "f1", "f2"]
    assert not agent.has_queued_messages()


async def test_steering_in_sequential_mode_skips_remaining_tools() -> None:
    ran: list[str] = []
    ref: list[Agent] = []

    def execute(cid: str, params: Any, signal: Any, on_update: Any) -> str:
        ran.append(cid)
        ref[0].steer("stop that")
        return "ok"

    model = faux_model(
        [
            FauxResponse([tool_call("work", {}, id="A"), tool_call("work", {}, id="B")]),
            FauxResponse(["ok, stopping"]),
        ]
    )
    agent = Agent(
        model=model,
        tools=[AgentTool("work", "w", None, execute=execute)],
        tool_execution="sequential",
    )
    ref.append(agent)
    await agent.prompt("go")
    assert ran == ["A"]
    results = [m for m in agent.state.messages if isinstance(m, ToolResultMessage)]
    assert [(r.tool_call_id, r.is_error) for r in results] == [("A", False), ("B", True)]
    assert results[1].content[0].text == "Skipped due to queued user message."  # type: ignore[union-attr]


# --------------------------------------------------------------------------- barriers


async def test_message_end_barrier_before_tool_preflight() -> None:
    log: list[str] = []
    agent_ref: list[Agent] = []

    async def listener(event: AgentEvent) -> None:
        if event.type == "message_end" and isinstance(event.message, AssistantMessage):
            await asyncio.sleep(0.01)
            log.append("listener done")

    def before(ctx: Any, signal: Any) -> BeforeToolCallResult | None:
        state = agent_ref[0].state
        assert state.messages[-1] is ctx.assistant_message
        assert ctx.tool_call.id in state.pending_tool_calls
        log.append("before_tool_call")
        return None

    model = faux_model(
        [FauxResponse([tool_call("echo", {"value": "x"}, id="A")]), FauxResponse(["ok"])]
    )
    agent = Agent(model=model, tools=[echo_tool()], before_tool_call=before)
    agent_ref.append(agent)
    agent.subscribe(listener)
    await agent.prompt("go")
    assert log == ["listener done", "before_tool_call", "listener done"]


async def test_agent_end_async_listener_barrier() -> None:
    log: list[str] = []
    agent_ref: list[Agent] = []

    async def persist(event: AgentEvent) -> None:
        if event.type == "agent_end":
            assert agent_ref[0].state.is_streaming  # still running while listeners settle
            await asyncio.sleep(0.02)
            log.append("persisted")

    agent = Agent(model=faux_model([FauxResponse(["a"]), FauxResponse(["b"])]))
    agent_ref.append(agent)
    agent.subscribe(persist)
    await agent.prompt("one")
    assert log == ["persisted"]
    assert not agent.state.is_streaming

    run = asyncio.ensure_future(agent.prompt("two"))
    await asyncio.sleep(0)
    await agent.wait_for_idle()
    assert log == ["persisted", "persisted"]
    assert run.done()


async def test_prompt_from_an_agent_end_listener_is_refused_not_corrupting() -> None:
    errors: list[str] = []
    agent_ref: list[Agent] = []

    async def restart(event: AgentEvent) -> None:
        if event.type == "agent_end":
            try:
                await agent_ref[0].prompt("again")
            except AgentError as exc:
                errors.append(str(exc))

    agent = Agent(model=faux_model([FauxResponse(["a"])]))
    agent_ref.append(agent)
    agent.subscribe(restart)
    await agent.prompt("one")
    assert errors and "already processing" in errors[0]
    assert [m.role for m in agent.state.messages] == ["user", "assistant"]


async def test_wait_for_idle_inside_the_run_raises_instead_of_deadlocking() -> None:
    errors: list[str] = []
    agent_ref: list[Agent] = []

    async def listener(event: AgentEvent) -> None:
        if event.type == "agent_end":
            try:
                await agent_ref[0].wait_for_idle()
            except AgentError as exc:
                errors.append(str(exc))

    agent = Agent(model=faux_model([FauxResponse(["a"])]))
    agent_ref.append(agent)
    agent.subscribe(listener)
    await asyncio.wait_for(agent.prompt("x"), 2)
    assert errors and "inside the agent's own run" in errors[0]
    await agent.wait_for_idle()  # idle: returns at once


async def test_listener_exception_does_not_stop_other_listeners_and_ends_the_run() -> None:
    seen: list[str] = []

    def bad(event: AgentEvent) -> None:
        if event.type == "message_update":
            raise RuntimeError("ui crashed")

    agent = Agent(model=faux_model([FauxResponse([text("hello world")])]))
    agent.subscribe(bad)
    agent.subscribe(lambda e: seen.append(e.type))
    await asyncio.wait_for(agent.prompt("x"), 2)
    assert "message_update" in seen and seen[-1] == "agent_end"
    last = agent.state.messages[-1]
    assert isinstance(last, AssistantMessage) and last.error_message == "ui crashed"
    assert agent.state.error == "ui crashed"
    assert not agent.state.is_streaming


async def test_state_during_a_run() -> None:
    snapshots: list[tuple[str, Any, bool]] = []
    agent_ref: list[Agent] = []

    def listener(event: AgentEvent) -> None:
        state = agent_ref[0].state
        snapshots.append((event.type, state.stream_message, state.is_streaming))

    model = faux_model([FauxResponse([text("abc")], chunk_size=1)])
    agent = Agent(model=model)
    agent_ref.append(agent)
    agent.subscribe(listener)
    await agent.prompt("x")
    update = next(s for s in snapshots if s[0] == "message_update")
    assert isinstance(update[1], AssistantMessage) and update[2]
    end = [s for s in snapshots if s[0] == "message_end"][-1]
    assert end[1] is None
    assert all(s[2] for s in snapshots)


async def test_golden_sequence_through_the_agent() -> None:
    from .test_loop import GOLDEN_TWO_TURNS, clock_tool, golden_model

    seen: list[AgentEvent] = []
    agent = Agent(model=golden_model(), tools=[clock_tool()], thinking_level="medium")
    agent.subscribe(seen.append)
    await agent.prompt("What time is it?")
    assert kinds(seen) == GOLDEN_TWO_TURNS
    check_grammar(seen)


# --------------------------------------------------------------------------- abort via the agent


async def test_abort_during_a_tool_ends_without_another_llm_call() -> None:
    running = asyncio.Event()

    async def execute(cid: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        aborted = asyncio.Event()
        loop = asyncio.get_running_loop()
        signal.add_callback(lambda: loop.call_soon_threadsafe(aborted.set))
        running.set()
        await aborted.wait()
        raise RuntimeError("Command aborted")

    model = faux_model([FauxResponse([tool_call("wait", {}, id="A")]), FauxResponse(["never"])])
    agent = Agent(model=model, tools=[AgentTool("wait", "w", None, execute=execute)])
    agent.follow_up("queued")
    run = asyncio.ensure_future(agent.prompt("go"))
    await asyncio.wait_for(running.wait(), 2)
    agent.abort()
    await asyncio.wait_for(run, 2)
    assert len(faux_calls(model)) == 1
    assert agent.state.error == "Request was aborted"
    last = agent.state.messages[-1]
    assert isinstance(last, ToolResultMessage) and last.is_error
    assert agent.has_queued_messages()  # the queue survives an abort


# --------------------------------------------------------------------------- misc


async def test_prompt_with_images_and_with_several_messages() -> None:
    model = faux_model([FauxResponse(["seen"]), FauxResponse(["both"])])
    agent = Agent(model=model)
    image = ImageContent("aGVsbG8=", "image/png")
    await agent.prompt("look", images=[image])
    first = agent.state.messages[0]
    assert isinstance(first, UserMessage) and isinstance(first.content, list)
    assert first.content[0] == TextContent("look") and first.content[1] is image
    seen: list[AgentEvent] = []
    agent.subscribe(seen.append)
    await agent.prompt([UserMessage("a"), UserMessage("b")])
    assert [e.message.role for e in seen if e.type == "message_end"] == [
        "user",
        "user",
        "assistant",
    ]  # type: ignore[union-attr]


async def test_reset_clears_state_and_queues_but_keeps_setup() -> None:
    model = faux_model([FauxResponse(["a"])])
    agent = Agent(model=model, system_prompt="sp")
    await agent.prompt("x")
    agent.follow_up("later")
    agent.reset()
    assert agent.state.messages == [] and not agent.has_queued_messages()
    assert agent.state.model is model and agent.state.system_prompt == "sp"


async def test_thinking_level_off_sends_no_reasoning_and_budgets_are_forwarded() -> None:
    model = faux_model([FauxResponse(["a"]), FauxResponse(["b"])])
    agent = Agent(model=model, thinking_budgets={"low": 111}, max_retry_delay_ms=5)
    await agent.prompt("x")
    options = faux_calls(model)[0][1]
    assert "reasoning" not in options and options["thinking_budgets"] == {"low": 111}
    assert options["max_retry_delay_ms"] == 5
    agent.set_thinking_level("low")
    await agent.prompt("y")
    assert faux_calls(model)[1][1]["reasoning"] == "low"


async def test_get_api_key_and_stream_fn_are_public_and_used() -> None:
    model = faux_model([FauxResponse(["a"])])
    agent = Agent(model=model)
    agent.get_api_key = lambda provider: f"key-for-{provider}"
    calls: list[str] = []

    def stream_fn(m: Any, context: Any, **options: Any) -> Any:
        calls.append(options["api_key"])
        return stream_simple(m, context, **options)

    agent.stream_fn = stream_fn
    await agent.prompt("x")
    assert calls == ["key-for-faux"]


async def test_stream_fn_raising_becomes_an_error_message_in_state() -> None:
    def stream_fn(m: Any, context: Any, **options: Any) -> Any:
        raise ConnectionRefusedError("proxy down")

    seen: list[str] = []
    agent = Agent(model=faux_model([]), stream_fn=stream_fn)
    agent.subscribe(lambda e: seen.append(e.type))
    await agent.prompt("x")
    assert agent.state.error == "proxy down"
    assert seen[-4:] == ["message_start", "message_end", "turn_end", "agent_end"]


async def test_provider_error_event_sets_state_error() -> None:
    def stream_fn(m: Any, context: Any, **options: Any) -> Any:
        async def run(out: MessageBuilder) -> None:
            raise RuntimeError("quota exceeded")

        return launch_stream(m, options, run)

    agent = Agent(model=faux_model([]), stream_fn=stream_fn)
    await agent.prompt("x")
    assert agent.state.error == "quota exceeded"


async def test_reset_during_a_run_is_refused() -> None:
    started = asyncio.Event()
    agent = Agent(model=faux_model([]), stream_fn=hanging_stream_fn(started))
    run = asyncio.ensure_future(agent.prompt("x"))
    await asyncio.wait_for(started.wait(), 2)
    with pytest.raises(AgentError, match="before reset"):
        agent.reset()
    agent.abort()
    await asyncio.wait_for(run, 2)
    agent.reset()
    assert agent.state.messages == []
