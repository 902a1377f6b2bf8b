"""Usage limits and run totals, over scripted (faux) models: each limit stops a run cleanly."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import Mapping
from typing import Any

import pytest

from tau.agent import (
    Agent,
    AgentContext,
    AgentEndEvent,
    AgentEvent,
    AgentLoopConfig,
    FallbackEvent,
    RunUsage,
    UsageLimits,
    event_to_json,
    run_agent_loop,
)
from tau.ai import (
    AssistantMessage,
    Context,
    Model,
    ToolResultMessage,
    Usage,
    UserMessage,
    fallback_stream_fn,
    get_model,
)
from tau.ai.providers.faux import FauxResponse, faux_calls, faux_model, text, tool_call

from .helpers import echo_tool, kinds, prompt_collecting, result_text

TIMEOUT = 5.0
SONNET = get_model("anthropic", "claude-sonnet-4-5")


def priced(model: Model) -> Model:
    """A faux model billed at a real catalog model's prices."""
    assert SONNET is not None
    return dataclasses.replace(model, cost=SONNET.cost)


def catalog_cost(input_tokens: int, output_tokens: int) -> float:
    # The catalog's rule: dollars per million tokens, per kind.
    assert SONNET is not None
    return input_tokens * SONNET.cost.input / 1e6 + output_tokens * SONNET.cost.output / 1e6


def always_calls_tools(context: Context, options: Mapping[str, Any]) -> FauxResponse:
    return FauxResponse([tool_call("echo", {"value": "again"})])


def assistants(agent: Agent) -> list[AssistantMessage]:
    return [m for m in agent.state.messages if isinstance(m, AssistantMessage)]


def results(agent: Agent) -> list[ToolResultMessage]:
    return [m for m in agent.state.messages if isinstance(m, ToolResultMessage)]


def end_usage(events: list[AgentEvent]) -> RunUsage:
    end = events[-1]
    assert isinstance(end, AgentEndEvent)
    return end.usage


# --------------------------------------------------------------------------- each limit


async def test_turn_limit_with_a_model_that_always_calls_tools() -> None:
    model = faux_model(always_calls_tools)
    agent = Agent(model=model, tools=[echo_tool()], usage_limits=UsageLimits(max_turns=3))
    events = await prompt_collecting(agent)
    replies = assistants(agent)
    assert [m.stop_reason for m in replies] == ["toolUse", "toolUse", "toolUse", "error"]
    # The tools of the last allowed turn ran: nothing the model asked for is left unanswered.
    assert [result_text(r) for r in results(agent)] == ["echo: again"] * 3
    assert replies[-1].error_message == "Usage limit reached: turns 3 of 3"
    assert replies[-1].content == []
    assert agent.state.error == "Usage limit reached: turns 3 of 3"
    assert len(faux_calls(model)) == 3
    usage = end_usage(events)
    assert (usage.turns, usage.requests, usage.tool_calls) == (3, 3, 3)
    assert agent.state.usage == usage
    # The limit message is a turn of its own, delivered like any message.
    assert kinds(events)[-5:] == [
        "turn_start",
        "message_start",
        "message_end",
        "turn_end",
        "agent_end",
    ]


async def test_cost_limit_crossed_mid_run_at_catalog_prices() -> None:
    ran: list[str] = []
    expensive = Usage(input=100_000, output=2_000)
    model = priced(
        faux_model(
            [
                FauxResponse([tool_call("echo", {"value": "one"})], usage=expensive),
                FauxResponse(
                    [tool_call("echo", {"value": "two"}), tool_call("echo", {"value": "three"})],
                    usage=dataclasses.replace(expensive),
                ),
                FauxResponse(["never asked for"]),
            ]
        )
    )
    tool = echo_tool(run=lambda call_id, params: ran.append(params["value"]) or "ok")
    agent = Agent(model=model, tools=[tool], usage_limits=UsageLimits(max_cost=0.50))
    events = await prompt_collecting(agent)

    one = catalog_cost(100_000, 2_000)
    assert one == pytest.approx(0.33)
    assert agent.state.usage.cost == pytest.approx(2 * one)
    # The second response pushed the cost past the limit: none of its calls ran.
    assert ran == ["one"]
    refused = results(agent)[1:]
    assert [r.is_error for r in refused] == [True, True]
    assert {result_text(r) for r in refused} == {
        "Tool call not run: usage limit reached: cost $0.66 of $0.50"
    }
    last = assistants(agent)[-1]
    assert (last.stop_reason, last.error_message) == (
        "error",
        "Usage limit reached: cost $0.66 of $0.50",
    )
    assert len(faux_calls(model)) == 2
    # Nothing produced is lost: both responses and all three results are in the transcript.
    assert [m.role for m in agent.state.messages] == [
        "user",
        "assistant",
        "toolResult",
        "assistant",
        "toolResult",
        "toolResult",
        "assistant",
    ]
    assert end_usage(events).tool_calls == 1


@pytest.mark.parametrize("mode", ["parallel", "sequential"])
async def test_tool_call_limit_inside_one_batch(mode: Any) -> None:
    ran: list[str] = []

    async def slow(call_id: str, params: dict[str, Any]) -> str:
        await asyncio.sleep(0.01)
        ran.append(params["value"])
        return f"did {params['value']}"

    first = [tool_call("echo", {"value": v}) for v in ("a", "b")]
    batch = [tool_call("echo", {"value": v}) for v in ("c", "d", "e")]
    model = faux_model([FauxResponse(first), FauxResponse(batch), FauxResponse(["unused"])])
    agent = Agent(
        model=model,
        tools=[echo_tool(run=slow)],
        tool_execution=mode,
        usage_limits=UsageLimits(max_tool_calls=3),
    )
    events = await prompt_collecting(agent)

    assert ran == ["a", "b", "c"]
    texts = [result_text(r) for r in results(agent)]
    refused = "Tool call not run: usage limit reached: tool calls 5 of 3"
    assert texts == ["did a", "did b", "did c", refused, refused]
    # Every call of the batch got its start, end and result, in call order.
    ends = [e.tool_call_id for e in events if e.type == "tool_execution_end"]  # type: ignore[union-attr]
    assert ends == [c.id for c in first + batch]
    last = assistants(agent)[-1]
    assert last.error_message == "Usage limit reached: tool calls 5 of 3"
    assert len(faux_calls(model)) == 2
    assert end_usage(events).tool_calls == 3


@pytest.mark.parametrize(
    ("limits", "usage", "expected"),
    [
        (
            UsageLimits(max_output_tokens=150),
            Usage(input=10, output=100),
            "output tokens 200 of 150",
        ),
        # Cached prompt tokens are prompt tokens too.
        (
            UsageLimits(max_input_tokens=150),
            Usage(input=10, cache_read=90),
            "input tokens 200 of 150",
        ),
        (
            UsageLimits(max_total_tokens=1_000),
            Usage(input=300, output=200, cache_write=100),
            "total tokens 1,200 of 1,000",
        ),
    ],
)
async def test_token_limits(limits: UsageLimits, usage: Usage, expected: str) -> None:
    script = [
        FauxResponse([tool_call("echo", {"value": "x"})], usage=dataclasses.replace(usage))
        for _ in range(3)
    ]
    model = faux_model(script)
    agent = Agent(model=model, tools=[echo_tool()], usage_limits=limits)
    await prompt_collecting(agent)
    assert assistants(agent)[-1].error_message == f"Usage limit reached: {expected}"
    assert len(faux_calls(model)) == 2


async def test_a_limit_already_reached_makes_no_request() -> None:
    model = faux_model([FauxResponse(["never"])])
    agent = Agent(model=model, usage_limits=UsageLimits(max_turns=0))
    events = await prompt_collecting(agent)
    assert faux_calls(model) == []
    assert [m.role for m in agent.state.messages] == ["user", "assistant"]
    assert agent.state.messages[-1].error_message == "Usage limit reached: turns 0 of 0"  # type: ignore[union-attr]
    assert end_usage(events) == RunUsage()


async def test_a_last_response_over_budget_is_kept_and_the_run_ends_normally() -> None:
    # Nothing more was going to be asked: the answer stands, the totals show the overrun.
    model = priced(faux_model([FauxResponse(["an answer"], usage=Usage(input=200_000))]))
    agent = Agent(model=model, usage_limits=UsageLimits(max_cost=0.50))
    await prompt_collecting(agent)
    assert [m.stop_reason for m in assistants(agent)] == ["stop"]
    assert agent.state.usage.cost == pytest.approx(0.60)
    assert agent.state.error is None


# --------------------------------------------------------------------------- continuing


async def test_continue_after_the_limit_is_raised() -> None:
    calls = 0

    def script(context: Context, options: Mapping[str, Any]) -> FauxResponse:
        nonlocal calls
        calls += 1
        if calls <= 3:
            return FauxResponse([tool_call("echo", {"value": str(calls)})])
        return FauxResponse(["all done"])

    model = faux_model(script)
    agent = Agent(model=model, tools=[echo_tool()], usage_limits=UsageLimits(max_turns=2))
    await prompt_collecting(agent)
    assert agent.state.error == "Usage limit reached: turns 2 of 2"
    stopped = list(agent.state.messages)

    # Not raised: continuing stops again at once, without a request.
    await asyncio.wait_for(agent.continue_(), TIMEOUT)
    assert calls == 2
    assert agent.state.messages[-1].error_message == "Usage limit reached: turns 2 of 2"  # type: ignore[union-attr]

    agent.usage_limits = UsageLimits(max_turns=4)
    await asyncio.wait_for(agent.continue_(), TIMEOUT)
    assert agent.state.error is None
    assert agent.state.messages[: len(stopped)] == stopped  # nothing lost
    assert assistants(agent)[-1].text == "all done"
    assert [result_text(r) for r in results(agent)] == ["echo: 1", "echo: 2", "echo: 3"]
    # The totals count on from the stopped run: 4 turns in all.
    assert (agent.state.usage.turns, agent.state.usage.tool_calls) == (4, 3)

    await prompt_collecting(agent, "a new prompt")
    assert agent.state.usage.turns == 1  # prompt() starts new totals


async def test_loop_config_counts_on_from_given_totals() -> None:
    model = faux_model([FauxResponse(["hi"], usage=Usage(input=3, output=4))])
    totals = RunUsage(turns=5, requests=6, cost=1.0)
    config = AgentLoopConfig(model=model, usage_limits=UsageLimits(max_turns=6), usage=totals)
    events: list[AgentEvent] = []
    await asyncio.wait_for(
        run_agent_loop([UserMessage("q")], AgentContext(), config, events.append), TIMEOUT
    )
    assert (totals.turns, totals.requests, totals.input_tokens, totals.output_tokens) == (
        6,
        7,
        3,
        4,
    )
    assert totals.total_tokens == 7
    assert end_usage(events) == totals and end_usage(events) is not totals
    line = json.loads(event_to_json(events[-1]))
    assert line["usage"] == {
        "turns": 6,
        "requests": 7,
        "toolCalls": 0,
        "inputTokens": 3,
        "outputTokens": 4,
        "cacheReadTokens": 0,
        "cacheWriteTokens": 0,
        "totalTokens": 7,
        "cost": 1.0,
    }


# --------------------------------------------------------------------------- fallbacks count


async def test_failed_attempts_of_fallbacks_are_reported_and_counted() -> None:
    primary = priced(
        faux_model(
            [FauxResponse(error="Overloaded", error_status=529, usage=Usage(input=200_000))],
            id="primary",
        )
    )
    backup = priced(
        faux_model(
            [FauxResponse([tool_call("echo", {"value": "x"})], usage=Usage(input=10, output=10))],
            id="backup",
        )
    )
    agent = Agent(
        model=primary,
        fallback_models=[backup],
        tools=[echo_tool()],
        usage_limits=UsageLimits(max_cost=0.50),
    )
    events = await prompt_collecting(agent)
    # The failed attempt is announced before the answer's message starts, and leaves no message.
    assert kinds(events)[:5] == [
        "agent_start",
        "turn_start",
        "message_start",
        "message_end",
        "fallback",
    ]
    assert kinds(events)[5] == "message_start"
    fallback = events[4]
    assert isinstance(fallback, FallbackEvent)
    assert (fallback.attempt.model.id, fallback.attempt.kind) == ("primary", "overloaded")
    replies = assistants(agent)
    assert replies[0].model == "backup"
    # Its cost counts: $0.60 of failed attempt reach the limit, so the answer's call never runs.
    usage = agent.state.usage
    assert (usage.turns, usage.requests, usage.tool_calls) == (1, 2, 0)
    assert usage.input_tokens == 200_010
    assert usage.cost == pytest.approx(catalog_cost(200_010, 10))
    assert results(agent)[0].is_error
    assert replies[-1].error_message == "Usage limit reached: cost $0.60 of $0.50"
    line = json.loads(event_to_json(fallback))
    assert line["type"] == "fallback" and line["kind"] == "overloaded" and line["status"] == 529
    assert line["message"]["model"] == "primary" and line["message"]["errorMessage"] == "Overloaded"
    assert line["next"] == {"provider": "faux", "model": "backup"}
    assert line["discarded"] is False


async def test_restart_marker_replaces_the_streaming_message() -> None:
    primary = faux_model(
        [FauxResponse([text("half of it")], error="Overloaded", error_status=529)], id="primary"
    )
    backup = faux_model([FauxResponse([text("the whole answer")])], id="backup")
    agent = Agent(
        model=primary, stream_fn=fallback_stream_fn([backup], restart_on_midstream_error=True)
    )
    seen: list[tuple[str, str]] = []
    agent.subscribe(
        lambda e: (
            seen.append((e.type, e.message.model))  # type: ignore[union-attr]
            if e.type.startswith("message_") and e.message.role == "assistant"  # type: ignore[union-attr]
            else None
        )
    )
    events = await prompt_collecting(agent)
    fallback = next(e for e in events if isinstance(e, FallbackEvent))
    assert fallback.attempt.discarded and fallback.attempt.message.text == "half of it"
    at = events.index(fallback)
    marker = events[at + 1]
    assert marker.type == "message_update"
    assert marker.assistant_message_event.type == "start"  # type: ignore[union-attr]
    assert marker.message.model == "backup"  # type: ignore[union-attr]
    assert seen[0] == ("message_start", "primary") and seen[-1] == ("message_end", "backup")
    assert [(m.model, m.text) for m in assistants(agent)] == [("backup", "the whole answer")]
    assert agent.state.usage.requests == 2


# --------------------------------------------------------------------------- the limits object


def test_usage_limits_are_frozen_and_checked() -> None:
    limits = UsageLimits(max_turns=2, max_cost=0.5)
    with pytest.raises(dataclasses.FrozenInstanceError):
        limits.max_turns = 3  # type: ignore[misc]
    with pytest.raises(ValueError, match="max_turns must not be negative"):
        UsageLimits(max_turns=-1)
    with pytest.raises(TypeError, match="max_tool_calls must be an int"):
        UsageLimits(max_tool_calls=2.5)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="max_output_tokens must be an int"):
        UsageLimits(max_output_tokens=True)
    with pytest.raises(ValueError, match="max_cost must be a finite number"):
        UsageLimits(max_cost=float("nan"))
    with pytest.raises(TypeError, match="max_cost must be a number"):
        UsageLimits(max_cost="0.5")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        UsageLimits(3)  # type: ignore[misc]
