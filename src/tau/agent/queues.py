"""An agent's message queues: steering messages (delivered after the current tool calls) and
follow-ups (delivered when the agent would otherwise stop), taken one or all at a time."""

from __future__ import annotations

from typing import Literal, TypeAlias

from tau.agent.messages import AgentMessage
from tau.ai import TextContent, UserMessage

__all__ = ["QueueMode", "as_message", "take_queued"]

QueueMode: TypeAlias = Literal["one-at-a-time", "all"]
"""How many queued messages one poll delivers: the oldest one, or every one."""


def take_queued(queue: list[AgentMessage], mode: QueueMode) -> list[AgentMessage]:
    """Remove and return what one poll delivers from ``queue``."""
    if not queue:
        return []
    if mode == "all":
        taken = list(queue)
        queue.clear()
        return taken
    return [queue.pop(0)]


def as_message(message: AgentMessage | str) -> AgentMessage:
    """A queued message: text becomes a user message."""
    if isinstance(message, str):
        return UserMessage([TextContent(message)])
    return message
