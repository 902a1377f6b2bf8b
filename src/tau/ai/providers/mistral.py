"""``mistral-conversations``: Mistral's chat API (``POST {base_url}/chat/completions``, SSE).

Spoken directly over HTTP, no SDK. Mistral's wire format resembles OpenAI's chat
completions but has its own content chunks (``text``, ``thinking`` with nested text parts,
``image_url``), ``prompt_mode: "reasoning"`` for its reasoning models, and tool-call ids of
exactly nine alphanumeric characters, so ids from other providers are re-mapped on handoff.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from tau.ai.builder import MessageBuilder, ProviderError, apply_on_payload, launch_stream
from tau.ai.env_keys import require_api_key
from tau.ai.event_stream import AssistantMessageEventStream
from tau.ai.providers.simple_options import base_options, clamp_reasoning
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
    UserMessage,
)
from tau.ai.utils.cost import calculate_cost

if TYPE_CHECKING:
    from tau.ai.http import ProviderHTTPError
from tau.ai.utils.hash import short_hash
from tau.ai.utils.sanitize import sanitize_surrogates
from tau.ai.utils.sse_json import decode_event_data, sse_request_headers
from tau.ai.utils.transform_messages import MistralIdNormalizer, transform_messages

__all__ = [
    "THINKING_SIGNATURE",
    "MistralStreamProcessor",
    "build_payload",
    "chat_url",
    "convert_messages",
    "convert_tools",
    "mistral_http_error",
    "stream",
    "stream_simple",
]

JsonDict = dict[str, Any]

THINKING_SIGNATURE = "thinking"
"""Marks thinking that Mistral streamed natively (a ``thinking`` chunk), so that the handoff
transform replays it to the same model; Mistral itself has no signatures."""
IMAGE_OMITTED = "(image omitted: model does not support images)"
TOOL_IMAGE_OMITTED = "\n[tool image omitted: model does not support images]"
_ERROR_BODY_LIMIT = 4000

_STOP_REASONS: Mapping[str, StopReason] = {
    "stop": "stop",
    "length": "length",
    "model_length": "length",
    "tool_calls": "toolUse",
    "error": "error",
}

# --------------------------------------------------------------------------- request


def _image_chunk(image: ImageContent) -> JsonDict:
    return {"type": "image_url", "image_url": f"data:{image.mime_type};base64,{image.data}"}


def _user_message(model: Model, message: UserMessage) -> JsonDict:
    content = message.content
    if isinstance(content, str):
        return {"role": "user", "content": sanitize_surrogates(content)}
    chunks: list[JsonDict] = []
    for block in content:
        if isinstance(block, TextContent):
            chunks.append({"type": "text", "text": sanitize_surrogates(block.text)})
        elif model.supports_images:
            chunks.append(_image_chunk(block))
    if not chunks:
        chunks.append({"type": "text", "text": IMAGE_OMITTED})
    return {"role": "user", "content": chunks}


def _assistant_message(message: AssistantMessage) -> JsonDict | None:
    content: list[JsonDict] = []
    tool_calls: list[JsonDict] = []
    for block in message.content:
        if isinstance(block, TextContent):
            if block.text.strip():
                content.append({"type": "text", "text": sanitize_surrogates(block.text)})
        elif isinstance(block, ThinkingContent):
            if block.thinking.strip():
                text = sanitize_surrogates(block.thinking)
                content.append({"type": "thinking", "thinking": [{"type": "text", "text": text}]})
        else:
            tool_calls.append(
                {
                    "id": block.id,
                    "type": "function",
                    "function": {
                        "name": block.name,
                        "arguments": json.dumps(block.arguments, ensure_ascii=False),
                    },
                }
            )
    if not content and not tool_calls:
        return None
    # Mistral's own examples send an empty string, not an empty list, beside tool calls.
    out: JsonDict = {"role": "assistant", "content": content or ""}
    if tool_calls:
        out["tool_calls"] = tool_calls
    return out


def _tool_message(model: Model, message: ToolResultMessage) -> JsonDict:
    text = "\n".join(b.text for b in message.content if isinstance(b, TextContent)).strip()
    images = [b for b in message.content if isinstance(b, ImageContent)]
    if images and not model.supports_images:
        text = text + TOOL_IMAGE_OMITTED if text else IMAGE_OMITTED
        images = []
    elif images and not text:
        text = "(see attached image)"
    elif not text:
        text = "(no tool output)"
    if message.is_error:
        text = f"[tool error] {text}"
    chunks: list[JsonDict] = [{"type": "text", "text": sanitize_surrogates(text)}]
    chunks.extend(_image_chunk(image) for image in images)
    return {
        "role": "tool",
        "tool_call_id": message.tool_call_id,
        "name": message.tool_name,
        "content": chunks,
    }


def convert_messages(model: Model, context: Context) -> list[JsonDict]:
    """Mistral ``messages`` for ``context``: system prompt first, ids from others re-mapped."""
    normalizer = MistralIdNormalizer()
    out: list[JsonDict] = []
    if context.system_prompt:
        out.append({"role": "system", "content": sanitize_surrogates(context.system_prompt)})
    for message in transform_messages(context.messages, model, normalizer):
        if isinstance(message, UserMessage):
            out.append(_user_message(model, message))
        elif isinstance(message, AssistantMessage):
            converted = _assistant_message(message)
            if converted is not None:
                out.append(converted)
        else:
            out.append(_tool_message(model, message))
    return out


def convert_tools(tools: list[Tool]) -> list[JsonDict]:
    """Mistral ``tools`` entries (``strict`` false: tau validates arguments itself)."""
    return [
        {
            "type": "function",
            "function": {
                "name": tool.name,
                "description": tool.description,
                "parameters": tool.json_schema,
                "strict": False,
            },
        }
        for tool in tools
    ]


def build_payload(model: Model, context: Context, options: Mapping[str, Any]) -> JsonDict:
    """The request body for ``model`` (before the ``on_payload`` hook)."""
    payload: JsonDict = {
        "model": model.id,
        "stream": True,
        "messages": convert_messages(model, context),
    }
    if context.tools:
        payload["tools"] = convert_tools(context.tools)
    temperature = options.get("temperature")
    if temperature is not None:
        payload["temperature"] = temperature
    max_tokens = options.get("max_tokens")
    if max_tokens:
        payload["max_tokens"] = max_tokens
    tool_choice = options.get("tool_choice")
    if tool_choice is not None:
        payload["tool_choice"] = tool_choice
    prompt_mode = options.get("prompt_mode")
    if prompt_mode:
        payload["prompt_mode"] = prompt_mode
    return payload


# --------------------------------------------------------------------------- response


def derived_tool_call_id(index: int) -> str:
    """The nine-character id given to a streamed tool call that arrived without one."""
    return "".join(c for c in short_hash(f"toolcall:{index}") if c.isalnum())[:9].ljust(9, "0")


class MistralStreamProcessor:
    """Feeds decoded Mistral stream chunks into a :class:`MessageBuilder`.

    Text and thinking alternate in one open block at a time; tool calls are keyed by
    ``(id, index)`` and all end together when the stream ends (pi-ai-spec §7.11).
    """

    __slots__ = ("_builder", "_calls", "_current", "_finish", "_last_by_index")

    def __init__(self, builder: MessageBuilder) -> None:
        self._builder = builder
        self._current: tuple[str, int] | None = None  # ("text" | "thinking", content index)
        # (id, index) -> content position, in the order the calls opened.
        self._calls: dict[tuple[str, int], int] = {}
        self._last_by_index: dict[int, int] = {}
        self._finish: str | None = None

    def handle_data(self, data: str) -> None:
        """Decode one SSE ``data`` field and handle it (``[DONE]`` is ignored)."""
        chunk = decode_event_data(data, "Mistral stream chunk")
        if chunk is not None:
            self.handle(chunk)

    def handle(self, chunk: JsonDict) -> None:
        """Handle one decoded stream chunk."""
        try:
            self._handle(chunk)
        except (AttributeError, TypeError) as exc:
            # A field of the wrong JSON type somewhere in the chunk.
            raise ProviderError(f"Malformed Mistral stream chunk: {exc}") from None

    def _handle(self, chunk: JsonDict) -> None:
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
            self._close_current()
            for call in tool_calls:
                self._tool_call(call)
        finish = choice.get("finish_reason")
        if finish and isinstance(finish, str):
            self._finish = finish

    def _append(self, kind: str, text: Any) -> None:
        if not text or text.__class__ is not str:
            return
        text = sanitize_surrogates(text)
        builder = self._builder
        current = self._current
        if current is None or current[0] != kind:
            self._close_current()
            index = (
                builder.open_text() if kind == "text" else builder.open_thinking(THINKING_SIGNATURE)
            )
            current = self._current = (kind, index)
        if kind == "text":
            builder.text_delta(current[1], text)
        else:
            builder.thinking_delta(current[1], text)

    def _close_current(self) -> None:
        current = self._current
        if current is not None:
            self._current = None
            if current[0] == "text":
                self._builder.close_text(current[1])
            else:
                self._builder.close_thinking(current[1])

    def _tool_call(self, call: JsonDict) -> None:
        builder = self._builder
        raw_index = call.get("index")
        index = raw_index if isinstance(raw_index, int) else 0
        raw_id = call.get("id")
        function = call.get("function") or {}
        name = function.get("name")
        name = name if isinstance(name, str) else ""
        call_id: str | None
        if raw_id in (None, "", "null"):
            # A continuation fragment without an id belongs to the call at its index.
            call_id = None
            position = self._last_by_index.get(index)
        else:
            call_id = str(raw_id)
            position = self._calls.get((call_id, index))
        if position is None:
            if call_id is None:
                call_id = derived_tool_call_id(index)
            position = builder.open_tool_call(call_id, name)
            self._calls[(call_id, index)] = position
        elif name:
            block = builder.message.content[position]
            assert isinstance(block, ToolCall)
            if not block.name:
                block.name = name
        self._last_by_index[index] = position
        arguments = function.get("arguments")
        if arguments is None or arguments == "":
            return
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments, ensure_ascii=False)
        builder.tool_call_delta(position, arguments)

    def _usage(self, raw: JsonDict) -> None:
        usage = self._builder.message.usage
        usage.input = raw.get("prompt_tokens") or 0
        usage.output = raw.get("completion_tokens") or 0
        usage.total_tokens = raw.get("total_tokens") or usage.input + usage.output
        calculate_cost(self._builder.model, usage)

    def finish(self) -> None:
        """The stream ended: close blocks (tool calls last), set the stop reason.

        The finish reason is what ends the tool calls (they have no end marker of their own):
        a stream cut off before it leaves them unfinished.
        """
        self._close_current()
        finish = self._finish
        if finish is None:
            raise ProviderError("Mistral stream ended before a finish_reason (truncated stream)")
        builder = self._builder
        for position in self._calls.values():
            builder.close_tool_call(position)
        stop = _STOP_REASONS.get(finish, "stop")
        message = builder.message
        if stop == "error":
            message.error_message = "Mistral ended the response with finish_reason 'error'"
        message.stop_reason = stop


# --------------------------------------------------------------------------- entry points


def mistral_http_error(exc: ProviderHTTPError) -> ProviderError:
    """pi's error text: ``Mistral API error (<status>): <body, cut at 4000 chars>``."""
    if exc.body.strip():
        body = exc.body
        if len(body) > _ERROR_BODY_LIMIT:
            extra = len(body) - _ERROR_BODY_LIMIT
            body = f"{body[:_ERROR_BODY_LIMIT]}... [truncated {extra} chars]"
        return ProviderError(f"Mistral API error ({exc.status}): {body}")
    return ProviderError(f"Mistral API error ({exc.status}): {exc}")


def chat_url(base_url: str) -> str:
    """The chat endpoint: the catalog's base URL is the bare host, as the SDK takes it."""
    base = base_url.rstrip("/")
    return base + ("/chat/completions" if base.endswith("/v1") else "/v1/chat/completions")


def stream(
    model: Model, context: Context, options: Mapping[str, Any] | None = None
) -> AssistantMessageEventStream:
    """Stream one response from a Mistral model."""
    opts: Mapping[str, Any] = options or {}

    async def run(builder: MessageBuilder) -> None:
        from tau.ai.http import ProviderHTTPError, open_stream

        api_key = require_api_key(model, opts)
        payload = await apply_on_payload(opts, build_payload(model, context, opts), model)
        headers = sse_request_headers(model, opts, {"authorization": f"Bearer {api_key}"})
        session_id = opts.get("session_id")
        # KV-cache affinity: requests of one session land on the same replica.
        if session_id and not any(key.lower() == "x-affinity" for key in headers):
            headers["x-affinity"] = session_id
        url = chat_url(model.base_url)
        processor = MistralStreamProcessor(builder)
        handle_data = processor.handle_data
        try:
            async with open_stream(opts, "POST", url, headers=headers, json=payload) as response:
                async for event in response:
                    handle_data(event.data)
        except ProviderHTTPError as exc:
            raise mistral_http_error(exc) from exc
        processor.finish()

    return launch_stream(model, opts, run)


def stream_simple(
    model: Model, context: Context, options: Mapping[str, Any] | None = None
) -> AssistantMessageEventStream:
    """:func:`stream` with ``prompt_mode: "reasoning"`` when a reasoning level is asked."""
    opts = options or {}
    out = base_options(model, opts)
    if model.reasoning and clamp_reasoning(opts.get("reasoning")):
        out["prompt_mode"] = "reasoning"
    if "tool_choice" in opts:
        out["tool_choice"] = opts["tool_choice"]
    return stream(model, context, out)
