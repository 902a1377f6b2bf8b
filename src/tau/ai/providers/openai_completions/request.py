"""Building a chat-completions request: messages, tools, parameters, headers and the key.

The history first goes through the cross-provider transform (foreign thinking turned into
text, tool-call ids normalised, orphaned calls repaired); the rest of this module only speaks
the chat-completions dialect chosen by the resolved compat.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from tau.ai.capabilities.transform_messages import (
    MistralIdNormalizer,
    ToolCallIdNormalizer,
    normalize_id_openai_completions,
    transform_messages,
)
from tau.ai.core.compat import ResolvedCompat
from tau.ai.core.errors import ProviderError
from tau.ai.core.options import OutputSchema
from tau.ai.core.types import (
    AssistantMessage,
    Context,
    ImageContent,
    Message,
    Model,
    TextContent,
    ThinkingContent,
    Tool,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from tau.ai.lookup.env_keys import resolve_api_key
from tau.ai.providers.copilot import COPILOT_PROVIDER, copilot_dynamic_headers
from tau.ai.providers.openai_completions.compat import is_endpoint, resolve_compat
from tau.ai.providers.openai_completions.decoder import REASONING_FIELDS
from tau.ai.providers.openai_completions.options import OpenAICompletionsOptions
from tau.ai.providers.output_schema import json_schema_format, output_instructions
from tau.ai.providers.parts import typed_parts
from tau.ai.streaming.adapter import ProviderRequest
from tau.ai.streaming.headers import JSON_EVENT_STREAM, request_headers
from tau.ai.streaming.json_body import tool_arguments_json
from tau.ai.streaming.sanitize import sanitize_surrogates

BRIDGE_TEXT = "I have processed the tool results."
TOOL_IMAGES_TEXT = "Attached image(s) from tool result:"
IMAGE_ONLY_RESULT = "(see attached image)"
EMPTY_RESULT = "(no output)"

_BRIDGE: dict[str, Any] = {"role": "assistant", "content": BRIDGE_TEXT}


def _image_part(image: ImageContent) -> dict[str, Any]:
    return {
        "type": "image_url",
        "image_url": {"url": f"data:{image.mime_type};base64,{image.data}"},
    }


def _user_message(message: UserMessage, model: Model) -> dict[str, Any] | None:
    content = message.content
    if isinstance(content, str):
        return {"role": "user", "content": sanitize_surrogates(content)}
    parts = typed_parts(content, "text", _image_part if model.supports_images else None)
    return {"role": "user", "content": parts} if parts else None


def _assistant_message(message: AssistantMessage, compat: ResolvedCompat) -> dict[str, Any] | None:
    texts: list[str] = []
    thoughts: list[str] = []
    reasoning_field: str | None = None
    tool_calls: list[dict[str, Any]] = []
    reasoning_details: list[Any] = []
    for block in message.content:
        if isinstance(block, TextContent):
            if block.text.strip():
                texts.append(sanitize_surrogates(block.text))
        elif isinstance(block, ThinkingContent):
            if block.thinking.strip():
                thoughts.append(sanitize_surrogates(block.thinking))
                if reasoning_field is None and block.thinking_signature in REASONING_FIELDS:
                    reasoning_field = block.thinking_signature
        else:
            tool_calls.append(_tool_call(block))
            detail = _reasoning_detail(block)
            if detail is not None:
                reasoning_details.append(detail)
    out: dict[str, Any] = {
        "role": "assistant",
        "content": "" if compat.requires_assistant_after_tool_result else None,
    }
    text = "".join(texts)
    if thoughts and compat.requires_thinking_as_text:
        # The reasoning goes in front of the answer, as the model produced it.
        text = "\n\n".join(("\n".join(thoughts), text)) if text else "\n".join(thoughts)
    elif thoughts and reasoning_field is not None:
        out[reasoning_field] = "\n".join(thoughts)
    if text:
        out["content"] = text
    if tool_calls:
        out["tool_calls"] = tool_calls
    if reasoning_details:
        out["reasoning_details"] = reasoning_details
    if not text and not tool_calls:
        return None
    return out


def _tool_call(call: ToolCall) -> dict[str, Any]:
    return {
        "id": call.id,
        "type": "function",
        "function": {"name": call.name, "arguments": tool_arguments_json(call)},
    }


def _reasoning_detail(call: ToolCall) -> Any:
    # OpenRouter's encrypted reasoning rides on the tool call it preceded, as JSON.
    signature = call.thought_signature
    if not signature or not signature.startswith("{"):
        return None
    try:
        detail = json.loads(signature)
    except ValueError:
        return None
    return detail if isinstance(detail, dict) and detail.get("type") else None


def _tool_result(message: ToolResultMessage, compat: ResolvedCompat) -> dict[str, Any]:
    text = "\n".join(
        sanitize_surrogates(b.text) for b in message.content if isinstance(b, TextContent)
    )
    if not text:
        has_image = any(isinstance(b, ImageContent) for b in message.content)
        text = IMAGE_ONLY_RESULT if has_image else EMPTY_RESULT
    out: dict[str, Any] = {"role": "tool", "content": text, "tool_call_id": message.tool_call_id}
    if compat.requires_tool_result_name:
        out["name"] = message.tool_name
    return out


def convert_messages(
    model: Model,
    system_prompt: str | None,
    messages: Sequence[Message],
    compat: ResolvedCompat,
) -> list[dict[str, Any]]:
    """The ``messages`` array for ``model`` in the dialect of ``compat``."""
    out: list[dict[str, Any]] = []
    if system_prompt:
        role = "developer" if model.reasoning and compat.supports_developer_role else "system"
        out.append({"role": role, "content": sanitize_surrogates(system_prompt)})
    bridge = compat.requires_assistant_after_tool_result
    after_tool_result = False
    i = 0
    while i < len(messages):
        message = messages[i]
        if isinstance(message, ToolResultMessage):
            images: list[dict[str, Any]] = []
            while i < len(messages) and isinstance(messages[i], ToolResultMessage):
                result = messages[i]
                assert isinstance(result, ToolResultMessage)
                out.append(_tool_result(result, compat))
                if model.supports_images:
                    images.extend(
                        _image_part(b) for b in result.content if isinstance(b, ImageContent)
                    )
                i += 1
            after_tool_result = True
            if images:
                if bridge:
                    out.append(dict(_BRIDGE))
                out.append(
                    {
                        "role": "user",
                        "content": [{"type": "text", "text": TOOL_IMAGES_TEXT}, *images],
                    }
                )
                after_tool_result = False
            continue
        if isinstance(message, UserMessage):
            converted = _user_message(message, model)
            if converted is not None:
                if bridge and after_tool_result:
                    out.append(dict(_BRIDGE))
                out.append(converted)
                after_tool_result = False
        else:
            converted = _assistant_message(message, compat)
            if converted is not None:
                out.append(converted)
                after_tool_result = False
        i += 1
    return out


def convert_tools(tools: Sequence[Tool], compat: ResolvedCompat) -> list[dict[str, Any]]:
    """The ``tools`` array: one ``function`` tool per :class:`~tau.ai.core.types.Tool`."""
    out: list[dict[str, Any]] = []
    for tool in tools:
        function: dict[str, Any] = {
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.json_schema,
        }
        if compat.supports_strict_mode:
            function["strict"] = False
        out.append({"type": "function", "function": function})
    return out


def _has_tool_history(messages: Sequence[Message]) -> bool:
    for message in messages:
        if isinstance(message, ToolResultMessage):
            return True
        if isinstance(message, AssistantMessage) and any(
            isinstance(b, ToolCall) for b in message.content
        ):
            return True
    return False


def _mark_openrouter_cache(messages: list[dict[str, Any]]) -> None:
    # Anthropic models behind OpenRouter cache only up to an explicit breakpoint: put one on
    # the last user or assistant message that has text.
    marker = {"type": "ephemeral"}
    for message in reversed(messages):
        if message["role"] not in ("user", "assistant"):
            continue
        content = message.get("content")
        if isinstance(content, str) and content:
            message["content"] = [{"type": "text", "text": content, "cache_control": marker}]
            return
        if isinstance(content, list):
            for part in reversed(content):
                if part.get("type") == "text":
                    part["cache_control"] = marker
                    return


def _apply_reasoning(
    params: dict[str, Any], model: Model, compat: ResolvedCompat, effort: str | None
) -> None:
    if not model.reasoning:
        return
    fmt = compat.thinking_format
    if fmt == "zai":
        # z.ai thinks by default: say so explicitly either way.
        params["thinking"] = {"type": "enabled" if effort else "disabled"}
    elif fmt == "qwen":
        params["enable_thinking"] = bool(effort)
    elif fmt == "qwen-chat-template":
        params["chat_template_kwargs"] = {"enable_thinking": bool(effort)}
    elif effort and compat.supports_reasoning_effort:
        mapped = compat.reasoning_effort_map.get(effort, effort)
        if fmt == "openrouter":
            params["reasoning"] = {"effort": mapped}
        else:
            params["reasoning_effort"] = mapped


def _apply_output(params: dict[str, Any], output: OutputSchema, compat: ResolvedCompat) -> None:
    match compat.json_output:
        case "json_schema":
            params["response_format"] = {
                "type": "json_schema",
                "json_schema": json_schema_format(output),
            }
        case "json_object_schema":
            params["response_format"] = {"type": "json_object", "schema": output["schema"]}
        case "json_object":
            # JSON mode takes no schema: the model reads it from a system message (the mode
            # also requires the word JSON in the messages).
            params["response_format"] = {"type": "json_object"}
            messages: list[dict[str, Any]] = params["messages"]
            at = 0
            while at < len(messages) and messages[at]["role"] in ("system", "developer"):
                at += 1
            messages.insert(at, {"role": "system", "content": output_instructions(output)})
        case _:
            raise ProviderError(
                "This endpoint has no native structured output (compat json_output='none'): "
                "use mode='tool' or mode='prompted'"
            )


def build_request(
    model: Model, context: Context, options: OpenAICompletionsOptions
) -> ProviderRequest:
    """``POST {base_url}/chat/completions`` in the endpoint's dialect (the key is optional:
    local servers take none)."""
    key = resolve_api_key(model, options)
    defaults: Mapping[str, str] = JSON_EVENT_STREAM
    if model.provider == COPILOT_PROVIDER:
        defaults = {**defaults, **copilot_dynamic_headers(context)}
    auth = {"authorization": f"Bearer {key}"} if key else None
    return ProviderRequest(
        model.base_url.rstrip("/") + "/chat/completions",
        request_headers(model, options, auth, defaults),
        request_body(model, context, options),
    )


def _id_normalizer(model: Model) -> ToolCallIdNormalizer:
    # Mistral's chat endpoint takes only 9-alphanumeric tool-call ids.
    if is_endpoint(model, "mistral", "api.mistral.ai"):
        return MistralIdNormalizer()
    return normalize_id_openai_completions


def request_body(
    model: Model,
    context: Context,
    options: OpenAICompletionsOptions,
    *,
    messages: Sequence[Message] | None = None,
    compat: ResolvedCompat | None = None,
) -> dict[str, Any]:
    """The request body. ``messages`` (the history, already transformed for ``model``) and
    ``compat`` default to what ``build_request`` derives from ``context`` and ``model``."""
    if compat is None:
        compat = resolve_compat(model)
    if messages is None:
        messages = transform_messages(context.messages, model, _id_normalizer(model))
    converted = convert_messages(model, context.system_prompt, messages, compat)
    if model.provider == "openrouter" and model.id.startswith("anthropic/"):
        _mark_openrouter_cache(converted)
    params: dict[str, Any] = {"model": model.id, "messages": converted, "stream": True}
    if compat.supports_usage_in_streaming:
        params["stream_options"] = {"include_usage": True}
    if compat.supports_store:
        params["store"] = False
    max_tokens = options.get("max_tokens")
    if max_tokens:
        params[compat.max_tokens_field] = max_tokens
    if options.get("temperature") is not None:
        params["temperature"] = options["temperature"]
    if context.tools:
        params["tools"] = convert_tools(context.tools, compat)
    elif compat.accepts_empty_tools and _has_tool_history(messages):
        # Anthropic models behind LiteLLM-style proxies reject tool history without tools.
        params["tools"] = []
    if options.get("tool_choice") is not None:
        params["tool_choice"] = _tool_choice(options["tool_choice"])
    output = options.get("output_schema")
    if output is not None:
        _apply_output(params, output, compat)
    _apply_reasoning(params, model, compat, options.get("reasoning_effort"))
    session_id = options.get("session_id")
    if session_id and compat.supports_prompt_cache_key and options.get("cache_retention") != "none":
        params["prompt_cache_key"] = session_id
    if options.get("service_tier"):
        params["service_tier"] = options["service_tier"]
    url = model.base_url
    if "openrouter.ai" in url and compat.open_router_routing:
        params["provider"] = dict(compat.open_router_routing)
    gateway = {
        k: v for k, v in compat.vercel_gateway_routing.items() if k in ("only", "order") and v
    }
    if "ai-gateway.vercel.sh" in url and gateway:
        params["providerOptions"] = {"gateway": gateway}
    return params


def _tool_choice(choice: Any) -> Any:
    # Accept the Anthropic spellings too, so one tool_choice works across adapters.
    if choice == "any":
        return "required"
    if isinstance(choice, str) and choice not in ("auto", "none", "required"):
        return {"type": "function", "function": {"name": choice}}
    if isinstance(choice, dict) and choice.get("type") == "tool" and choice.get("name"):
        return {"type": "function", "function": {"name": choice["name"]}}
    if isinstance(choice, dict) and choice.get("type") == "any":
        return "required"
    return choice
