"""Tool calls that wait for a person or for the caller: approval, external tools, decisions.

A tool with ``requires_approval=True`` (or a function of the call deciding it) runs only once
someone approved it; an ``external=True`` tool has a schema and no ``execute``: the caller
runs it (a browser, another service) and hands its result back. ``Agent(approver=...)`` asks a
live callback; without one (or when it returns None) the run **pauses**: the other calls of
the turn run as usual, then the run ends with ``RunResult.status == "paused"``, its
``pending`` calls and a :class:`~tau.agent.RunState` to resume from, in this process or
another one::

    result = await agent.prompt("Delete the build folder")
    if result.status == "paused":
        text = result.state.to_json()                       # store it; ask the user
        ...
        result = await agent.resume(RunState.from_json(text), {call.id: Approve()})

A decision per pending call: :class:`Approve` (``arguments=`` edits them: they are validated
again), :class:`Deny` (the model sees an error result with the reason) or, for an external
call, :class:`ToolResult`.

The run's side of it: :mod:`tau.agent.approval_gate`; what a paused run keeps:
:mod:`tau.agent.run_state`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

__all__ = [
    "DENIED_MESSAGE",
    "ApprovalRequirement",
    "Approve",
    "Approver",
    "Decision",
    "Deny",
    "PendingCall",
    "PendingKind",
    "ToolResult",
    "current_approver",
]

DENIED_MESSAGE = "The user denied this tool call."
"""The error result of a call denied without a reason."""


@dataclass(frozen=True, slots=True)
class Approve:
    """Run the call; ``arguments`` (a dict) replaces the model's, validated again first."""

    arguments: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class Deny:
    """Do not run the call: the model gets an error result saying ``reason``."""

    reason: str = DENIED_MESSAGE


@dataclass(frozen=True, slots=True)
class ToolResult:
    """The result of an external call, run by the caller: ``content`` is what a tool may
    return (text, content blocks, any JSON-able value), ``is_error`` marks a failure."""

    content: Any
    is_error: bool = False
    details: Any = None


Decision: TypeAlias = Approve | Deny | ToolResult
"""What :meth:`~tau.agent.Agent.resume` takes for each pending call."""

PendingKind: TypeAlias = Literal["approval", "external"]
"""Why a call waits: ``approval`` (Approve or Deny it) or ``external`` (the caller runs it)."""


@dataclass(frozen=True, slots=True)
class PendingCall:
    """A tool call waiting for a decision.

    ``arguments`` are the call's arguments after ``prepare_arguments`` and schema validation;
    ``kind`` is ``approval`` (Approve or Deny it) or ``external`` (give a ToolResult, or Deny
    it). ``path`` lists the ids of the sub-agent tool calls it waits inside, outermost first
    (empty for the agent's own calls).
    """

    id: str
    tool_name: str
    arguments: dict[str, Any]
    kind: PendingKind
    path: tuple[str, ...] = ()


ApprovalRequirement: TypeAlias = bool | Callable[[PendingCall], "bool | Awaitable[bool]"]
"""``AgentTool(requires_approval=...)``: always, never, or a function deciding per call."""

Approver: TypeAlias = Callable[[PendingCall], "Approve | Deny | bool | Awaitable[Any] | None"]
"""``Agent(approver=...)``: decides a call that needs approval while the run waits. True or
:class:`Approve` runs it, False or :class:`Deny` refuses it, None pauses the run."""


current_approver: ContextVar[Approver | None] = ContextVar("tau_current_approver", default=None)
"""The approver of the run whose code is running (its tools see it): a sub-agent without an
approver of its own asks this one."""
