"""Decoding the Messages API event stream into builder calls.

Blocks are addressed by Anthropic's block ``index``: each is announced by
``content_block_start`` and ended by ``content_block_stop``, so deltas only extend a block
that was announced (``start=False``); a delta for anything else (a server tool's block, an
index never started) is skipped.
"""

from __future__ import annotations

import json
from typing import Any

from tau.ai.core.errors import ProviderError, excerpt
from tau.ai.core.types import AssistantMessage, StopReason, ThinkingContent, Tool, ToolCall, Usage
from tau.ai.streaming.builder import MessageBuilder
from tau.ai.streaming.sse import parse_json

__all__ = ["REDACTED_THINKING_TEXT", "AnthropicDecoder", "UsageCounts"]

REDACTED_THINKING_TEXT = "[Reasoning redacted]"

_STOP_REASONS: dict[str, StopReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "tool_use": "toolUse",
    "refusal": "error",
    "sensitive": "error",
}


class AnthropicDecoder:
    """Feeds the Messages API's events, one SSE ``data`` payload at a time, to a builder.

    ``tools`` are the request's tools when their names were sent in Claude Code's spelling
    (an OAuth token): calls come back under the names the caller gave.
    """

    __slots__ = ("_builder", "_counts", "_finished", "_inputs", "_message_id", "_names", "_started")

    def __init__(self, builder: MessageBuilder, tools: list[Tool] | None = None) -> None:
        self._builder = builder
        self._counts = UsageCounts()
        self._names = {tool.name.lower(): tool.name for tool in tools} if tools else None
        # A tool_use block's ``input`` from its start, used when no input_json_delta follows.
        self._inputs: dict[int, dict[str, Any]] = {}
        self._message_id: str | None = None
        self._started = False
        self._finished = False

    def feed(self, data: str, event: str = "message") -> bool:
        """Apply one event (the per-token hot path); False after ``message_stop``."""
        builder = self._builder
        try:
            payload = parse_json(data)
            kind = payload["type"]
            if kind == "content_block_delta":
                index = payload["index"]
                delta = payload["delta"]
                delta_type = delta["type"]
                if delta_type == "text_delta":
                    builder.text(index, delta["text"], start=False)
                elif delta_type == "thinking_delta":
                    builder.thinking(index, delta["thinking"], start=False)
                elif delta_type == "input_json_delta":
                    builder.tool_call(index, args_delta=delta["partial_json"], start=False)
                elif delta_type == "signature_delta":
                    block = builder.block(index)
                    if isinstance(block, ThinkingContent):
                        block.thinking_signature = (block.thinking_signature or "") + delta[
                            "signature"
                        ]
            elif kind == "content_block_start":
                self._start_block(payload)
            elif kind == "content_block_stop":
                self._stop_block(payload["index"])
            elif kind == "message_start":
                self._message_start(payload["message"])
            elif kind == "message_delta":
                stop = (payload.get("delta") or {}).get("stop_reason")
                if stop is not None:
                    _set_stop_reason(builder.message, stop)
                self._counts.apply(builder.message.usage, payload.get("usage") or {})
            elif kind == "message_stop":
                self._finished = True
                return False
            elif kind == "error":
                raise ProviderError(_stream_error(payload), status=_stream_error_status(payload))
            # "ping" and event types added later are ignored
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            raise ProviderError(
                f"Malformed {event!r} event from Anthropic ({_short(exc)}): {excerpt(data)}"
            ) from None
        return True

    def finish(self) -> None:
        """The body ended: without ``message_stop`` the response is incomplete."""
        if not self._finished:
            raise ProviderError(
                "The Anthropic stream ended before message_stop: the response is incomplete "
                "(connection closed early)"
            )

    def _message_start(self, message: dict[str, Any]) -> None:
        started_id = message.get("id")
        if self._started:
            if started_id != self._message_id:
                # Two responses spliced into one stream (a proxy's retry, a broken relay):
                # merging them would duplicate or truncate content.
                raise ProviderError(
                    f"Anthropic started message {started_id!r} inside message "
                    f"{self._message_id!r}, which never ended (no message_stop)"
                )
            return  # the same message announced again: nothing new
        self._started = True
        self._message_id = started_id
        self._builder.response_id(started_id)
        self._counts.apply(self._builder.message.usage, message.get("usage") or {})
        self._builder.start()

    def _start_block(self, data: dict[str, Any]) -> None:
        builder = self._builder
        index = data.get("index", -1)
        block = data.get("content_block") or {}
        block_type = block.get("type")
        if block_type == "text":
            builder.text(index, block.get("text") or "")
        elif block_type == "thinking":
            builder.thinking(
                index, block.get("thinking") or "", signature=block.get("signature") or ""
            )
        elif block_type == "redacted_thinking":
            signature = block.get("data") or ""
            builder.thinking(index, REDACTED_THINKING_TEXT, signature=signature, redacted=True)
        elif block_type == "tool_use":
            name = block.get("name") or ""
            if self._names is not None:
                name = self._names.get(name.lower(), name)
            builder.tool_call(index, id=block.get("id") or "", name=name)
            initial = block.get("input")
            if isinstance(initial, dict) and initial:
                self._inputs[index] = initial
        # Server tools, their results, compaction…: not modelled; their deltas find no block.

    def _stop_block(self, index: int) -> None:
        initial = self._inputs.pop(index, None)
        block = self._builder.block(index)
        if isinstance(block, ToolCall) and not block.arguments_text:
            # No input_json_delta came: the start block's input is the whole input.
            self._builder.close(index, initial or {})
        else:
            self._builder.close(index)


class UsageCounts:
    """The token counts of one message: its top-level usage, plus what ``iterations`` adds.

    With ``iterations`` (server-side compaction, the advisor tool, model fallback), each entry
    is one model call, and they count differently:

    * ``message``: the executor's own calls, already inside the top-level counts;
    * ``compaction``: the summarising call, not inside them: all four counts are added;
    * ``advisor_message``: another model's call, billed at that model's price: never added;
    * with a ``fallback_message``, the top level describes the answer served and is used as
      it is (the ``message`` entry is the primary model's refused attempt);
    * any other type is ignored.

    Fields absent or null in an event keep their previous value (proxies send partial usage
    in ``message_delta``); a new ``iterations`` list replaces the previous one.
    """

    __slots__ = ("extra", "top")

    def __init__(self) -> None:
        self.top = [0, 0, 0, 0]
        self.extra = (0, 0, 0, 0)

    def apply(self, usage: Usage, raw: dict[str, Any]) -> None:
        """Update ``usage`` from one event's ``usage`` object."""
        top = self.top
        for slot, key in enumerate(_USAGE_KEYS):
            value = raw.get(key)
            if value is not None:
                top[slot] = value
        iterations = raw.get("iterations")
        if isinstance(iterations, list):
            self.extra = _compaction_counts(iterations)
        extra = self.extra
        usage.input = top[0] + extra[0]
        usage.output = top[1] + extra[1]
        usage.cache_read = top[2] + extra[2]
        usage.cache_write = top[3] + extra[3]
        usage.total_tokens = usage.input + usage.output + usage.cache_read + usage.cache_write


def _compaction_counts(iterations: list[Any]) -> tuple[int, int, int, int]:
    entries = [it for it in iterations if isinstance(it, dict)]
    if any(it.get("type") == "fallback_message" for it in entries):
        return (0, 0, 0, 0)
    sums = [0, 0, 0, 0]
    for it in entries:
        if it.get("type") == "compaction":
            for slot, key in enumerate(_USAGE_KEYS):
                value = it.get(key)
                if isinstance(value, int):
                    sums[slot] += value
    return (sums[0], sums[1], sums[2], sums[3])


_USAGE_KEYS = (
    "input_tokens",
    "output_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
)


def _set_stop_reason(message: AssistantMessage, stop: str) -> None:
    mapped = _STOP_REASONS.get(stop)
    if mapped is None:
        raise ProviderError(f"Unhandled Anthropic stop reason: {stop!r}")
    message.stop_reason = mapped
    if mapped == "error":
        message.error_message = f"The model stopped with stop_reason {stop!r}"


# The HTTP status Anthropic documents for each error type: an error event inside a 200 stream
# (an overload after the response started) fails the same way the status would have.
_ERROR_TYPE_STATUS = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "overloaded_error": 529,
}


def _stream_error_status(data: dict[str, Any]) -> int | None:
    error = data.get("error")
    kind = error.get("type") if isinstance(error, dict) else None
    return _ERROR_TYPE_STATUS.get(kind) if isinstance(kind, str) else None


def _stream_error(data: dict[str, Any]) -> str:
    error = data.get("error")
    if isinstance(error, dict):
        kind, text = error.get("type"), error.get("message")
        if kind and text:
            return f"{kind}: {text}"
        if text or kind:
            return str(text or kind)
    return f"Anthropic stream error: {excerpt(json.dumps(data))}"


def _short(exc: Exception) -> str:
    if isinstance(exc, KeyError):
        return f"no {exc.args[0]!r} field"
    if isinstance(exc, json.JSONDecodeError):
        return f"invalid JSON: {exc}"
    return str(exc) or type(exc).__name__
