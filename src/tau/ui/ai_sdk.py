"""The AI SDK's UI message stream, protocol v1 (the ``ai`` npm package, version 7).

:class:`AISDKEncoder` turns the events of one agent run into the chunks ``useChat`` (and
``readUIMessageStream``) assemble into one assistant ``UIMessage``:

=========================  ================================================================
tau event                  chunks
=========================  ================================================================
``agent_start``            ``start`` (``messageId``)
``turn_start``/``_end``    ``start-step`` / ``finish-step``
text, thinking deltas      ``text-start/-delta/-end``, ``reasoning-start/-delta/-end``
tool call deltas           ``tool-input-start/-delta/-available``
``tool_execution_update``  ``tool-output-available`` with ``preliminary: true``
``tool_execution_end``     ``tool-output-available`` / ``tool-output-error`` /
                           ``tool-output-denied`` (a call the page denied)
``agent_paused``           ``tool-approval-request`` per call waiting for approval (an
                           external call is the page's: its ``tool-input-available`` is
                           the request)
``output_update``          ``data-output`` (id ``output``: each value replaces the last)
``fallback`` (discarded)   ``reset-step``
``agent_end``              ``data-output`` (the validated output), ``message-metadata``
                           (``usage``: the run's totals, cost included), then ``finish``
                           with its reason, after an ``error`` when the run failed, or
                           ``abort`` when it was aborted
=========================  ================================================================

Each chunk is a dict; :func:`sse_frame` makes it an SSE frame, :data:`DONE_FRAME` ends the
stream and :data:`UI_MESSAGE_STREAM_HEADERS` go on the response.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any

from pydantic_core import to_jsonable_python

from tau.agent import (
    AgentEndEvent,
    AgentEvent,
    AgentPausedEvent,
    AgentStartEvent,
    FallbackEvent,
    MessageEndEvent,
    MessageUpdateEvent,
    OutputUpdateEvent,
    ToolExecutionEndEvent,
    ToolExecutionUpdateEvent,
    TurnEndEvent,
    TurnStartEvent,
)
from tau.ai import (
    AssistantMessage,
    TextDeltaEvent,
    TextEndEvent,
    TextStartEvent,
    ThinkingDeltaEvent,
    ThinkingEndEvent,
    ThinkingStartEvent,
    ToolCall,
    ToolCallDeltaEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
)
from tau.ui.parts import tool_output

__all__ = [
    "DONE_FRAME",
    "UI_MESSAGE_STREAM_HEADERS",
    "AISDKEncoder",
    "finish_reason",
    "sse_frame",
]

UI_MESSAGE_STREAM_HEADERS: dict[str, str] = {
    "x-vercel-ai-ui-message-stream": "v1",
    "cache-control": "no-cache",
    "x-accel-buffering": "no",
}
"""The headers of a UI message stream response (besides ``content-type: text/event-stream``)."""

DONE_FRAME = b"data: [DONE]\n\n"
"""The frame that ends a UI message stream."""

_FINISH = {"stop": "stop", "length": "length", "toolUse": "tool-calls", "error": "error"}
_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=repr).encode


def sse_frame(chunk: dict[str, Any]) -> bytes:
    """One chunk as an SSE frame."""
    return b"data: " + _dumps(chunk).encode() + b"\n\n"


def finish_reason(message: AssistantMessage | None, paused: bool = False) -> str:
    """The AI SDK finish reason of a run that ended on ``message``."""
    if paused:
        return "tool-calls"
    if message is None:
        return "error"
    return _FINISH.get(message.stop_reason, "other")


class AISDKEncoder:
    """The chunks of one run's events (see the module docstring).

    ``message_id`` names the assistant ``UIMessage``. A resumed run (``resumed=True``)
    continues the paused run's message and step: pass that message's id; ``denied`` are the
    call ids the page denied, whose results become ``tool-output-denied``. ``is_aborted``
    says at ``agent_end`` whether the run was aborted (a run aborted while its tools ran
    ends on an ordinary message: ``lambda: agent.state.error is not None`` tells).
    """

    __slots__ = (
        "_calls",
        "_denied",
        "_error_sent",
        "_is_aborted",
        "_last",
        "_message_id",
        "_parts",
        "_paused",
        "_resumed",
        "_turn",
    )

    def __init__(
        self,
        message_id: str,
        *,
        resumed: bool = False,
        denied: Iterable[str] = (),
        is_aborted: Callable[[], bool] | None = None,
    ) -> None:
        self._message_id = message_id
        self._resumed = resumed
        self._is_aborted = is_aborted
        self._denied = frozenset(denied)
        self._turn = 0
        # content index -> the part id of the streaming message's open text or reasoning
        # block, and the id of its streaming tool call
        self._parts: dict[int, str] = {}
        self._calls: dict[int, str] = {}
        self._paused = False
        self._error_sent = False
        self._last: AssistantMessage | None = None

    def encode(self, event: AgentEvent) -> list[dict[str, Any]]:
        """The chunks of ``event`` (often none, never more than a few)."""
        if isinstance(event, MessageUpdateEvent):
            return self._update(event)
        if isinstance(event, TurnStartEvent):
            self._turn += 1
            self._parts.clear()
            self._calls.clear()
            if self._resumed and self._turn == 1:
                return []  # the paused turn goes on: its step is the page's last one
            return [{"type": "start-step"}]
        if isinstance(event, TurnEndEvent):
            self._last = event.message
            return [{"type": "finish-step"}]
        if isinstance(event, ToolExecutionEndEvent):
            call_id = event.tool_call_id
            if call_id in self._denied:
                return [{"type": "tool-output-denied", "toolCallId": call_id}]
            if event.is_error:
                text = "".join(getattr(b, "text", "") for b in event.result.content)
                return [{"type": "tool-output-error", "toolCallId": call_id, "errorText": text}]
            output = tool_output(event.result.content, event.result.details)
            return [{"type": "tool-output-available", "toolCallId": call_id, "output": output}]
        if isinstance(event, ToolExecutionUpdateEvent):
            output = tool_output(event.partial_result.content, event.partial_result.details)
            return [
                {
                    "type": "tool-output-available",
                    "toolCallId": event.tool_call_id,
                    "output": output,
                    "preliminary": True,
                }
            ]
        if isinstance(event, MessageEndEvent) and isinstance(event.message, AssistantMessage):
            return self._message_end(event.message)
        if isinstance(event, OutputUpdateEvent):
            return [_output_chunk(event.output)]
        if isinstance(event, AgentStartEvent):
            return [{"type": "start", "messageId": self._message_id}]
        if isinstance(event, AgentPausedEvent):
            self._paused = True
            return [
                {
                    "type": "tool-approval-request",
                    "approvalId": call.id,
                    "toolCallId": call.path[0] if call.path else call.id,
                }
                for call in event.pending
                if call.kind == "approval"
            ]
        if isinstance(event, AgentEndEvent):
            return self._end(event)
        if isinstance(event, FallbackEvent) and event.attempt.discarded:
            self._parts.clear()
            self._calls.clear()
            return [{"type": "reset-step"}]
        return []

    def _update(self, event: MessageUpdateEvent) -> list[dict[str, Any]]:
        parts = self._parts
        match event.assistant_message_event:
            case TextDeltaEvent(content_index=index, delta=delta):
                return [{"type": "text-delta", "id": parts[index], "delta": delta}]
            case ThinkingDeltaEvent(content_index=index, delta=delta):
                return [{"type": "reasoning-delta", "id": parts[index], "delta": delta}]
            case ToolCallDeltaEvent(content_index=index, delta=delta):
                call_id = self._calls[index]
                return [
                    {"type": "tool-input-delta", "toolCallId": call_id, "inputTextDelta": delta}
                ]
            case TextStartEvent(content_index=index):
                part = parts[index] = f"text-{self._turn}-{index}"
                return [{"type": "text-start", "id": part}]
            case ThinkingStartEvent(content_index=index):
                part = parts[index] = f"reasoning-{self._turn}-{index}"
                return [{"type": "reasoning-start", "id": part}]
            case ToolCallStartEvent(content_index=index):
                call = event.message.content[index]
                if not isinstance(call, ToolCall):
                    return []
                self._calls[index] = call.id
                return [{"type": "tool-input-start", "toolCallId": call.id, "toolName": call.name}]
            case TextEndEvent(content_index=index):
                return [{"type": "text-end", "id": parts.pop(index)}]
            case ThinkingEndEvent(content_index=index):
                return [{"type": "reasoning-end", "id": parts.pop(index)}]
            case ToolCallEndEvent(content_index=index, tool_call=call):
                self._calls.pop(index, None)
                return [
                    {
                        "type": "tool-input-available",
                        "toolCallId": call.id,
                        "toolName": call.name,
                        "input": _jsonable(call.arguments),
                    }
                ]
        return []

    def _message_end(self, message: AssistantMessage) -> list[dict[str, Any]]:
        # A failed or aborted message leaves blocks open: close them, so that the page shows
        # them as they got.
        out = [
            {"type": "text-end" if part.startswith("text-") else "reasoning-end", "id": part}
            for part in self._parts.values()
        ]
        self._parts.clear()
        self._calls.clear()
        if message.stop_reason == "error":
            self._error_sent = True
            out.append({"type": "error", "errorText": message.error_message or "error"})
        return out

    def _end(self, event: AgentEndEvent) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        if event.has_output:
            out.append(_output_chunk(event.output))
        last = next(
            (m for m in reversed(event.messages) if isinstance(m, AssistantMessage)), self._last
        )
        out.append({"type": "message-metadata", "messageMetadata": {"usage": event.usage.dump()}})
        if last is not None and last.stop_reason == "error":
            if not self._error_sent:
                out.append({"type": "error", "errorText": last.error_message or "error"})
        elif (last is not None and last.stop_reason == "aborted") or (
            self._is_aborted is not None and self._is_aborted()
        ):
            reason = last.error_message if last is not None else None
            out.append({"type": "abort", "reason": reason or "aborted"})
            return out
        out.append({"type": "finish", "finishReason": finish_reason(last, self._paused)})
        return out


def _jsonable(value: Any) -> Any:
    return to_jsonable_python(value, fallback=repr)


def _output_chunk(output: Any) -> dict[str, Any]:
    return {"type": "data-output", "id": "output", "data": _jsonable(output)}
