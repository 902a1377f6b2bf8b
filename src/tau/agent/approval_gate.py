"""The run's side of approval: :class:`ApprovalGate` decides each call that passed validation
and ``before_tool_call`` (run it, refuse it, or leave it pending), from a live approver or a
resumption's decisions (see :mod:`tau.agent.approval`)."""

from __future__ import annotations

import inspect
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from tau.agent.approval import (
    DENIED_MESSAGE,
    Approve,
    Approver,
    Decision,
    Deny,
    PendingCall,
    ToolResult,
)
from tau.agent.run_state import Resumption, RunState
from tau.agent.tools import AgentTool, AgentToolResult, as_tool_result, error_tool_result
from tau.ai import ToolCall

__all__ = ["ApprovalGate", "ResumableTool", "Verdict", "requires_approval"]


class ResumableTool(ABC):
    """A tool that can continue a paused run of its own (a sub-agent tool)."""

    @abstractmethod
    def resumed(self, state: RunState, decisions: Mapping[str, Decision]) -> AgentTool:
        """A tool whose execution resumes ``state`` with ``decisions``."""


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


Validate: TypeAlias = Callable[[AgentTool, ToolCall], Any]


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

    def passes(self, tool: AgentTool) -> bool:
        """Whether calls of ``tool`` run without asking the gate (the common case: no
        resumption, an ordinary tool without approval), so the batch skips :meth:`check`."""
        return (
            self.resumption is None
            and getattr(tool, "requires_approval", False) is False
            and not getattr(tool, "external", False)
        )

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
