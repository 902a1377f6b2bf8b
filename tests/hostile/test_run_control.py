"""Run control under bad input and misbehaving parts: clear errors, one terminal event, no hang."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

import pytest

from tau.agent import Agent, AgentEvent, UsageLimits
from tau.ai import (
    AbortController,
    AssistantMessage,
    AssistantMessageEventStream,
    Context,
    ErrorEvent,
    FailedAttempt,
    Model,
    ProviderConnectionError,
    ProviderError,
    UserMessage,
    classify_failure,
    fallback_stream_fn,
)
from tau.ai.adapters import MessageBuilder, launch_stream
from tau.ai.providers.faux import FauxResponse, faux_calls, faux_model

CONTEXT = Context(messages=[UserMessage("hi")])
TIMEOUT = 5.0


def overloaded(id: str = "primary") -> Model:
    return faux_model([FauxResponse(error="Overloaded", error_status=529)], id=id)


def answering(id: str = "backup", text: str = "fine") -> Model:
    return faux_model([FauxResponse([text])], id=id)


async def final_of(stream: AssistantMessageEventStream) -> tuple[list[Any], AssistantMessage]:
    async def drain() -> list[Any]:
        return [event async for event in stream]

    events = await asyncio.wait_for(drain(), TIMEOUT)
    assert events[-1].type in ("done", "error")
    assert sum(e.type in ("done", "error") for e in events) == 1
    return events, await stream.result()


def test_bad_arguments_are_clear_errors_at_the_call() -> None:
    with pytest.raises(TypeError, match="fallback models must be Model objects, not str"):
        fallback_stream_fn(["openai/gpt-5"])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="collection of failure kinds"):
        fallback_stream_fn([], fall_back_on="timeout")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="collection of failure kinds"):
        fallback_stream_fn([], fall_back_on=5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"unknown failure kind\(s\) \['time-out'\].*'timeout'"):
        fallback_stream_fn([], fall_back_on={"time-out"})  # type: ignore[arg-type]


def test_calling_outside_an_event_loop_says_so() -> None:
    with pytest.raises(RuntimeError, match="running asyncio event loop"):
        fallback_stream_fn([answering()])(overloaded(), CONTEXT)


async def test_a_stream_function_that_raises_is_a_failed_attempt() -> None:
    def broken(model: Model, context: Context, **options: Any) -> AssistantMessageEventStream:
        if model.id == "primary":
            raise KeyError("no adapter for this")
        from tau.ai import stream_simple

        return stream_simple(model, context, **options)

    stream = fallback_stream_fn([answering()], broken)(answering("primary"), CONTEXT)
    _, final = await final_of(stream)
    assert final.stop_reason == "error" and final.model == "primary"
    assert final.error_message == "'no adapter for this'"  # not a failure to fall back on

    everything = fallback_stream_fn([answering()], broken, fall_back_on=lambda attempt: True)
    stream = everything(answering("primary"), CONTEXT)
    _, final = await final_of(stream)
    assert final.text == "fine"
    assert isinstance(stream.failed_attempts[0].error, KeyError)


async def test_a_stream_without_a_terminal_event_is_a_failure_not_a_hang() -> None:
    def endless(model: Model, context: Context, **options: Any) -> AssistantMessageEventStream:
        stream = AssistantMessageEventStream()
        stream.end()
        return stream

    _, final = await final_of(fallback_stream_fn([answering()], endless)(overloaded(), CONTEXT))
    assert final.error_message == "the stream ended without a done or error event"


async def test_async_stream_functions_work() -> None:
    async def later(model: Model, context: Context, **options: Any) -> AssistantMessageEventStream:
        await asyncio.sleep(0)
        from tau.ai import stream_simple

        return stream_simple(model, context, **options)

    _, final = await final_of(fallback_stream_fn([answering()], later)(overloaded(), CONTEXT))
    assert final.text == "fine"


@pytest.mark.parametrize("hook", ["on_fallback", "get_api_key", "fall_back_on"])
async def test_a_raising_hook_ends_the_call_with_its_error(hook: str) -> None:
    def boom(*args: Any) -> Any:
        raise RuntimeError(f"{hook} exploded")

    backup = answering()
    if hook == "get_api_key":
        backup = faux_model([FauxResponse(["x"])], provider="other")
    stream = fallback_stream_fn([backup], **{hook: boom})(overloaded(), CONTEXT)
    _, final = await final_of(stream)
    assert final.stop_reason == "error"
    assert final.error_message == f"{hook} exploded"
    assert faux_calls(backup) == []


async def test_an_aborted_signal_never_falls_back() -> None:
    controller = AbortController()
    controller.abort("stopped early")
    backup = answering()
    stream = fallback_stream_fn([backup])(overloaded(), CONTEXT, signal=controller.signal)
    _, final = await final_of(stream)
    assert (final.stop_reason, final.error_message) == ("aborted", "stopped early")
    assert faux_calls(backup) == [] and stream.failed_attempts == []


async def test_a_failure_that_is_really_an_abort_is_not_fallen_back_on() -> None:
    controller = AbortController()

    def aborting(model: Model, context: Context, **options: Any) -> AssistantMessageEventStream:
        async def run(builder: MessageBuilder) -> None:
            controller.abort("gone")
            raise ProviderConnectionError("connection reset while aborting")

        return launch_stream(model, options, run)

    backup = answering()
    stream = fallback_stream_fn([backup], aborting)(overloaded(), CONTEXT, signal=controller.signal)
    _, final = await final_of(stream)
    assert final.stop_reason == "aborted"
    assert faux_calls(backup) == []


def test_classify_failure_survives_odd_exception_chains() -> None:
    message = AssistantMessage([], "x", "p", "m", stop_reason="error", error_message="boom")
    looped = ProviderError("outer")
    inner = ProviderError("inner", status=503)
    looped.__cause__ = inner
    inner.__cause__ = looped  # a cycle: must not loop forever
    assert classify_failure(message, looped) == "server_error"
    assert classify_failure(message, ValueError("x")) == "other"
    assert classify_failure(message, None) == "other"
    wrapped = ProviderError("Mistral API error (429): slow down")
    wrapped.__cause__ = ProviderError("429 slow down", status=429)
    assert classify_failure(message, wrapped) == "rate_limit"


async def test_a_listener_failing_on_the_fallback_event_ends_the_run_cleanly() -> None:
    agent = Agent(model=overloaded(), fallback_models=[answering()])
    events: list[AgentEvent] = []

    def listener(event: AgentEvent) -> None:
        events.append(event)
        if event.type == "fallback":
            raise RuntimeError("listener broke")

    agent.subscribe(listener)
    await asyncio.wait_for(agent.prompt("hi"), TIMEOUT)
    assert events[-1].type == "agent_end"
    assert agent.state.error == "listener broke"
    assert not agent.state.is_streaming


async def test_limits_set_to_odd_values_behave() -> None:
    def tools_forever(context: Context, options: Mapping[str, Any]) -> FauxResponse:
        from tau.ai.providers.faux import tool_call

        return FauxResponse([tool_call("nope", {})])

    # A huge limit is no limit; zero tool calls refuses every call, with a result for each.
    model = faux_model(tools_forever)
    agent = Agent(model=model, usage_limits=UsageLimits(max_turns=10**12, max_tool_calls=0))
    await asyncio.wait_for(agent.prompt("go"), TIMEOUT)
    roles = [m.role for m in agent.state.messages]
    assert roles == ["user", "assistant", "toolResult", "assistant"]
    assert agent.state.error == "Usage limit reached: tool calls 1 of 0"


def test_failed_attempt_repr_is_short() -> None:
    message = AssistantMessage([], "faux", "faux", "a", stop_reason="error", error_message="e")
    attempt = FailedAttempt(overloaded("a"), message, "other")
    assert repr(attempt) == (
        "FailedAttempt(model='faux/a', kind='other', error_message='e', next_model=None)"
    )


async def test_error_events_carry_their_cause() -> None:
    _, final = await final_of(
        fallback_stream_fn([])(overloaded(), CONTEXT)  # no fallbacks: the plain failure
    )
    assert final.error_message == "Overloaded"
    stream = fallback_stream_fn([])(overloaded(), CONTEXT)
    events, _ = await final_of(stream)
    assert isinstance(events[-1], ErrorEvent)
    assert isinstance(events[-1].cause, ProviderError) and events[-1].cause.status == 529
