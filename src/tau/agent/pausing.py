"""The :class:`~tau.agent.Agent`'s side of paused runs and sub-agents: the state a paused run
leaves (:func:`paused_state`), resuming it (:func:`resume_agent`), and a copy of an agent
built the same way (:func:`fork_agent`, what a sub-agent tool runs).

``agent`` is an :class:`~tau.agent.Agent`, typed ``Any`` here: ``tau.agent.agent`` imports
this module, and the import graph of ``tau.agent`` has no cycles.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from tau.agent.approval import Decision
from tau.agent.events import AgentPausedEvent
from tau.agent.listeners import Listeners
from tau.agent.loop import AgentError
from tau.agent.run_result import RunResult
from tau.agent.run_state import RunState, plan_resume
from tau.agent.state import AgentState

__all__ = ["fork_agent", "paused_state", "resume_agent"]

BUSY = "Agent is already processing. Wait for completion before resuming."


def paused_state(agent: Any, event: AgentPausedEvent) -> RunState:
    """The state of ``agent``'s run that just paused; the queued messages move into it (a
    resume, here or elsewhere, delivers them)."""
    steering = [*event.steering, *agent._steering]
    follow_ups = list(agent._follow_ups)
    agent.clear_all_queues()
    spec = agent.output_type
    return RunState(
        messages=list(agent.state.messages),
        paused=list(event.paused),
        usage=agent.state.usage.copy(),
        agent=agent.name,
        output=spec.name if spec is not None else None,
        steering=steering,
        follow_ups=follow_ups,
        trace_link=event.trace_link,
    )


async def resume_agent(
    agent: Any, state: RunState, decisions: Mapping[str, Decision], *, keep_usage: bool
) -> RunResult[Any]:
    """:meth:`tau.agent.Agent.resume`; ``keep_usage`` counts on in the agent's current totals
    instead of the state's (a sub-agent counting into its parent's)."""
    if agent.state.is_streaming:
        raise AgentError(BUSY)
    if not isinstance(state, RunState):
        raise TypeError(f"resume() needs a RunState, not {type(state).__name__}")
    spec = agent.output_type
    expected = spec.name if spec is not None else None
    if state.output != expected:
        raise ValueError(
            f"the state comes from a run whose output is {state.output!r}; this agent's "
            f"is {expected!r}: resume with an agent built the same way"
        )
    resumption = plan_resume(state, decisions, agent.state.tools)
    agent.state.messages = list(state.messages)
    if not keep_usage:
        agent.state.usage = state.usage.copy()
    agent._steering[:0] = state.steering
    agent._follow_ups[:0] = state.follow_ups
    result: RunResult[Any] = await agent._run(None, resume_from=resumption)
    return result


def fork_agent(agent: Any) -> Any:
    """A new agent built like ``agent`` (model, prompt, tools, hooks, limits, output type),
    with an empty transcript and no queued messages or listeners."""
    clone = copy.copy(agent)
    state = agent.state
    clone._state = AgentState(
        system_prompt=state.system_prompt,
        model=state.model,
        thinking_level=state.thinking_level,
        tools=list(state.tools),
    )
    clone.stream_options = dict(agent.stream_options)
    clone.fallback_models = list(agent.fallback_models)
    clone.tool_sources = list(agent.tool_sources)
    clone.output_validators = list(agent.output_validators)
    clone._listeners = Listeners()
    clone._steering = []
    clone._follow_ups = []
    clone._controller = None
    clone._idle = None
    clone._run_task = None
    clone._run_end = None
    clone._run_paused = None
    return clone
