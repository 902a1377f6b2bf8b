"""What an :class:`~tau.agent.Agent` holds (:class:`AgentState`), and how each event of a run
changes it (:func:`apply_event`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tau.agent.events import AgentEvent
from tau.agent.messages import AgentMessage
from tau.agent.tools import AgentTool
from tau.agent.types import AgentThinkingLevel
from tau.agent.usage import RunUsage
from tau.ai import AssistantMessage, Model

__all__ = ["AgentState", "apply_event"]


@dataclass(slots=True)
class AgentState:
    """What the agent holds; read it any time, change it through the agent's setters."""

    system_prompt: str = ""
    model: Model | None = None
    thinking_level: AgentThinkingLevel = "off"
    tools: list[AgentTool] = field(default_factory=list)
    messages: list[AgentMessage] = field(default_factory=list)
    is_streaming: bool = False
    stream_message: AgentMessage | None = None
    """The message between its ``message_start`` and ``message_end`` (the live partial)."""
    pending_tool_calls: set[str] = field(default_factory=set)
    """Ids of the tool calls between ``tool_execution_start`` and ``tool_execution_end``."""
    error: str | None = None
    """Why the last run failed or stopped early (provider error, abort), else None."""
    usage: RunUsage = field(default_factory=RunUsage)
    """The totals of the current or last run (``continue_()`` adds to them)."""
    output: Any = None
    """The validated output of the last run of an agent with an ``output_type`` (None while a
    run is active, and after a run that failed: ``error`` says why)."""


def apply_event(state: AgentState, event: AgentEvent) -> None:
    """Bring ``state`` up to date with ``event``, before any listener sees the event."""
    if event.type == "message_update" or event.type == "message_start":
        state.stream_message = event.message
    elif event.type == "message_end":
        state.stream_message = None
        state.messages.append(event.message)
    elif event.type == "tool_execution_start":
        state.pending_tool_calls.add(event.tool_call_id)
    elif event.type == "tool_execution_end":
        state.pending_tool_calls.discard(event.tool_call_id)
    elif event.type == "turn_end":
        message = event.message
        if isinstance(message, AssistantMessage) and message.error_message:
            state.error = message.error_message
    elif event.type == "agent_end":
        state.stream_message = None
        state.output = event.output
