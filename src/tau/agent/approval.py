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

:class:`ApprovalGate` is the run's side of it: the tool batch asks it about each call that
passed validation and ``before_tool_call``.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from tau.ai import AssistantMessage, ToolCall, ToolResultMessage

if TYPE_CHECKING:
    from tau.agent.run_state import RunState
    from tau.agent.tools import AgentTool, AgentToolResult

__all__ = [
    "DENIED_MESSAGE",
    "ApprovalRequirement",
    "Approve",
    "Approver",
    "Decision",
    "Deny",
    "PendingCall",
    "PendingKind",
    "ToolPaused",
    "ToolResult",
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


@dataclass(frozen=True, slots=True)
class NestedPause:
    """A sub-agent tool call whose own run paused: its state, resumed as part of this one."""

    id: str
    tool_name: str
    arguments: dict[str, Any]
    state: RunState


PausedCall: TypeAlias = PendingCall | NestedPause
"""What a paused run waits on, per call of its last turn."""


class ToolPaused(Exception):
    """Raised by a tool whose work paused (a sub-agent waiting for a decision): the call
    becomes pending in the calling run, with ``state`` resumed when the run is."""

    def __init__(self, state: RunState) -> None:
        super().__init__("the tool's run paused")
        self.state = state


class ResumableTool:
    """A tool that can continue a paused run of its own (a sub-agent tool)."""

    def resumed(self, state: RunState, decisions: Mapping[str, Decision]) -> AgentTool:
        """A tool whose execution resumes ``state`` with ``decisions``."""
        raise NotImplementedError


def flatten(paused: list[PausedCall]) -> list[PendingCall]:
    """The pending calls a person decides on, nested sub-agent calls included."""
    out: list[PendingCall] = []
    for entry in paused:
        if isinstance(entry, PendingCall):
            out.append(entry)
        else:
            for inner in entry.state.pending:
                out.append(
                    PendingCall(
                        inner.id,
                        inner.tool_name,
                        inner.arguments,
                        inner.kind,
                        (entry.id, *inner.path),
                    )
                )
    return out


@dataclass(slots=True)
class Resumption:
    """What a resumed run starts with: the paused turn's message and the calls to finish."""

    message: AssistantMessage
    calls: list[ToolCall]
    """The pending calls of ``message`` in call order (approved edits applied)."""
    decisions: dict[str, Decision]
    nested: dict[str, tuple[RunState, dict[str, Decision]]] = field(default_factory=dict)
    earlier_results: list[ToolResultMessage] = field(default_factory=list)
    """Results the paused turn already had (its calls that needed nothing)."""
    trace_link: dict[str, str] | None = None
    """The paused run's span (see :class:`~tau.agent.AgentPausedEvent`)."""


@dataclass(slots=True)
class Verdict:
    """What the gate says about one call: run it (maybe with other arguments or another
    tool), refuse it with an error result, or leave it pending."""

    action: Literal["run", "refuse", "pend"]
    args: Any = None
    call: ToolCall | None = None
    tool: AgentTool | None = None
    message: str = ""
    pending: PendingCall | None = None


Validate: TypeAlias = Callable[["AgentTool", ToolCall], Any]


async def _maybe_await(value: Any) -> Any:
    if inspect.isawaitable(value):
        return await value
    return value


async def requires_approval(tool: AgentTool, pending: PendingCall) -> bool:
    """Whether ``tool`` wants approval for this call (its setting, or its function's answer)."""
    requirement = getattr(tool, "requires_approval", False)
    if callable(requirement):
        return bool(await _maybe_await(requirement(pending)))
    return bool(requirement)


class ApprovalGate:
    """One run's approval decisions: a live approver, or a resumption's decisions."""

    __slots__ = ("approver", "resumption")

    def __init__(self, approver: Approver | None, resumption: Resumption | None) -> None:
        self.approver = approver
        self.resumption = resumption

    def decided(self, call: ToolCall) -> tuple[AgentToolResult, bool] | None:
        """The result a resumption's Deny or ToolResult gives ``call`` (it does not run)."""
        from tau.agent.tools import as_tool_result, error_tool_result

        resumption = self.resumption
        if resumption is None:
            return None
        decision = resumption.decisions.get(call.id)
        if isinstance(decision, Deny):
            return error_tool_result(decision.reason), True
        if isinstance(decision, ToolResult):
            result = as_tool_result(decision.content)
            if decision.details is not None:
                result.details = decision.details
            return result, decision.is_error
        return None

    async def check(
        self, tool: AgentTool, call: ToolCall, args: Any, validate: Validate
    ) -> Verdict:
        """Decide a validated call: run, refuse or pend."""
        resumption = self.resumption
        if resumption is not None and call.id in resumption.nested:
            state, decisions = resumption.nested[call.id]
            if not isinstance(tool, ResumableTool):
                return Verdict("refuse", message=f"Tool {tool.name} cannot resume a paused run")
            return Verdict("run", args, call, tool.resumed(state, decisions))
        if resumption is not None and isinstance(resumption.decisions.get(call.id), Approve):
            return Verdict("run", args, call)
        external = bool(getattr(tool, "external", False))
        pending = PendingCall(
            call.id, call.name, dict(call.arguments), "external" if external else "approval"
        )
        if external:
            return Verdict("pend", pending=pending)
        if not await requires_approval(tool, pending):
            return Verdict("run", args, call)
        if self.approver is None:
            return Verdict("pend", pending=pending)
        answer = await _maybe_await(self.approver(pending))
        if answer is None:
            return Verdict("pend", pending=pending)
        if answer is True:
            return Verdict("run", args, call)
        if answer is False:
            return Verdict("refuse", message=DENIED_MESSAGE)
        if isinstance(answer, Deny):
            return Verdict("refuse", message=answer.reason)
        if isinstance(answer, Approve):
            if answer.arguments is None:
                return Verdict("run", args, call)
            edited = ToolCall(call.id, call.name, dict(answer.arguments), call.thought_signature)
            return Verdict("run", validate(tool, edited), edited)
        raise TypeError(
            f"the approver must return Approve, Deny, True, False or None, not "
            f"{type(answer).__name__}"
        )
