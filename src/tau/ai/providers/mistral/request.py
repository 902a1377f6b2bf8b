"""Building a Mistral chat request: messages, tools, parameters, headers and the key."""

from __future__ import annotations

from typing import Any

from tau.ai.capabilities.transform_messages import MistralIdNormalizer, transform_messages
from tau.ai.core.types import (
    AssistantMessage,
    Context,
    ImageContent,
    Model,
    TextContent,
    ThinkingContent,
    Tool,
    ToolResultMessage,
    UserMessage,
)
from tau.ai.lookup.env_keys import require_api_key
from tau.ai.providers.mistral.options import MistralOptions
from tau.ai.providers.output_schema import json_schema_format
from tau.ai.providers.parts import typed_parts
from tau.ai.streaming.adapter import ProviderRequest, set_given
from tau.ai.streaming.headers import JSON_EVENT_STREAM, request_headers
from tau.ai.streaming.json_body import tool_arguments_json
from tau.ai.streaming.sanitize import sanitize_surrogates

__all__ = [
    "IMAGE_OMITTED",
    "build_request",
    "chat_url",
    "convert_messages",
    "convert_tools",
    "request_body",
]

JsonDict = dict[str, Any]

IMAGE_OMITTED = "(image omitted: model does not support images)"
TOOL_IMAGE_OMITTED = "\n[tool image omitted: model does not support images]"

# --------------------------------------------------------------------------- request


def _image_chunk(image: ImageContent) -> JsonDict:
    return {"type": "image_url", "image_url": f"data:{image.mime_type};base64,{image.data}"}


def _user_message(model: Model, message: UserMessage) -> JsonDict:
    content = message.content
    if isinstance(content, str):
        return {"role": "user", "content": sanitize_surrogates(content)}
    chunks = typed_parts(content, "text", _image_chunk if model.supports_images else None)
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
                        "arguments": tool_arguments_json(block, ensure_ascii=False),
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


def request_body(model: Model, context: Context, options: MistralOptions) -> JsonDict:
    """The request body for ``model`` (before the ``on_payload`` hook)."""
    payload: JsonDict = {
        "model": model.id,
        "stream": True,
        "messages": convert_messages(model, context),
    }
    if context.tools:
        payload["tools"] = convert_tools(context.tools)
    set_given(
        payload,
        temperature=options.get("temperature"),
        max_tokens=options.get("max_tokens") or None,
        tool_choice=_tool_choice(options.get("tool_choice")),
        prompt_mode=options.get("prompt_mode") or None,
    )
    output = options.get("output_schema")
    if output is not None:
        payload["response_format"] = {
            "type": "json_schema",
            "json_schema": json_schema_format(output),
        }
    return payload


def _tool_choice(choice: Any) -> Any:
    # A tool's name (or Anthropic's spelling of it) forces that tool, as in the other adapters.
    if isinstance(choice, str) and choice not in ("auto", "none", "any", "required"):
        return {"type": "function", "function": {"name": choice}}
    if isinstance(choice, dict) and choice.get("type") == "tool" and choice.get("name"):
        return {"type": "function", "function": {"name": choice["name"]}}
    return choice


def chat_url(base_url: str) -> str:
    """The chat endpoint: the catalog's base URL is the bare host, as the SDK takes it."""
    base = base_url.rstrip("/")
    return base + ("/chat/completions" if base.endswith("/v1") else "/v1/chat/completions")


def build_request(model: Model, context: Context, options: MistralOptions) -> ProviderRequest:
    """``POST {host}/v1/chat/completions`` with the key as a bearer token."""
    defaults = dict(JSON_EVENT_STREAM)
    session_id = options.get("session_id")
    # KV-cache affinity: requests of one session land on the same replica.
    if session_id:
        defaults["x-affinity"] = session_id
    auth = {"authorization": f"Bearer {require_api_key(model, options)}"}
    return ProviderRequest(
        chat_url(model.base_url),
        request_headers(model, options, auth, defaults),
        request_body(model, context, options),
    )
