""":class:`RunResult`: what one agent run (``prompt()`` or ``continue_()``) produced."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Generic

from typing_extensions import TypeVar

from tau.agent.messages import AgentMessage
from tau.ai import AssistantMessage, StopReason

__all__ = ["OutputT", "RunResult"]

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
    """

    messages: list[AgentMessage]
    final_message: AssistantMessage | None
    error: str | None = None
    aborted: bool = False
    output: OutputT | None = None
    has_output: bool = False

    def __post_init__(self) -> None:
        if self.output is not None:
            self.has_output = True

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
