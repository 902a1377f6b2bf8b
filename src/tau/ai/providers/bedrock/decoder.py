"""Decoding ConverseStream's binary event stream into builder calls.

Frames are parsed by botocore's ``EventStreamBuffer`` (both CRCs checked). Blocks are keyed
by ``contentBlockIndex``: text and reasoning open on their first delta, a tool call on its
``contentBlockStart``; ``contentBlockStop`` closes them. Server-side tool use (Nova's code
interpreter…) is not a tau tool call: the client cannot run it, so its blocks are skipped.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import jiter
from botocore.eventstream import EventStreamBuffer, EventStreamMessage, ParserError

from tau.ai.core.errors import ProviderError
from tau.ai.core.types import StopReason, ThinkingContent, ToolCall, Usage
from tau.ai.providers.bedrock.request import EVENT_STREAM
from tau.ai.streaming.builder import MessageBuilder

__all__ = ["BedrockDecoder", "map_stop_reason"]

_STOP_REASONS: dict[str, StopReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "tool_use": "toolUse",
}

_EXCEPTION_PREFIXES = {
    "internalServerException": "Internal server error",
    "modelStreamErrorException": "Model stream error",
    "validationException": "Validation error",
    "throttlingException": "Throttling error",
    "serviceUnavailableException": "Service unavailable",
}


def map_stop_reason(reason: str) -> StopReason:
    """Bedrock's stop reason; guardrail and content-filter stops are errors."""
    return _STOP_REASONS.get(reason, "error")


class BedrockDecoder:
    """Decodes event-stream frames and turns the events into builder calls."""

    __slots__ = ("_buffer", "_builder", "_skipped", "_stopped")
    content_type = EVENT_STREAM

    def __init__(self, builder: MessageBuilder) -> None:
        self._builder = builder
        self._buffer = EventStreamBuffer()
        self._skipped: set[int] = set()  # server-side tool blocks
        self._stopped = False

    def feed(self, data: bytes) -> bool:
        """Decode the complete frames in ``data`` (plus what earlier calls left over)."""
        buffer = self._buffer
        buffer.add_data(data)
        try:
            for frame in buffer:
                self._frame(frame)
        except ParserError as exc:
            raise ProviderError(f"Bedrock event stream is corrupt: {exc}") from None
        return True

    def pending_bytes(self) -> int:
        """Bytes of the incomplete frame: held, or claimed by its length prefix if more."""
        held: bytes = getattr(self._buffer, "_data", b"")
        if len(held) < 4:
            return len(held)
        return max(len(held), int.from_bytes(held[:4], "big"))

    def _frame(self, frame: EventStreamMessage) -> None:
        headers = frame.headers
        kind = headers.get(":message-type")
        if kind == "event":
            try:
                payload = (
                    jiter.from_json(frame.payload, allow_inf_nan=False) if frame.payload else {}
                )
            except ValueError:
                raise ProviderError(
                    f"Bedrock sent malformed JSON in a {headers.get(':event-type')} event: "
                    f"{frame.payload[:200]!r}"
                ) from None
            self.apply(headers.get(":event-type", ""), payload)
        elif kind == "exception":
            name = headers.get(":exception-type", "")
            try:
                message = json.loads(frame.payload).get("message") or ""
            except ValueError:
                message = frame.payload.decode("utf-8", "replace")
            prefix = _EXCEPTION_PREFIXES.get(name, name or "Bedrock error")
            raise ProviderError(f"{prefix}: {message}")
        else:
            code = headers.get(":error-code", "error")
            raise ProviderError(f"Bedrock error {code}: {headers.get(':error-message', '')}")

    def apply(self, name: str, data: Mapping[str, Any]) -> None:
        """Apply one decoded ConverseStream event."""
        builder = self._builder
        if name == "contentBlockDelta":
            self._delta(data.get("contentBlockIndex", 0), data.get("delta") or {})
        elif name == "contentBlockStart":
            start = data.get("start") or {}
            index = data.get("contentBlockIndex", 0)
            tool = start.get("toolUse")
            if tool is None:
                return
            if tool.get("type") == "server_tool_use":
                self._skipped.add(index)
                return
            builder.tool_call(index, id=tool["toolUseId"], name=tool["name"])
        elif name == "contentBlockStop":
            builder.close(data.get("contentBlockIndex", 0))
        elif name == "messageStart":
            if data.get("role") != "assistant":
                raise ProviderError(f"Bedrock stream started with role {data.get('role')!r}")
            builder.start()
        elif name == "messageStop":
            self._stopped = True
            reason = data.get("stopReason") or ""
            stop = map_stop_reason(reason)
            builder.message.stop_reason = stop
            if stop == "error":
                builder.message.error_message = f"Bedrock stopped with {reason}"
        elif name == "metadata":
            usage = data.get("usage")
            if usage:
                self._usage(builder.message.usage, usage)

    def _delta(self, index: int, delta: Mapping[str, Any]) -> None:
        builder = self._builder
        if index in self._skipped:
            return
        text = delta.get("text")
        if text is not None:
            if text:
                builder.text(index, text)
            return
        tool = delta.get("toolUse")
        if tool is not None:
            if builder.tool_call(index, args_delta=tool.get("input") or "", start=False) is None:
                raise ProviderError("Bedrock sent tool input for a block that was never started")
            return
        reasoning = delta.get("reasoningContent")
        if reasoning is None:
            return  # citations, server tool results: nothing tau models
        redacted = reasoning.get("redactedContent")
        builder.thinking(index, "", redacted=redacted is not None)
        thinking = builder.block(index)
        assert isinstance(thinking, ThinkingContent)
        if redacted is not None:
            thinking.redacted = True
            thinking.thinking_signature = (thinking.thinking_signature or "") + redacted
        if reasoning.get("signature"):
            thinking.thinking_signature = reasoning["signature"]
        if reasoning.get("text"):
            builder.thinking(index, reasoning["text"])

    @staticmethod
    def _usage(usage: Usage, data: Mapping[str, Any]) -> None:
        usage.input = data.get("inputTokens") or 0
        usage.output = data.get("outputTokens") or 0
        usage.cache_read = data.get("cacheReadInputTokens") or 0
        usage.cache_write = data.get("cacheWriteInputTokens") or 0
        usage.total_tokens = data.get("totalTokens") or (
            usage.input + usage.output + usage.cache_read + usage.cache_write
        )

    def finish(self) -> None:
        """The body ended: a partial frame or a missing ``messageStop`` is a truncation."""
        # botocore keeps undecoded bytes here; anything left is half a frame.
        leftover = len(getattr(self._buffer, "_data", b""))
        if leftover:
            raise ProviderError(
                f"Bedrock event stream ended in the middle of a frame ({leftover} bytes left)"
            )
        if not self._stopped:
            raise ProviderError("Bedrock event stream ended before messageStop (truncated)")
        message = self._builder.message
        if message.stop_reason == "stop" and any(isinstance(b, ToolCall) for b in message.content):
            message.stop_reason = "toolUse"
