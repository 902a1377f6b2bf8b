"""The OpenAI Responses wire format, shared by ``openai-responses`` and ``azure-openai-responses``.

Three jobs: turn a :class:`~tau.ai.types.Context` into Responses ``input`` items and ``tools``,
turn the streamed Responses events into :class:`~tau.ai.builder.MessageBuilder` calls, and map
the final ``usage`` (with service-tier pricing).

Replay state lives in the content blocks: a reasoning item is stored whole, as JSON, in
``ThinkingContent.thinking_signature``; a message item's id and phase in
``TextContent.text_signature`` as ``{"v":1,"id":…,"phase":…}``; a function call's ids in
``ToolCall.id`` as ``"<call_id>|<item_id>"``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from tau.ai.builder import MessageBuilder, ProviderError
from tau.ai.types import (
    AssistantMessage,
    Context,
    ImageContent,
    Model,
    StopReason,
    TextContent,
    ThinkingContent,
    Tool,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from tau.ai.utils.cost import calculate_cost
from tau.ai.utils.hash import short_hash
from tau.ai.utils.partial_json import parse_streaming_json
from tau.ai.utils.sanitize import sanitize_surrogates
from tau.ai.utils.sse_json import decode_event_data
from tau.ai.utils.transform_messages import normalize_id_responses, transform_messages

JsonDict = dict[str, Any]

SERVICE_TIER_MULTIPLIERS: Mapping[str, float] = {"flex": 0.5, "priority": 2.0}
"""Price factor of OpenAI's service tiers relative to the catalog (standard) prices."""

_MAX_ITEM_ID = 64

# --------------------------------------------------------------------------- text signatures


def encode_text_signature(item_id: str, phase: str | None) -> str:
    """The ``text_signature`` of a message item: V1 JSON with its id and phase."""
    data: JsonDict = {"v": 1, "id": item_id}
    if phase:
        data["phase"] = phase
    return json.dumps(data, separators=(",", ":"))


def decode_text_signature(signature: str | None) -> tuple[str | None, str | None]:
    """``(item_id, phase)`` from a V1 JSON signature or a legacy plain-id signature."""
    if not signature:
        return None, None
    if signature.startswith("{"):
        try:
            data = json.loads(signature)
        except ValueError:
            return None, None
        if isinstance(data, dict) and data.get("v") == 1:
            item_id = data.get("id")
            phase = data.get("phase")
            return (
                item_id if isinstance(item_id, str) and item_id else None,
                phase if isinstance(phase, str) and phase else None,
            )
        return None, None
    return signature, None


# --------------------------------------------------------------------------- request: messages


def convert_messages(
    model: Model, context: Context, *, include_system_prompt: bool = True
) -> list[JsonDict]:
    """The Responses ``input`` items for ``context`` sent to ``model``.

    The history first goes through the handoff transform: another model's thinking is left
    out, and ``call_id|item_id`` ids from other OpenAI models are re-shaped for this endpoint.
    """
    items: list[JsonDict] = []
    if include_system_prompt and context.system_prompt:
        role = "developer" if model.reasoning else "system"
        items.append({"role": role, "content": sanitize_surrogates(context.system_prompt)})
    messages = transform_messages(context.messages, model, normalize_id_responses)
    for msg_index, message in enumerate(messages):
        if isinstance(message, UserMessage):
            item = _user_item(model, message)
            if item is not None:
                items.append(item)
        elif isinstance(message, AssistantMessage):
            items.extend(_assistant_items(model, message, msg_index))
        else:
            items.append(_tool_result_item(model, message))
    return items


def _image_part(image: ImageContent) -> JsonDict:
    return {
        "type": "input_image",
        "detail": "auto",
        "image_url": f"data:{image.mime_type};base64,{image.data}",
    }


def _user_item(model: Model, message: UserMessage) -> JsonDict | None:
    content = message.content
    if isinstance(content, str):
        parts: list[JsonDict] = [{"type": "input_text", "text": sanitize_surrogates(content)}]
    else:
        parts = []
        for block in content:
            if isinstance(block, TextContent):
                parts.append({"type": "input_text", "text": sanitize_surrogates(block.text)})
            elif model.supports_images:
                parts.append(_image_part(block))
        if not parts:
            return None
    return {"role": "user", "content": parts}


def _reasoning_item(signature: str) -> JsonDict:
    try:
        item = json.loads(signature)
    except ValueError as exc:
        raise ProviderError(
            f"Cannot replay a thinking block: its thinking_signature is not a Responses "
            f"reasoning item ({exc})"
        ) from None
    if not isinstance(item, dict) or item.get("type") != "reasoning":
        raise ProviderError(
            "Cannot replay a thinking block: its thinking_signature is not a Responses "
            "reasoning item"
        )
    return item


def _assistant_items(model: Model, message: AssistantMessage, msg_index: int) -> list[JsonDict]:
    # A reasoning item must be sent right before the item that followed it, or OpenAI answers
    # "Item 'rs_…' of type 'reasoning' was provided without its required following item".
    # So a reasoning item waits here until the next item is known. One still waiting when
    # another reasoning item comes lost its follower (a server-side tool call, which tau
    # does not keep), and one still waiting at the end of the message (the turn stopped
    # after reasoning) has none: neither can be sent.
    out: list[JsonDict] = []
    waiting: JsonDict | None = None
    other_model_same_api = (
        message.provider == model.provider
        and message.api == model.api
        and message.model != model.id
    )
    for block in message.content:
        if isinstance(block, ThinkingContent):
            if block.thinking_signature:
                waiting = _reasoning_item(block.thinking_signature)
            continue
        if isinstance(block, TextContent):
            item_id, phase = decode_text_signature(block.text_signature)
            if not block.text and item_id is None:
                continue
            if item_id is None:
                item_id = f"msg_{msg_index}"
            elif len(item_id) > _MAX_ITEM_ID:
                item_id = f"msg_{short_hash(item_id)}"
            item: JsonDict = {
                "type": "message",
                "role": "assistant",
                "content": [
                    {
                        "type": "output_text",
                        "text": sanitize_surrogates(block.text),
                        "annotations": [],
                    }
                ],
                "status": "completed",
                "id": item_id,
            }
            if phase:
                item["phase"] = phase
        else:
            call_id, _, fc_id = block.id.partition("|")
            item = {
                "type": "function_call",
                "call_id": call_id,
                "name": block.name,
                "arguments": json.dumps(block.arguments, ensure_ascii=False),
            }
            # An fc_ id from another model of the same API would make OpenAI look for the
            # reasoning item that produced it, which that model's history does not carry.
            if fc_id and not (other_model_same_api and fc_id.startswith("fc_")):
                item["id"] = fc_id
        if waiting is not None:
            out.append(waiting)
            waiting = None
        out.append(item)
    return out


def _tool_result_item(model: Model, message: ToolResultMessage) -> JsonDict:
    text = "\n".join(
        sanitize_surrogates(block.text)
        for block in message.content
        if isinstance(block, TextContent)
    )
    images = [block for block in message.content if isinstance(block, ImageContent)]
    output: str | list[JsonDict]
    if images and model.supports_images:
        parts: list[JsonDict] = [{"type": "input_text", "text": text}] if text else []
        parts.extend(_image_part(image) for image in images)
        output = parts
    else:
        output = text if text or not images else "(see attached image)"
    return {
        "type": "function_call_output",
        "call_id": message.tool_call_id.partition("|")[0],
        "output": output,
    }


# --------------------------------------------------------------------------- request: tools


def convert_tools(tools: Sequence[Tool], *, strict: bool | None = False) -> list[JsonDict]:
    """Responses ``tools`` entries (``strict`` false: tau validates arguments itself)."""
    return [
        {
            "type": "function",
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.json_schema,
            "strict": strict,
        }
        for tool in tools
    ]


def base_payload(
    model: Model,
    context: Context,
    options: Mapping[str, Any],
    *,
    model_name: str | None = None,
) -> JsonDict:
    """The request fields both Responses adapters send (``model_name`` overrides ``model.id``).

    ``store`` is always false: tau sends the whole conversation each turn, and nothing of
    the user's should stay on the provider's side by default.
    """
    payload: JsonDict = {
        "model": model_name or model.id,
        "input": convert_messages(model, context),
        "stream": True,
        "store": False,
    }
    session_id = options.get("session_id")
    if session_id and options.get("cache_retention") != "none":
        payload["prompt_cache_key"] = session_id
    max_tokens = options.get("max_tokens")
    if max_tokens:
        payload["max_output_tokens"] = max_tokens
    temperature = options.get("temperature")
    if temperature is not None:
        payload["temperature"] = temperature
    if context.tools:
        payload["tools"] = convert_tools(context.tools)
    tool_choice = options.get("tool_choice")
    if tool_choice is not None:
        payload["tool_choice"] = tool_choice
    payload.update(reasoning_params(model, options))
    return payload


def reasoning_params(model: Model, options: Mapping[str, Any]) -> JsonDict:
    """The ``reasoning`` and ``include`` request fields for a reasoning model.

    ``include`` always asks for the encrypted reasoning: with ``store: false`` it is the only
    way the next turn can hand the model its own reasoning back.
    """
    if not model.reasoning:
        return {}
    # pi appends a "# Juice: 0 !important" developer message when no effort is given, an
    # undocumented trick to suppress reasoning that its own catalog names never trigger;
    # tau sends the model's default instead.
    params: JsonDict = {"include": ["reasoning.encrypted_content"]}
    effort = options.get("reasoning_effort")
    summary = options.get("reasoning_summary")
    if effort or summary:
        params["reasoning"] = {"effort": effort or "medium", "summary": summary or "auto"}
    return params


# --------------------------------------------------------------------------- response: stream

_STATUS_STOP: Mapping[str, StopReason] = {
    "completed": "stop",
    "incomplete": "length",
    "in_progress": "stop",
    "queued": "stop",
}


class _Item:
    """One output item being streamed, with the content block it feeds."""

    __slots__ = ("args_final", "index", "item_id", "kind", "parts", "phase")

    def __init__(self, kind: str, index: int, item_id: str, phase: str | None = None) -> None:
        # The item's type; a function call the server marked incomplete becomes
        # "incomplete_call", which takes no more argument events and is not closed at the end.
        self.kind = kind
        self.index = index
        self.item_id = item_id
        self.phase = phase
        # function_call: the final arguments once a .done carried them; later deltas are late.
        self.args_final: str | None = None
        # reasoning: how many summary parts / content parts have begun (for separators).
        self.parts = 0


class ResponsesStreamProcessor:
    """Feeds decoded Responses stream events into a :class:`MessageBuilder`.

    Items are tracked by ``output_index`` (some servers interleave items), falling back to
    ``item_id``. Event types it does not know (server-side tool progress, new features) are
    ignored. Call :meth:`handle` per event and :meth:`finish` when the stream ends.
    """

    __slots__ = ("_builder", "_by_id", "_completed", "_items", "_requested_tier")

    def __init__(self, builder: MessageBuilder, *, service_tier: str | None = None) -> None:
        self._builder = builder
        self._requested_tier = service_tier
        self._items: dict[int, _Item] = {}
        self._by_id: dict[str, _Item] = {}
        self._completed = False

    def handle_data(self, data: str) -> None:
        """Decode one SSE ``data`` field and handle it (``[DONE]`` is ignored)."""
        event = decode_event_data(data, "Responses stream event")
        if event is not None:
            self.handle(event)

    def handle(self, event: JsonDict) -> None:
        """Handle one decoded stream event."""
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

    def _track(self, event: JsonDict, item: _Item) -> None:
        output_index = event.get("output_index")
        self._items[output_index if output_index is not None else -len(self._items) - 1] = item
        if item.item_id:
            self._by_id[item.item_id] = item

    def _text_item(self, event: JsonDict) -> _Item:
        item = self._item(event)
        if item is None or item.kind != "message":
            # A delta before (or without) its output_item.added: open the block now.
            item = _Item("message", self._builder.open_text(), _str(event.get("item_id")))
            self._track(event, item)
        return item

    # ----------------------------------------------------------------------- items

    def _on_item_added(self, event: JsonDict) -> None:
        raw = event.get("item") or {}
        kind = raw.get("type")
        item_id = _str(raw.get("id"))
        builder = self._builder
        if kind == "reasoning":
            self._track(event, _Item(kind, builder.open_thinking(), item_id))
        elif kind == "message":
            phase = _str(raw.get("phase")) or None
            self._track(event, _Item(kind, builder.open_text(), item_id, phase))
        elif kind == "function_call":
            index = builder.open_tool_call(
                f"{_str(raw.get('call_id'))}|{item_id}", _str(raw.get("name"))
            )
            item = _Item(kind, index, item_id)
            self._track(event, item)
            arguments = raw.get("arguments")
            if arguments and arguments.__class__ is str:
                builder.tool_call_delta(index, arguments)

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
        block = builder.message.content[item.index]
        if item.kind == "reasoning":
            assert isinstance(block, ThinkingContent)
            missing = _unstreamed_tail(block.thinking, _reasoning_text(raw))
            if missing:
                builder.thinking_delta(item.index, missing)
            block.thinking_signature = json.dumps(raw, ensure_ascii=False, separators=(",", ":"))
            builder.close_thinking(item.index)
        elif item.kind == "message":
            assert isinstance(block, TextContent)
            missing = _unstreamed_tail(block.text, _message_text(raw))
            if missing:
                builder.text_delta(item.index, missing)
            phase = _str(raw.get("phase")) or item.phase
            block.text_signature = encode_text_signature(_str(raw.get("id")) or item.item_id, phase)
            builder.close_text(item.index)
        else:
            assert isinstance(block, ToolCall)
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
            self._builder.thinking_delta(item.index, "\n\n")
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
        self._builder.thinking_delta(item.index, delta)

    # ----------------------------------------------------------------------- text

    def _on_text_delta(self, event: JsonDict) -> None:
        delta = event.get("delta")
        if delta and delta.__class__ is str:
            self._builder.text_delta(self._text_item(event).index, delta)

    # ----------------------------------------------------------------------- function calls

    def _on_arguments_delta(self, event: JsonDict) -> None:
        delta = event.get("delta")
        item = self._item(event)
        if not delta or delta.__class__ is not str or item is None or item.kind != "function_call":
            return
        if item.args_final is None:
            self._builder.tool_call_delta(item.index, delta)

    def _on_arguments_done(self, event: JsonDict) -> None:
        item = self._item(event)
        arguments = event.get("arguments")
        if item is None or item.kind != "function_call" or not isinstance(arguments, str):
            return
        block = self._builder.message.content[item.index]
        assert isinstance(block, ToolCall)
        self._final_arguments(item, block, arguments)

    def _final_arguments(self, item: _Item, block: ToolCall, arguments: str) -> None:
        if item.args_final is not None:
            return
        streamed = block.arguments_text
        if arguments != streamed:
            if arguments.startswith(streamed):
                # Servers that send .done instead of (or ahead of) the deltas: stream the rest,
                # so the deltas still add up to the final JSON.
                self._builder.tool_call_delta(item.index, arguments[len(streamed) :])
            else:
                block.arguments = parse_streaming_json(arguments)
        item.args_final = arguments

    def _close_call(self, item: _Item) -> None:
        final_text = item.args_final
        self._builder.close_tool_call(
            item.index, parse_streaming_json(final_text) if final_text is not None else None
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
        usage = builder.message.usage
        fill_usage(usage, raw)
        tier = response.get("service_tier") or self._requested_tier
        factor = SERVICE_TIER_MULTIPLIERS.get(tier, 1.0) if isinstance(tier, str) else 1.0
        calculate_cost(builder.model, usage, factor)


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


_Handler = Callable[[ResponsesStreamProcessor, JsonDict], None]

_HANDLERS: dict[str, _Handler] = {
    "response.output_item.added": ResponsesStreamProcessor._on_item_added,
    "response.output_item.done": ResponsesStreamProcessor._on_item_done,
    "response.reasoning_summary_part.added": ResponsesStreamProcessor._reasoning_part_added,
    "response.reasoning_summary_text.delta": ResponsesStreamProcessor._on_reasoning_delta,
    "response.reasoning_text.delta": ResponsesStreamProcessor._on_reasoning_delta,
    "response.content_part.added": ResponsesStreamProcessor._on_content_part_added,
    "response.output_text.delta": ResponsesStreamProcessor._on_text_delta,
    "response.refusal.delta": ResponsesStreamProcessor._on_text_delta,
    "response.function_call_arguments.delta": ResponsesStreamProcessor._on_arguments_delta,
    "response.function_call_arguments.done": ResponsesStreamProcessor._on_arguments_done,
    "response.completed": ResponsesStreamProcessor._on_completed,
    "response.incomplete": ResponsesStreamProcessor._on_completed,
    "response.failed": ResponsesStreamProcessor._on_failed,
    "error": ResponsesStreamProcessor._on_error,
}


__all__ = [
    "SERVICE_TIER_MULTIPLIERS",
    "ResponsesStreamProcessor",
    "base_payload",
    "convert_messages",
    "convert_tools",
    "decode_text_signature",
    "encode_text_signature",
    "fill_usage",
    "reasoning_params",
]
