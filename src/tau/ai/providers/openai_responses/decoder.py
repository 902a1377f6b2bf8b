"""Decoding the Responses event stream into :class:`~tau.ai.streaming.builder.MessageBuilder` calls.

Output items are addressed by their ``output_index`` (the builder key; some servers
interleave items), falling back to ``item_id``. Event types this decoder does not know
(server-side tool progress, new features) are ignored.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from tau.ai.core.errors import ProviderError
from tau.ai.core.types import StopReason, TextContent, ThinkingContent, ToolCall, Usage
from tau.ai.providers.openai_responses.request import encode_text_signature
from tau.ai.streaming.builder import MessageBuilder
from tau.ai.streaming.partial_json import parse_streaming_json
from tau.ai.streaming.sse import JsonEventDecoder

__all__ = ["SERVICE_TIER_MULTIPLIERS", "OpenAIResponsesDecoder", "fill_usage"]

JsonDict = dict[str, Any]

SERVICE_TIER_MULTIPLIERS: Mapping[str, float] = {"flex": 0.5, "priority": 2.0}
"""Price factor of OpenAI's service tiers relative to the catalog (standard) prices."""

_STATUS_STOP: Mapping[str, StopReason] = {
    "completed": "stop",
    "incomplete": "length",
    "in_progress": "stop",
    "queued": "stop",
}


class _Item:
    """One output item being streamed: its builder key and what its events need to know."""

    __slots__ = ("args_final", "item_id", "key", "kind", "parts", "phase")

    def __init__(self, kind: str, key: int, item_id: str, phase: str | None = None) -> None:
        # The item's type; a function call the server marked incomplete becomes
        # "incomplete_call", which takes no more argument events and is not closed at the end.
        self.kind = kind
        self.key = key
        self.item_id = item_id
        self.phase = phase
        # function_call: the final arguments once a .done carried them; later deltas are late.
        self.args_final: str | None = None
        # reasoning: how many summary parts / content parts have begun (for separators).
        self.parts = 0


class OpenAIResponsesDecoder(JsonEventDecoder):
    """Feeds Responses stream events into a :class:`MessageBuilder`.

    ``service_tier`` is the tier the request asked for; the response's own, when it names
    one, decides the price factor (:data:`SERVICE_TIER_MULTIPLIERS`).
    """

    __slots__ = ("_builder", "_by_id", "_completed", "_items", "_requested_tier")
    what = "Responses stream event"

    def __init__(self, builder: MessageBuilder, *, service_tier: str | None = None) -> None:
        self._builder = builder
        self._requested_tier = service_tier
        self._items: dict[int, _Item] = {}
        self._by_id: dict[str, _Item] = {}
        self._completed = False

    def apply(self, event: JsonDict) -> None:
        """Apply one decoded stream event."""
        kind = event.get("type")
        handler = _HANDLERS.get(kind) if kind.__class__ is str else None
        if handler is None or self._completed:
            return
        try:
            handler(self, event)
        except (AttributeError, TypeError) as exc:
            # A field of the wrong JSON type somewhere in the event.
            raise ProviderError(f"Malformed Responses stream event {kind!r}: {exc}") from None

    def finish(self) -> None:
        """The stream ended: without a terminal response event, that is an error."""
        if not self._completed:
            raise ProviderError("Responses stream ended before response.completed")

    # ----------------------------------------------------------------------- lookup

    def _item(self, event: JsonDict) -> _Item | None:
        output_index = event.get("output_index")
        if output_index is not None:
            item = self._items.get(output_index)
            if item is not None:
                return item
        item_id = event.get("item_id")
        return self._by_id.get(item_id) if item_id is not None else None

    def _track(self, event: JsonDict, kind: str, item_id: str, phase: str | None = None) -> _Item:
        output_index = event.get("output_index")
        key = output_index if isinstance(output_index, int) else -len(self._items) - 1
        item = self._items[key] = _Item(kind, key, item_id, phase)
        if item_id:
            self._by_id[item_id] = item
        return item

    def _text_item(self, event: JsonDict) -> _Item:
        item = self._item(event)
        if item is None or item.kind != "message":
            # A delta before (or without) its output_item.added: open the block now.
            item = self._track(event, "message", _str(event.get("item_id")))
            self._builder.text(item.key, "")
        return item

    # ----------------------------------------------------------------------- items

    def _on_item_added(self, event: JsonDict) -> None:
        raw = event.get("item") or {}
        kind = raw.get("type")
        item_id = _str(raw.get("id"))
        builder = self._builder
        if kind == "reasoning":
            builder.thinking(self._track(event, kind, item_id).key, "")
        elif kind == "message":
            phase = _str(raw.get("phase")) or None
            builder.text(self._track(event, kind, item_id, phase).key, "")
        elif kind == "function_call":
            arguments = raw.get("arguments")
            builder.tool_call(
                self._track(event, kind, item_id).key,
                id=f"{_str(raw.get('call_id'))}|{item_id}",
                name=_str(raw.get("name")),
                args_delta=arguments if arguments.__class__ is str else "",
            )

    def _on_item_done(self, event: JsonDict) -> None:
        raw = event.get("item") or {}
        item = self._item(event)
        if item is None:
            if raw.get("type") not in ("reasoning", "message", "function_call"):
                return
            # output_item.done without output_item.added: add it now, then finish it.
            self._on_item_added(event)
            item = self._item(event)
            if item is None:
                return
        builder = self._builder
        block = builder.block(item.key)
        if isinstance(block, ThinkingContent):
            missing = _unstreamed_tail(block.thinking, _reasoning_text(raw))
            builder.thinking(item.key, missing)
            block.thinking_signature = json.dumps(raw, ensure_ascii=False, separators=(",", ":"))
            builder.close(item.key)
        elif isinstance(block, TextContent):
            missing = _unstreamed_tail(block.text, _message_text(raw))
            builder.text(item.key, missing)
            phase = _str(raw.get("phase")) or item.phase
            block.text_signature = encode_text_signature(_str(raw.get("id")) or item.item_id, phase)
            builder.close(item.key)
        elif isinstance(block, ToolCall):
            name = _str(raw.get("name"))
            if name:
                block.name = name
            arguments = raw.get("arguments")
            if item.args_final is None and isinstance(arguments, str):
                self._final_arguments(item, block, arguments)
            if raw.get("status") == "incomplete":
                # Cut off (by the output limit): the call stays unfinished.
                item.kind = "incomplete_call"
                return
            self._close_call(item)

    # ----------------------------------------------------------------------- reasoning

    def _reasoning_part_added(self, event: JsonDict) -> None:
        item = self._item(event)
        if item is None or item.kind != "reasoning":
            return
        # Parts are separated by a blank line, sent before the next part rather than after
        # the last one, so the deltas add up to exactly the final thinking text.
        if item.parts:
            self._builder.thinking(item.key, "\n\n", start=False)
        item.parts += 1

    def _on_content_part_added(self, event: JsonDict) -> None:
        part = event.get("part") or {}
        if part.get("type") == "reasoning_text":
            self._reasoning_part_added(event)

    def _on_reasoning_delta(self, event: JsonDict) -> None:
        delta = event.get("delta")
        if not delta or delta.__class__ is not str:
            return
        item = self._item(event)
        if item is None or item.kind != "reasoning":
            return
        if not item.parts:
            item.parts = 1
        self._builder.thinking(item.key, delta, start=False)

    # ----------------------------------------------------------------------- text

    def _on_text_delta(self, event: JsonDict) -> None:
        delta = event.get("delta")
        if delta and delta.__class__ is str:
            # The usual delta names its item by output_index: looked up here, one call less
            # for every token; anything else is _text_item's.
            index = event.get("output_index")
            item = self._items.get(index) if isinstance(index, int) else None
            if item is None or item.kind != "message":
                item = self._text_item(event)
            self._builder.text(item.key, delta)

    # ----------------------------------------------------------------------- function calls

    def _on_arguments_delta(self, event: JsonDict) -> None:
        delta = event.get("delta")
        item = self._item(event)
        if not delta or delta.__class__ is not str or item is None or item.kind != "function_call":
            return
        if item.args_final is None:
            self._builder.tool_call(item.key, args_delta=delta, start=False)

    def _on_arguments_done(self, event: JsonDict) -> None:
        item = self._item(event)
        arguments = event.get("arguments")
        if item is None or item.kind != "function_call" or not isinstance(arguments, str):
            return
        block = self._builder.block(item.key)
        if isinstance(block, ToolCall):
            self._final_arguments(item, block, arguments)

    def _final_arguments(self, item: _Item, block: ToolCall, arguments: str) -> None:
        if item.args_final is not None:
            return
        streamed = block.arguments_text
        if arguments != streamed:
            if arguments.startswith(streamed):
                # Servers that send .done instead of (or ahead of) the deltas: stream the rest,
                # so the deltas still add up to the final JSON.
                self._builder.tool_call(item.key, args_delta=arguments[len(streamed) :])
            else:
                block.arguments = parse_streaming_json(arguments)
        item.args_final = arguments

    def _close_call(self, item: _Item) -> None:
        final_text = item.args_final
        self._builder.close(
            item.key, parse_streaming_json(final_text) if final_text is not None else None
        )

    # ----------------------------------------------------------------------- the end

    def _on_completed(self, event: JsonDict) -> None:
        response = event.get("response") or {}
        self._completed = True
        self._builder.response_id(response.get("id"))
        self._apply_usage(response)
        for item in self._items.values():
            # Arguments that a .done event finished are complete even without an item .done.
            if item.kind == "function_call" and item.args_final is not None:
                self._close_call(item)
        message = self._builder.message
        status = response.get("status")
        if status in ("failed", "cancelled"):
            raise ProviderError(
                _failure_message(response) if status == "failed" else "Response was cancelled"
            )
        details = response.get("incomplete_details") or {}
        if status == "incomplete" and details.get("reason") == "content_filter":
            raise ProviderError("incomplete: content_filter")
        stop: StopReason = _STATUS_STOP.get(status, "stop") if isinstance(status, str) else "stop"
        if stop == "stop" and any(isinstance(b, ToolCall) for b in message.content):
            stop = "toolUse"
        message.stop_reason = stop

    def _on_failed(self, event: JsonDict) -> None:
        response = event.get("response") or {}
        self._completed = True
        self._builder.response_id(response.get("id"))
        self._apply_usage(response)
        raise ProviderError(_failure_message(response))

    def _on_error(self, event: JsonDict) -> None:
        nested = event.get("error")
        error: JsonDict = nested if isinstance(nested, dict) else event
        code = error.get("code") or error.get("type") or "unknown"
        message = error.get("message") or "no message"
        raise ProviderError(f"Error Code {code}: {message}")

    def _apply_usage(self, response: JsonDict) -> None:
        raw = response.get("usage")
        if not isinstance(raw, dict):
            return
        builder = self._builder
        fill_usage(builder.message.usage, raw)
        tier = response.get("service_tier") or self._requested_tier
        factor = SERVICE_TIER_MULTIPLIERS.get(tier, 1.0) if isinstance(tier, str) else 1.0
        builder.cost_multiplier = factor


def _str(value: Any) -> str:
    """``value`` if it is a string, else ``""`` (ids and names of the wrong JSON type)."""
    return value if isinstance(value, str) else ""


def fill_usage(usage: Usage, raw: Mapping[str, Any]) -> None:
    """Set token counts from a Responses ``usage`` object (``input`` excludes cached tokens).

    Cached tokens are part of the input: a server that reports more is capped at it, so
    ``input + cache_read`` stays the input count and the total stays the server's.
    """
    input_tokens = raw.get("input_tokens") or 0
    cached = min((raw.get("input_tokens_details") or {}).get("cached_tokens") or 0, input_tokens)
    output_tokens = raw.get("output_tokens") or 0
    usage.input = max(0, input_tokens - cached)
    usage.output = output_tokens
    usage.cache_read = cached
    usage.cache_write = 0
    usage.total_tokens = raw.get("total_tokens") or input_tokens + output_tokens
    reasoning = (raw.get("output_tokens_details") or {}).get("reasoning_tokens")
    usage.reasoning = reasoning if isinstance(reasoning, int) else None


def _failure_message(response: JsonDict) -> str:
    error = response.get("error")
    if isinstance(error, dict) and (error.get("code") or error.get("message")):
        return f"{error.get('code') or 'error'}: {error.get('message') or ''}".rstrip(": ")
    details = response.get("incomplete_details")
    if isinstance(details, dict) and details.get("reason"):
        return f"incomplete: {details['reason']}"
    return "Unknown error (no error details in response)"


def _unstreamed_tail(streamed: str, final: str | None) -> str:
    """What the finished item holds beyond the streamed text, to send as one last delta.

    Deltas must add up to the block's final text, so the done item can only extend what was
    streamed (it does when deltas were skipped or never sent). If it contradicts the stream,
    the streamed text, which the consumer has already shown, is kept.
    """
    if final is None or len(final) <= len(streamed) or not final.startswith(streamed):
        return ""
    return final[len(streamed) :]


def _reasoning_text(item: JsonDict) -> str | None:
    summary = item.get("summary")
    if isinstance(summary, list) and summary:
        return "\n\n".join(part.get("text") or "" for part in summary if isinstance(part, dict))
    content = item.get("content")
    if isinstance(content, list) and content:
        return "\n\n".join(
            part.get("text") or ""
            for part in content
            if isinstance(part, dict) and part.get("type") == "reasoning_text"
        )
    return None


def _message_text(item: JsonDict) -> str | None:
    content = item.get("content")
    if not isinstance(content, list):
        return None
    pieces: list[str] = []
    for part in content:
        if not isinstance(part, dict):
            continue
        kind = part.get("type")
        if kind == "output_text":
            pieces.append(part.get("text") or "")
        elif kind == "refusal":
            pieces.append(part.get("refusal") or "")
    return "".join(pieces)


_Handler = Callable[[OpenAIResponsesDecoder, JsonDict], None]

_HANDLERS: dict[str, _Handler] = {
    "response.output_item.added": OpenAIResponsesDecoder._on_item_added,
    "response.output_item.done": OpenAIResponsesDecoder._on_item_done,
    "response.reasoning_summary_part.added": OpenAIResponsesDecoder._reasoning_part_added,
    "response.reasoning_summary_text.delta": OpenAIResponsesDecoder._on_reasoning_delta,
    "response.reasoning_text.delta": OpenAIResponsesDecoder._on_reasoning_delta,
    "response.content_part.added": OpenAIResponsesDecoder._on_content_part_added,
    "response.output_text.delta": OpenAIResponsesDecoder._on_text_delta,
    "response.refusal.delta": OpenAIResponsesDecoder._on_text_delta,
    "response.function_call_arguments.delta": OpenAIResponsesDecoder._on_arguments_delta,
    "response.function_call_arguments.done": OpenAIResponsesDecoder._on_arguments_done,
    "response.completed": OpenAIResponsesDecoder._on_completed,
    # ChatGPT's Codex backend ends a response so (openai-codex-responses); OpenAI's API never does.
    "response.done": OpenAIResponsesDecoder._on_completed,
    "response.incomplete": OpenAIResponsesDecoder._on_completed,
    "response.failed": OpenAIResponsesDecoder._on_failed,
    "error": OpenAIResponsesDecoder._on_error,
}
