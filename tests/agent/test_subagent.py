"""Sub-agents (``agent.as_tool``): events, usage and limits, abort, typed output, pause."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from tau.agent import (
    Agent,
    AgentEvent,
    Approve,
    Deny,
    PendingCall,
    RunState,
    ToolExecutionUpdateEvent,
    UsageLimits,
    agent_tool,
)
from tau.ai import Context, ToolResultMessage, Usage
from tau.ai.providers.faux import FauxResponse, faux_calls, faux_model, text, tool_call

from .helpers import hanging_stream_fn, result_text

TIMEOUT = 10.0


def results(context: Context) -> list[ToolResultMessage]:
    return [m for m in context.messages if isinstance(m, ToolResultMessage)]


def lead_script(context: Context, options: Mapping[str, Any]) -> FauxResponse:
    """Delegate once; then answer with what the sub-agent said."""
    done = results(context)
    if done:
        prefix = "error: " if done[-1].is_error else ""
        return FauxResponse([text(f"lead: {prefix}{result_text(done[-1])}")], usage=Usage(10, 5))
    return FauxResponse(
        [tool_call("research", {"task": "find the capital"}, id="r1")], usage=Usage(10, 5)
    )


def worker_script(context: Context, options: Mapping[str, Any]) -> FauxResponse:
    """Look it up with a tool, then answer."""
    done = results(context)
    if done:
        return FauxResponse([text(f"capital is {result_text(done[-1])}")], usage=Usage(100, 50))
    return FauxResponse([tool_call("lookup", {"q": "capital"}, id="w1")], usage=Usage(100, 50))


def worker(**options: Any) -> tuple[Agent, list[str]]:
    looked: list[str] = []

    @agent_tool(requires_approval=options.pop("approval", False))
    def lookup(q: str) -> str:
        """Look something up."""
        looked.append(q)
        return "Paris"

    return Agent(model=faux_model(worker_script), tools=[lookup], **options), looked


async def test_usage_rolls_up_and_events_reach_the_parent() -> None:
    sub, looked = worker()
    lead = Agent(model=faux_model(lead_script), tools=[sub.as_tool("research", "Research")])
    updates: list[ToolExecutionUpdateEvent] = []
    lead.subscribe(lambda e: updates.append(e) if isinstance(e, ToolExecutionUpdateEvent) else None)
    result = await lead.prompt("What is the capital?")

    assert result.text == "lead: capital is Paris"
    assert looked == ["capital"]
    usage = lead.state.usage
    assert (usage.turns, usage.requests, usage.tool_calls) == (4, 4, 2)
    assert (usage.input_tokens, usage.output_tokens) == (2 * 10 + 2 * 100, 2 * 5 + 2 * 50)
    assert sub.state.messages == []  # each call runs a fork on its own context
    forwarded = [u.partial_result.details["event"]["type"] for u in updates]
    assert forwarded[0] == "agent_start" and forwarded[-1] == "agent_end"
    assert "tool_execution_end" in forwarded
    assert {u.tool_call_id for u in updates} == {"r1"}
    assert {u.partial_result.details["agent"] for u in updates} == {"research"}
    assert result_text(updates[-1].partial_result) == "capital is Paris"


async def test_the_parents_limits_bound_the_sub_agent() -> None:
    sub, looked = worker()
    lead = Agent(
        model=faux_model(lead_script),
        tools=[sub.as_tool("research", "Research")],
        usage_limits=UsageLimits(max_turns=2),
    )
    result = await lead.prompt("What is the capital?")
    # Turn 1 is the lead's, turn 2 the sub-agent's first; its second request is refused.
    assert looked == ["capital"]
    tool_result = next(m for m in result.messages if isinstance(m, ToolResultMessage))
    assert tool_result.is_error
    assert "sub-agent research failed: Usage limit reached: turns 2 of 2" in result_text(
        tool_result
    )
    assert result.error == "Usage limit reached: turns 2 of 2"
    assert lead.state.usage.turns == 2


async def test_typed_output_is_the_tools_result() -> None:
    class Capital(BaseModel):
        city: str
        country: str

    answer = json.dumps({"city": "Paris", "country": "France"})
    sub = Agent(
        model=faux_model([FauxResponse([text(answer)])]),
        output_type=Capital,
        output_mode="native",
    )
    lead = Agent(model=faux_model(lead_script), tools=[sub.as_tool("research", "Research")])
    result = await lead.prompt("go")
    tool_result = next(m for m in result.messages if isinstance(m, ToolResultMessage))
    assert not tool_result.is_error
    assert json.loads(result_text(tool_result)) == {"city": "Paris", "country": "France"}
    assert tool_result.details == Capital(city="Paris", country="France")


async def test_abort_reaches_the_sub_agent() -> None:
    started = asyncio.Event()
    sub = Agent(model=faux_model(), stream_fn=hanging_stream_fn(started))
    events: list[AgentEvent] = []
    lead = Agent(model=faux_model(lead_script), tools=[sub.as_tool("research", "Research")])
    lead.subscribe(events.append)
    task = asyncio.ensure_future(lead.prompt("go"))
    await asyncio.wait_for(started.wait(), TIMEOUT)
    lead.abort()
    result = await asyncio.wait_for(task, TIMEOUT)
    assert result.status == "aborted"
    forwarded = [
        e.partial_result.details["event"] for e in events if isinstance(e, ToolExecutionUpdateEvent)
    ]
    ends = [f for f in forwarded if f["type"] == "message_end"]
    assert ends and ends[-1]["message"]["stopReason"] == "aborted"


async def test_a_paused_sub_agent_pauses_the_parent_and_resumes_as_one_state() -> None:
    sub, looked = worker(approval=True)
    lead_model = faux_model(lead_script)
    lead = Agent(model=lead_model, tools=[sub.as_tool("research", "Research")])
    result = await lead.prompt("What is the capital?")

    assert result.status == "paused"
    assert [(c.id, c.tool_name, c.kind, c.path) for c in result.pending] == [
        ("w1", "lookup", "approval", ("r1",))
    ]
    assert looked == []
    assert result.state is not None
    text_state = result.state.to_json()
    assert lead.state.usage.turns == 2

    # A new parent and sub-agent, built the same way, resume the one state.
    sub2, looked2 = worker(approval=True)
    lead2 = Agent(model=lead_model, tools=[sub2.as_tool("research", "Research")])
    done = await lead2.resume(RunState.from_json(text_state), {"w1": Approve()})
    assert done.text == "lead: capital is Paris"
    assert looked2 == ["capital"]
    assert lead2.state.usage.turns == 4
    assert lead2.state.usage.tool_calls == 2

    denied = await lead2.resume(RunState.from_json(text_state), {"w1": Deny("not allowed")})
    assert denied.text == "lead: capital is not allowed"
    assert len(faux_calls(lead_model)) == 3


async def test_the_parents_live_approver_decides_the_sub_agents_calls() -> None:
    asked: list[str] = []

    def approver(call: PendingCall) -> bool:
        asked.append(f"{call.tool_name}:{call.arguments['q']}")
        return True

    sub, looked = worker(approval=True)
    lead = Agent(
        model=faux_model(lead_script),
        tools=[sub.as_tool("research", "Research")],
        approver=approver,
    )
    result = await lead.prompt("What is the capital?")
    assert result.status == "completed"
    assert result.text == "lead: capital is Paris"
    assert asked == ["lookup:capital"] and looked == ["capital"]
