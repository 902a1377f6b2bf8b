"""The events of an agent run, and their JSON form.

Grammar of one run (what a UI can rely on)::

    agent_start
      ( turn_start
          (message_start message_end)*            injected prompts / steering / follow-ups
          message_start message_update* message_end      the assistant message
          ( tool_execution_start ... )*           one per tool call, in call order
          ( tool_execution_update* tool_execution_end message_start message_end )*
                                                  in call order, each end followed by its result
        turn_end )+
      agent_paused?                               calls wait for a decision (see tau.agent.approval)
    agent_end

A call left waiting for a decision gets its ``tool_execution_start`` and no end in the run
that pauses; the run that resumes it gives it a new ``tool_execution_start`` and its end.

With fallback models, ``fallback`` events (one per failed attempt) come right before the
assistant message's ``message_start``; a failed attempt sends nothing else. With
``restart_on_midstream_error`` a ``fallback`` whose attempt is ``discarded`` may also come
between ``message_update`` events: the next ``message_update`` then carries a ``start``
provider event and a new ``message``, and what was shown of the old one is void.
``agent_end`` carries the run's :class:`~tau.agent.RunUsage` totals, and its validated
``output`` when the run has an ``output_type`` (see :mod:`tau.agent.output`).

With an ``output_type``, ``output_update`` events carry the output as it forms: one right
after the ``message_update`` whose delta changed the partial output, and one between the last
``turn_end`` and ``agent_end`` when the validated output differs from the last partial. Each
value comes once; the last one is the output.

``message_update`` is the per-token event: its ``message`` is the live partial message (the
same object every time, never a copy — copy it if you keep it) and
``assistant_message_event`` the provider event that changed it.

:func:`dump_event` gives the JSON form (pi's field names: ``toolCallId``,
``assistantMessageEvent``, ``partialResult``…), which ``tau --json`` prints one per line.
Provider events are written without their redundant ``partial``.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar, Literal, TypeAlias, cast

from pydantic_core import to_jsonable_python

from tau.agent.approval import PendingCall
from tau.agent.messages import AgentMessage, dump_agent_message
from tau.agent.run_state import PausedCall, flatten
from tau.agent.tools import AgentToolResult
from tau.agent.usage import RunUsage
from tau.ai import (
    AssistantMessage,
    AssistantMessageEvent,
    DoneEvent,
    ErrorEvent,
    FailedAttempt,
    TextDeltaEvent,
    TextEndEvent,
    TextStartEvent,
    ThinkingDeltaEvent,
    ThinkingEndEvent,
    ThinkingStartEvent,
    ToolCallDeltaEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
    ToolResultMessage,
    dump_message,
)
from tau.ai.adapters import dump_content

__all__ = [
    "AGENT_EVENT_TYPES",
    "AgentEndEvent",
    "AgentEvent",
    "AgentPausedEvent",
    "AgentStartEvent",
    "FallbackEvent",
    "MessageEndEvent",
    "MessageStartEvent",
    "MessageUpdateEvent",
    "OutputUpdateEvent",
    "ToolExecutionEndEvent",
    "ToolExecutionStartEvent",
    "ToolExecutionUpdateEvent",
    "TurnEndEvent",
    "TurnStartEvent",
    "dump_assistant_event",
    "dump_event",
    "dump_tool_result",
    "event_to_json",
]


class AgentStartEvent:
    """The run has started (always the first event)."""

    __slots__ = ()
    type: ClassVar[Literal["agent_start"]] = "agent_start"

    def __repr__(self) -> str:
        return "AgentStartEvent()"


class AgentEndEvent:
    """The run is over; ``messages`` is every message it added, in order, ``usage`` the run's
    totals (tokens, cost, turns, requests and tool calls), and ``output`` the validated output
    of a run with an ``output_type`` (None otherwise, or when the run failed: its last message
    then says why). ``has_output`` tells a validated output that is None (an ``Optional`` type,
    a ``null`` schema) from no output; it defaults to ``output is not None``."""

    __slots__ = ("has_output", "messages", "output", "usage")
    type: ClassVar[Literal["agent_end"]] = "agent_end"

    def __init__(
        self,
        messages: list[AgentMessage],
        usage: RunUsage | None = None,
        output: Any = None,
        *,
        has_output: bool | None = None,
    ) -> None:
        self.messages = messages
        self.usage = usage if usage is not None else RunUsage()
        self.output = output
        self.has_output = output is not None if has_output is None else has_output

    def __repr__(self) -> str:
        return f"AgentEndEvent(messages=<{len(self.messages)}>)"


class AgentPausedEvent:
    """The run pauses: ``pending`` calls wait for a decision (``agent_end`` follows).

    ``paused`` is what the run waits on per call (a sub-agent's paused run included);
    ``steering`` the steering messages taken from the queue but not delivered, kept for the
    resumed run. ``trace_link`` is set by a tracing observer (``tau.telemetry``) to the
    paused run's span (``{"traceId": ..., "spanId": ...}``), which the resumed run's span
    links to.
    """

    __slots__ = ("paused", "steering", "trace_link")
    type: ClassVar[Literal["agent_paused"]] = "agent_paused"

    def __init__(
        self, paused: list[PausedCall], steering: list[AgentMessage] | None = None
    ) -> None:
        self.paused = paused
        self.steering = steering or []
        self.trace_link: dict[str, str] | None = None

    @property
    def pending(self) -> list[PendingCall]:
        """The calls waiting for a decision, nested sub-agent calls included."""
        return flatten(self.paused)

    def __repr__(self) -> str:
        return f"AgentPausedEvent(pending={[c.id for c in self.pending]})"


class TurnStartEvent:
    """A turn (one assistant response and its tool calls) starts."""

    __slots__ = ()
    type: ClassVar[Literal["turn_start"]] = "turn_start"

    def __repr__(self) -> str:
        return "TurnStartEvent()"


class TurnEndEvent:
    """The turn is over: its assistant ``message`` and the ``tool_results`` in call order."""

    __slots__ = ("message", "tool_results")
    type: ClassVar[Literal["turn_end"]] = "turn_end"

    def __init__(self, message: AssistantMessage, tool_results: list[ToolResultMessage]) -> None:
        self.message = message
        self.tool_results = tool_results

    def __repr__(self) -> str:
        return f"TurnEndEvent(stop_reason={self.message.stop_reason!r}, tool_results=<{len(self.tool_results)}>)"


class MessageStartEvent:
    """A message enters the transcript (any role)."""

    __slots__ = ("message",)
    type: ClassVar[Literal["message_start"]] = "message_start"

    def __init__(self, message: AgentMessage) -> None:
        self.message = message

    def __repr__(self) -> str:
        return f"MessageStartEvent(role={self.message.role!r})"


class MessageUpdateEvent:
    """The streaming assistant message changed (``message`` is the live partial)."""

    __slots__ = ("assistant_message_event", "message")
    type: ClassVar[Literal["message_update"]] = "message_update"

    def __init__(
        self, message: AssistantMessage, assistant_message_event: AssistantMessageEvent
    ) -> None:
        self.message = message
        self.assistant_message_event = assistant_message_event

    def __repr__(self) -> str:
        return f"MessageUpdateEvent({self.assistant_message_event!r})"


class MessageEndEvent:
    """The message is final and part of the transcript."""

    __slots__ = ("message",)
    type: ClassVar[Literal["message_end"]] = "message_end"

    def __init__(self, message: AgentMessage) -> None:
        self.message = message

    def __repr__(self) -> str:
        return f"MessageEndEvent(role={self.message.role!r})"


class OutputUpdateEvent:
    """The output as it forms: ``output`` is the new partial value (a partial pydantic model
    is a ``Partial<Name>`` instance with None for what has not arrived), or the output itself
    when it is the last one."""

    __slots__ = ("output",)
    type: ClassVar[Literal["output_update"]] = "output_update"

    def __init__(self, output: Any) -> None:
        self.output = output

    def __repr__(self) -> str:
        return f"OutputUpdateEvent({self.output!r})"


class FallbackEvent:
    """A model failed and the next one takes over (see :func:`tau.ai.fallback_stream_fn`).

    ``attempt`` says which model failed, why (its ``kind`` and ``error_message``), what it
    cost (``attempt.message.usage``, counted in the run's usage) and which model comes next.
    """

    __slots__ = ("attempt",)
    type: ClassVar[Literal["fallback"]] = "fallback"

    def __init__(self, attempt: FailedAttempt) -> None:
        self.attempt = attempt

    def __repr__(self) -> str:
        return f"FallbackEvent({self.attempt!r})"


class ToolExecutionStartEvent:
    """A tool call is about to be prepared and run; ``args`` are the model's raw arguments."""

    __slots__ = ("args", "tool_call_id", "tool_name")
    type: ClassVar[Literal["tool_execution_start"]] = "tool_execution_start"

    def __init__(self, tool_call_id: str, tool_name: str, args: dict[str, Any]) -> None:
        self.tool_call_id = tool_call_id
        self.tool_name = tool_name
        self.args = args

    def __repr__(self) -> str:
        return f"ToolExecutionStartEvent(tool_call_id={self.tool_call_id!r}, tool_name={self.tool_name!r})"


class ToolExecutionUpdateEvent:
    """A running tool reported progress: ``partial_result`` is its whole result so far."""

    __slots__ = ("args", "partial_result", "tool_call_id", "tool_name")
    type: ClassVar[Literal["tool_execution_update"]] = "tool_execution_update"

    def __init__(
        self,
        tool_call_id: str,
        tool_name: str,
        args: dict[str, Any],
        partial_result: AgentToolResult,
    ) -> None:
        self.tool_call_id = tool_call_id
        self.tool_name = tool_name
        self.args = args
        self.partial_result = partial_result

    def __repr__(self) -> str:
        return f"ToolExecutionUpdateEvent(tool_call_id={self.tool_call_id!r})"


class ToolExecutionEndEvent:
    """A tool call is finished: the final ``result`` (after ``after_tool_call``)."""

    __slots__ = ("is_error", "result", "tool_call_id", "tool_name")
    type: ClassVar[Literal["tool_execution_end"]] = "tool_execution_end"

    def __init__(
        self, tool_call_id: str, tool_name: str, result: AgentToolResult, is_error: bool
    ) -> None:
        self.tool_call_id = tool_call_id
        self.tool_name = tool_name
        self.result = result
        self.is_error = is_error

    def __repr__(self) -> str:
        return (
            f"ToolExecutionEndEvent(tool_call_id={self.tool_call_id!r}, is_error={self.is_error})"
        )


AgentEvent: TypeAlias = (
    AgentStartEvent
    | AgentEndEvent
    | AgentPausedEvent
    | TurnStartEvent
    | TurnEndEvent
    | MessageStartEvent
    | MessageUpdateEvent
    | MessageEndEvent
    | ToolExecutionStartEvent
    | ToolExecutionUpdateEvent
    | ToolExecutionEndEvent
    | FallbackEvent
    | OutputUpdateEvent
)
"""Any event of an agent run."""

AGENT_EVENT_TYPES: tuple[str, ...] = (
    "agent_start",
    "agent_end",
    "agent_paused",
    "turn_start",
    "turn_end",
    "message_start",
    "message_update",
    "message_end",
    "tool_execution_start",
    "tool_execution_update",
    "tool_execution_end",
    "fallback",
    "output_update",
)


# --------------------------------------------------------------------------- JSON


def _jsonable(value: Any) -> Any:
    # Tool details and arguments are app data: make anything JSON can't hold readable.
    return to_jsonable_python(value, fallback=repr)


def dump_tool_result(result: AgentToolResult) -> dict[str, Any]:
    """A tool result as ``{"content": [...], "details": ...}``."""
    return {
        "content": [dump_content(block) for block in result.content],
        "details": _jsonable(result.details),
    }


def dump_assistant_event(event: AssistantMessageEvent) -> dict[str, Any]:
    """A provider event as pi JSON, without ``partial`` (terminal events keep their message)."""
    out: dict[str, Any] = {"type": event.type}
    match event:
        case TextDeltaEvent() | ThinkingDeltaEvent() | ToolCallDeltaEvent():
            out["contentIndex"] = event.content_index
            out["delta"] = event.delta
        case TextStartEvent() | ThinkingStartEvent() | ToolCallStartEvent():
            out["contentIndex"] = event.content_index
        case TextEndEvent() | ThinkingEndEvent():
            out["contentIndex"] = event.content_index
            out["content"] = event.content
        case ToolCallEndEvent():
            out["contentIndex"] = event.content_index
            out["toolCall"] = dump_content(event.tool_call)
        case DoneEvent():
            out["reason"] = event.reason
            out["message"] = dump_message(event.message)
        case ErrorEvent():
            out["reason"] = event.reason
            out["error"] = dump_message(event.error)
    return out


def dump_event(event: AgentEvent, *, compact: bool = False) -> dict[str, Any]:
    """An agent event as JSON-compatible data.

    ``compact=True`` leaves the (growing) ``message`` out of ``message_update``, so a stream
    of events stays linear in size; the message can be rebuilt from the provider events.
    """
    kind = event.type
    out: dict[str, Any] = {"type": kind}
    if isinstance(event, MessageUpdateEvent):
        if not compact:
            out["message"] = dump_message(event.message)
        out["assistantMessageEvent"] = dump_assistant_event(event.assistant_message_event)
    elif isinstance(event, MessageStartEvent | MessageEndEvent):
        out["message"] = dump_agent_message(event.message)
    elif isinstance(event, TurnEndEvent):
        out["message"] = dump_message(event.message)
        out["toolResults"] = [dump_message(m) for m in event.tool_results]
    elif isinstance(event, AgentEndEvent):
        out["messages"] = [dump_agent_message(m) for m in event.messages]
        out["usage"] = event.usage.dump()
        if event.has_output:
            out["output"] = _jsonable(event.output)
    elif isinstance(event, AgentPausedEvent):
        out["pending"] = [
            {
                "id": call.id,
                "toolName": call.tool_name,
                "arguments": _jsonable(call.arguments),
                "kind": call.kind,
                "path": list(call.path),
            }
            for call in event.pending
        ]
    elif isinstance(event, OutputUpdateEvent):
        out["output"] = _jsonable(event.output)
    elif isinstance(event, FallbackEvent):
        attempt = event.attempt
        following = attempt.next_model
        out["message"] = dump_message(attempt.message)
        out["kind"] = attempt.kind
        out["status"] = attempt.status
        out["next"] = {"provider": following.provider, "model": following.id} if following else None
        out["discarded"] = attempt.discarded
    elif isinstance(event, ToolExecutionStartEvent):
        out["toolCallId"] = event.tool_call_id
        out["toolName"] = event.tool_name
        out["args"] = _jsonable(event.args)
    elif isinstance(event, ToolExecutionUpdateEvent):
        out["toolCallId"] = event.tool_call_id
        out["toolName"] = event.tool_name
        out["args"] = _jsonable(event.args)
        out["partialResult"] = dump_tool_result(event.partial_result)
    elif isinstance(event, ToolExecutionEndEvent):
        out["toolCallId"] = event.tool_call_id
        out["toolName"] = event.tool_name
        out["result"] = dump_tool_result(event.result)
        out["isError"] = event.is_error
    if isinstance(event, MessageStartEvent | MessageEndEvent | TurnEndEvent | AgentEndEvent):
        # Tool-result details are app data and may hold values JSON cannot.
        return cast(dict[str, Any], _jsonable(out))
    return out


def event_to_json(event: AgentEvent, *, compact: bool = False) -> str:
    """One event as a line of JSON text (no newline), as ``tau --json`` prints it."""
    return json.dumps(dump_event(event, compact=compact), ensure_ascii=False)
