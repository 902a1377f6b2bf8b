"""A session whose last run stopped at tool calls nobody decided: found again by ``tau -c``.

A run stops there when its process is killed while the y/N question is open, or when it
pauses for lack of an answer (an RPC client that closed stdin). Either way the session file
ends on an assistant message whose tool calls have no results. Resuming the session finds
them (:func:`paused_run`): the interactive session shows them and asks again, and the
answers continue the run through ``agent.resume(state, decisions)`` (calls that need no
approval, a ``read`` of the same turn, are run again without asking).

What the transcript cannot say is kept in a ``custom`` entry of the session file (pi's JSONL
v3), ``customType`` :data:`PAUSED_RUN`, written before each question and when a run pauses::

    {"type": "custom", "customType": "tau.paused_run", "id": ..., "parentId": ..., "timestamp": ...,
     "data": {"state": <a tau.agent RunState as JSON, with "messages": []>}}

Its ``usage`` (so ``--max-turns``/``--max-cost`` keep counting), queued messages and the
paused runs of sub-agents are used when its calls are the ones still unanswered. The messages
themselves are the session's own (not repeated in the entry).

A new prompt sent instead (a one-shot ``tau -c "..."``, an RPC ``prompt``) first closes the
paused calls with error results saying they were not run (:func:`dismissal`): every provider
needs a result for each call.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tau.agent import (
    AgentMessage,
    AgentTool,
    Approve,
    Decision,
    Deny,
    PendingCall,
    RunState,
    RunUsage,
)
from tau.ai import AssistantMessage, SerializationError, TextContent, ToolCall, ToolResultMessage
from tau.cli.approvals import Approvals

__all__ = [
    "NOT_RUN",
    "PAUSED_RUN",
    "asks",
    "decide",
    "dismissal",
    "paused_run",
    "question_data",
    "record_data",
    "unanswered",
]

PAUSED_RUN = "tau.paused_run"
"""``customType`` of the session entry that keeps a paused run's state."""

NOT_RUN = "The run stopped before this call was decided; it was not run."
"""The error result of a paused call closed by a new prompt."""


def unanswered(messages: Sequence[AgentMessage]) -> list[ToolCall]:
    """The tool calls of the transcript's last turn that have no result yet (in call order);
    empty unless the transcript ends on that turn (its message, then only tool results)."""
    index = len(messages) - 1
    while index >= 0 and isinstance(messages[index], ToolResultMessage):
        index -= 1
    if index < 0:
        return []
    turn = messages[index]
    if not isinstance(turn, AssistantMessage) or turn.stop_reason != "toolUse":
        return []
    answered = {m.tool_call_id for m in messages[index + 1 :] if isinstance(m, ToolResultMessage)}
    return [call for call in turn.tool_calls if call.id not in answered]


def record_data(state: RunState) -> dict[str, Any]:
    """The :data:`PAUSED_RUN` entry's ``data`` for ``state`` (its messages left out)."""
    dumped = state.dump()
    dumped["messages"] = []
    return {"state": dumped}


def question_data(messages: Sequence[AgentMessage], usage: RunUsage) -> dict[str, Any] | None:
    """The :data:`PAUSED_RUN` entry's ``data`` while a question is open: every call of the turn
    still unanswered (None when there is none)."""
    calls = unanswered(messages)
    if not calls:
        return None
    waiting = [PendingCall(c.id, c.name, dict(c.arguments), "approval") for c in calls]
    return record_data(RunState(messages=[], paused=list(waiting), usage=usage.copy()))


def _recorded(data: Any) -> RunState | None:
    if not isinstance(data, dict):
        return None
    try:
        return RunState.load(data.get("state"))
    except (SerializationError, ValueError):
        return None  # an entry this tau cannot read: the transcript alone still resumes


def paused_run(
    messages: Sequence[AgentMessage], recorded: Any, *, output: str | None = None
) -> RunState | None:
    """The state to resume a session from, when its transcript ends on unanswered calls.

    ``recorded`` is the data of the session's last :data:`PAUSED_RUN` entry (or None);
    ``output`` the name of the agent's output type (a state must match its agent's).
    """
    calls = unanswered(messages)
    if not calls:
        return None
    kept = _recorded(recorded)
    known = {entry.id: entry for entry in kept.paused} if kept is not None else {}
    if not any(call.id in known for call in calls):
        kept = None  # an entry from an earlier pause: nothing of it applies
    return RunState(
        messages=list(messages),
        paused=[
            known.get(call.id) or PendingCall(call.id, call.name, dict(call.arguments), "approval")
            for call in calls
        ],
        usage=kept.usage if kept is not None else RunUsage(),
        output=output,
        steering=kept.steering if kept is not None else [],
        follow_ups=kept.follow_ups if kept is not None else [],
    )


def dismissal(state: RunState) -> list[ToolResultMessage]:
    """An error result for each paused call of ``state`` (see the module docstring)."""
    return [
        ToolResultMessage(entry.id, entry.tool_name, [TextContent(NOT_RUN)], is_error=True)
        for entry in state.paused
    ]


def asks(call: PendingCall, tools: Sequence[AgentTool], *, yes: bool) -> bool:
    """Whether the user decides a paused ``call`` (else it runs again unasked: a ``read`` of
    the same turn, a call that needs no approval). An unknown tool (an MCP server's, not
    started yet) is asked about unless ``yes``."""
    tool = next((t for t in tools if t.name == call.tool_name), None)
    if yes:
        return False
    return tool is None or call.kind == "external" or bool(tool.requires_approval)


async def decide(
    state: RunState, approvals: Approvals, tools: Sequence[AgentTool], *, yes: bool
) -> dict[str, Decision] | None:
    """A decision per pending call of ``state``, asking through ``approvals`` where the user
    decides; None when an answer left a call pending."""
    decisions: dict[str, Decision] = {}
    for call in state.pending:
        answer = await approvals(call) if asks(call, tools, yes=yes) else True
        if answer is None:
            return None
        if isinstance(answer, Approve | Deny):
            decisions[call.id] = answer
        else:
            decisions[call.id] = Approve() if answer else Deny()
    return decisions
