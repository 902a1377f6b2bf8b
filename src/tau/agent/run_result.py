""":class:`RunResult`: what one agent run (``prompt()`` or ``continue_()``) produced."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeAlias

from typing_extensions import TypeVar

from tau.agent.messages import AgentMessage
from tau.ai import AssistantMessage, StopReason

if TYPE_CHECKING:
    from tau.agent.approval import PendingCall
    from tau.agent.run_state import RunState
    from tau.agent.usage import RunUsage

RunStatus: TypeAlias = Literal["completed", "paused", "error", "aborted"]
"""How a run ended (:attr:`RunResult.status`): ``paused`` when calls wait for a decision."""

__all__ = ["OutputT", "RunResult", "RunStatus"]

OutputT = TypeVar("OutputT", default=Any)
"""The type of a run's validated output."""


@dataclass(slots=True, kw_only=True)
class RunResult(Generic[OutputT]):
    """What one run (``prompt()`` or ``continue_()``) produced.

    ``messages`` are the messages the run added to the transcript, in order: the input (for
    ``prompt()``), each assistant message, each tool result. ``final_message`` is the last
    assistant message among them (None only if the run failed before any model call).
    ``error`` says why the run failed or stopped early (as ``state.error``), else None;
    ``aborted`` is true when ``abort()`` ended it, whatever the last message says (a run
    aborted while its tools ran ends on a message whose stop reason is ``toolUse``).
    ``output`` is the validated output of an agent with an ``output_type`` (None when the run
    failed: ``error`` then says why, e.g. ``No valid output (City) after 2 attempts: …``).
    ``has_output`` tells a validated output that is None (an ``Optional`` type, a ``null``
    schema) from no output; it is always true when ``output`` is not None.
    ``state`` is set when the run paused (``status == "paused"``): tool calls wait for a
    decision (``pending``); resume it with :meth:`~tau.agent.Agent.resume`.
    """

    messages: list[AgentMessage]
    final_message: AssistantMessage | None
    error: str | None = None
    aborted: bool = False
    output: OutputT | None = None
    has_output: bool = False
    state: RunState | None = None
    usage: RunUsage | None = None
    """The run's totals (as ``agent_end`` reported them; None if it broke off before)."""

    def __post_init__(self) -> None:
        if self.output is not None:
            self.has_output = True

    @property
    def status(self) -> RunStatus:
        """``paused`` (calls wait for a decision), ``aborted``, ``error`` or ``completed``."""
        if self.state is not None:
            return "paused"
        if self.aborted:
            return "aborted"
        if self.error is not None:
            return "error"
        return "completed"

    @property
    def pending(self) -> list[PendingCall]:
        """The calls a paused run waits on (empty unless ``status == "paused"``)."""
        return self.state.pending if self.state is not None else []

    @property
    def text(self) -> str:
        """The final assistant message's text (``""`` if there is none)."""
        return self.final_message.text if self.final_message is not None else ""

    @property
    def stop_reason(self) -> StopReason:
        """Why the run ended: ``aborted`` or ``error`` when it did not finish, else the final
        message's stop reason (``stop``, or ``length`` for an answer cut at ``max_tokens``)."""
        if self.aborted:
            return "aborted"
        final = self.final_message
        if final is None or (self.error is not None and final.stop_reason != "aborted"):
            return "error"
        return final.stop_reason
