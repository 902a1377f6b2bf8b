"""Decoding Mistral's chat stream into :class:`~tau.ai.streaming.builder.MessageBuilder` calls.

Text and thinking are one block after another (key None). Tool calls are keyed by
``(id, index)``; a fragment without an id belongs to the last call at its index. They have
no end marker of their own: the finish reason ends them all.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from tau.ai.core.errors import ProviderError
from tau.ai.core.types import StopReason, ToolCall
from tau.ai.streaming.builder import MessageBuilder
from tau.ai.streaming.hash import short_hash
from tau.ai.streaming.sanitize import sanitize_surrogates
from tau.ai.streaming.sse import JsonEventDecoder

__all__ = ["THINKING_SIGNATURE", "MistralDecoder", "derived_tool_call_id"]

JsonDict = dict[str, Any]

THINKING_SIGNATURE = "thinking"
"""Marks thinking that Mistral streamed natively (a ``thinking`` chunk), so that the handoff
transform replays it to the same model; Mistral itself has no signatures."""

_STOP_REASONS: Mapping[str, StopReason] = {
    "stop": "stop",
    "length": "length",
    "model_length": "length",
    "tool_calls": "toolUse",
    "error": "error",
}


def derived_tool_call_id(index: int) -> str:
    """The nine-character id given to a streamed tool call that arrived without one."""
    return "".join(c for c in short_hash(f"toolcall:{index}") if c.isalnum())[:9].ljust(9, "0")


class MistralDecoder(JsonEventDecoder):
    """Feeds Mistral stream chunks into a :class:`MessageBuilder`."""

    __slots__ = ("_builder", "_finish", "_last_by_index")
    what = "Mistral stream chunk"

    def __init__(self, builder: MessageBuilder) -> None:
        self._builder = builder
        # A call's stream index -> the builder key of the last call opened at it.
        self._last_by_index: dict[int, tuple[str, int]] = {}
        self._finish: str | None = None

    def apply(self, chunk: JsonDict) -> None:
        """Apply one decoded stream chunk."""
        try:
            self._chunk(chunk)
        except (AttributeError, TypeError) as exc:
            # A field of the wrong JSON type somewhere in the chunk.
            raise ProviderError(f"Malformed Mistral stream chunk: {exc}") from None

    def _chunk(self, chunk: JsonDict) -> None:
        if chunk.get("object") == "error" or "error" in chunk:
            error = chunk.get("error")
            message = error.get("message") if isinstance(error, dict) else error
            raise ProviderError(f"Mistral API error: {message or chunk.get('message') or chunk}")
        if self._builder.message.response_id is None:
            self._builder.response_id(chunk.get("id"))
        usage = chunk.get("usage")
        if isinstance(usage, dict):
            self._usage(usage)
        choices = chunk.get("choices")
        if not choices:
            return
        choice = choices[0]
        delta = choice.get("delta") or {}
        content = delta.get("content")
        if content:
            if isinstance(content, str):
                self._append("text", content)
            else:
                for part in content:
                    kind = part.get("type")
                    if kind == "text":
                        self._append("text", part.get("text") or "")
                    elif kind == "thinking":
                        pieces = part.get("thinking") or []
                        text = "".join(p.get("text") or "" for p in pieces if isinstance(p, dict))
                        self._append("thinking", text)
        tool_calls = delta.get("tool_calls")
        if tool_calls:
            self._builder.close(None)
            for call in tool_calls:
                self._tool_call(call)
        finish = choice.get("finish_reason")
        if finish and isinstance(finish, str):
            self._finish = finish

    def _append(self, kind: str, text: Any) -> None:
        if not text or text.__class__ is not str:
            return
        text = sanitize_surrogates(text)
        if kind == "text":
            self._builder.text(None, text)
        else:
            self._builder.thinking(None, text, signature=THINKING_SIGNATURE)

    def _tool_call(self, call: JsonDict) -> None:
        builder = self._builder
        raw_index = call.get("index")
        index = raw_index if isinstance(raw_index, int) else 0
        raw_id = call.get("id")
        function = call.get("function") or {}
        name = function.get("name")
        name = name if isinstance(name, str) else ""
        if raw_id in (None, "", "null"):
            # A continuation fragment without an id belongs to the call at its index.
            key = self._last_by_index.get(index) or (derived_tool_call_id(index), index)
        else:
            key = (str(raw_id), index)
        block = builder.block(key)
        if block is None:
            builder.tool_call(key, id=key[0], name=name)
        elif name and isinstance(block, ToolCall) and not block.name:
            block.name = name
        self._last_by_index[index] = key
        arguments = function.get("arguments")
        if arguments is None or arguments == "":
            return
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments, ensure_ascii=False)
        builder.tool_call(key, args_delta=arguments)

    def _usage(self, raw: JsonDict) -> None:
        usage = self._builder.message.usage
        usage.input = raw.get("prompt_tokens") or 0
        usage.output = raw.get("completion_tokens") or 0
        usage.total_tokens = raw.get("total_tokens") or usage.input + usage.output

    def finish(self) -> None:
        """The stream ended: close blocks (tool calls last), set the stop reason.

        The finish reason is what ends the tool calls (they have no end marker of their own):
        a stream cut off before it leaves them unfinished.
        """
        builder = self._builder
        builder.close(None)
        finish = self._finish
        if finish is None:
            raise ProviderError("Mistral stream ended before a finish_reason (truncated stream)")
        builder.close_calls()
        stop = _STOP_REASONS.get(finish, "stop")
        message = builder.message
        if stop == "error":
            message.error_message = "Mistral ended the response with finish_reason 'error'"
        message.stop_reason = stop
