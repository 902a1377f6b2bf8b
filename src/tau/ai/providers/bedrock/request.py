"""Building a ConverseStream request: messages, cache points, tools and reasoning fields."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, cast
from urllib.parse import quote

from tau.ai.capabilities.transform_messages import normalize_id_anthropic, transform_messages
from tau.ai.core.errors import ProviderError
from tau.ai.core.types import (
    AssistantMessage,
    CacheRetention,
    Context,
    ImageContent,
    Message,
    Model,
    TextContent,
    ThinkingContent,
    ThinkingLevel,
    Tool,
    ToolResultMessage,
    UserMessage,
)
from tau.ai.providers.bedrock.auth import bearer_token, resolve_region
from tau.ai.providers.bedrock.options import BedrockOptions
from tau.ai.providers.output_schema import closed_schema
from tau.ai.providers.parts import text_parts
from tau.ai.streaming.adapter import ProviderRequest
from tau.ai.streaming.headers import request_headers
from tau.ai.streaming.sanitize import sanitize_surrogates

__all__ = [
    "EVENT_STREAM",
    "build_request",
    "convert_messages",
    "endpoint_url",
    "is_adaptive_claude",
    "is_claude",
    "request_body",
    "supports_cache_points",
]

EVENT_STREAM = "application/vnd.amazon.eventstream"
"""The content type of ConverseStream's binary event stream."""
DEFAULT_HEADERS = {"accept": EVENT_STREAM, "content-type": "application/json"}
_IMAGE_FORMATS = {
    "image/jpeg": "jpeg",
    "image/jpg": "jpeg",
    "image/png": "png",
    "image/gif": "gif",
    "image/webp": "webp",
}
_DEFAULT_BUDGETS: dict[str, int] = {
    "minimal": 1024,
    "low": 2048,
    "medium": 8192,
    "high": 16384,
}
_EFFORT = {"minimal": "low", "low": "low", "medium": "medium", "high": "high"}
_INTERLEAVED_BETA = "interleaved-thinking-2025-05-14"


# --------------------------------------------------------------------------- model families


def is_claude(model: Model) -> bool:
    """Anthropic models on Bedrock: they take signatures and ``anthropic_beta``."""
    return "anthropic.claude" in model.id or "anthropic/claude" in model.id


def is_adaptive_claude(model: Model) -> bool:
    """Claude 4.6 models reason adaptively (an effort, not a budget)."""
    return is_claude(model) and any(
        tag in model.id for tag in ("opus-4-6", "opus-4.6", "sonnet-4-6", "sonnet-4.6")
    )


def supports_cache_points(model: Model) -> bool:
    """Whether the model accepts ``cachePoint`` blocks (other models reject them)."""
    model_id = model.id
    return "claude" in model_id and any(
        tag in model_id for tag in ("-4-", "-4.", "claude-3-7-sonnet", "claude-3-5-haiku")
    )


# --------------------------------------------------------------------------- messages


def _image_block(image: ImageContent) -> dict[str, Any]:
    fmt = _IMAGE_FORMATS.get(image.mime_type.lower())
    if fmt is None:
        raise ProviderError(f"Unknown image type for Bedrock: {image.mime_type}")
    # The JSON protocol carries blobs as base64, which is what the image already is.
    return {"image": {"format": fmt, "source": {"bytes": image.data}}}


def _assistant_blocks(message: AssistantMessage, model: Model) -> list[dict[str, Any]]:
    # After the handoff transform, thinking left here is this model's own and signed.
    claude = is_claude(model)
    blocks: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, TextContent):
            if block.text.strip():
                blocks.append({"text": sanitize_surrogates(block.text)})
        elif isinstance(block, ThinkingContent):
            if block.redacted:
                blocks.append({"reasoningContent": {"redactedContent": block.thinking_signature}})
                continue
            reasoning: dict[str, Any] = {"text": sanitize_surrogates(block.thinking)}
            if claude:
                # Other models reject the signature field.
                reasoning["signature"] = block.thinking_signature
            blocks.append({"reasoningContent": {"reasoningText": reasoning}})
        else:
            blocks.append(
                {"toolUse": {"toolUseId": block.id, "name": block.name, "input": block.arguments}}
            )
    return blocks


def _tool_result_block(message: ToolResultMessage) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, TextContent):
            content.append({"text": sanitize_surrogates(block.text)})
        else:
            content.append(_image_block(block))
    if not content:
        content.append({"text": ""})
    return {
        "toolResult": {
            "toolUseId": message.tool_call_id,
            "content": content,
            "status": "error" if message.is_error else "success",
        }
    }


def convert_messages(messages: Sequence[Message], model: Model) -> list[dict[str, Any]]:
    """Converse ``messages`` for messages already passed through the handoff transform.

    Converse rejects two messages of the same role in a row ("A conversation must alternate
    between user and assistant roles"), so consecutive tool results, and a user message that
    follows them (as when the turn between was aborted and left out), share one user message.
    """
    out: list[dict[str, Any]] = []
    for message in messages:
        if isinstance(message, ToolResultMessage):
            blocks, role = [_tool_result_block(message)], "user"
        elif isinstance(message, UserMessage):
            blocks, role = text_parts(message.content, _image_block), "user"
        else:
            blocks, role = _assistant_blocks(message, model), "assistant"
        if not blocks:
            continue
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})
    return out


# --------------------------------------------------------------------------- request body


def _cache_point(retention: CacheRetention) -> dict[str, Any]:
    point: dict[str, Any] = {"type": "default"}
    if retention == "long":
        point["ttl"] = "1h"
    return {"cachePoint": point}


def _tool_config(tools: Sequence[Tool] | None, tool_choice: Any) -> dict[str, Any] | None:
    if not tools or tool_choice == "none":
        return None
    config: dict[str, Any] = {
        "tools": [
            {
                "toolSpec": {
                    "name": tool.name,
                    "description": tool.description,
                    "inputSchema": {"json": tool.json_schema},
                }
            }
            for tool in tools
        ]
    }
    if tool_choice in (None, "auto"):
        config["toolChoice"] = {"auto": {}}
    elif tool_choice in ("any", "required"):
        config["toolChoice"] = {"any": {}}
    elif isinstance(tool_choice, Mapping) and tool_choice.get("type") == "tool":
        config["toolChoice"] = {"tool": {"name": tool_choice["name"]}}
    elif isinstance(tool_choice, str):
        config["toolChoice"] = {"tool": {"name": tool_choice}}
    else:
        raise ProviderError(f"Unsupported tool_choice for Bedrock: {tool_choice!r}")
    return config


def _reasoning_fields(model: Model, options: BedrockOptions) -> dict[str, Any] | None:
    level: ThinkingLevel | None = options.get("reasoning")
    if not level or not model.reasoning or not is_claude(model):
        return None
    if is_adaptive_claude(model):
        effort = "max" if level == "xhigh" and "opus" in model.id else _EFFORT.get(level, "high")
        return {"thinking": {"type": "adaptive"}, "output_config": {"effort": effort}}
    clamped = "high" if level == "xhigh" else level
    budgets = cast(dict[str, int], options.get("thinking_budgets") or {})
    budget = budgets.get(clamped) or _DEFAULT_BUDGETS[clamped]
    fields: dict[str, Any] = {"thinking": {"type": "enabled", "budget_tokens": budget}}
    if options.get("interleaved_thinking", True):
        fields["anthropic_beta"] = [_INTERLEAVED_BETA]
    return fields


def request_body(model: Model, context: Context, options: BedrockOptions) -> dict[str, Any]:
    """The JSON body of ConverseStream (``modelId`` goes in the URL).

    Unsigned thinking (a cut stream) and other models' thinking are left out; tool-use ids
    from other providers are made valid for Bedrock.
    """
    messages = convert_messages(
        transform_messages(context.messages, model, normalize_id_anthropic), model
    )
    system_prompt = context.system_prompt
    tools = context.tools
    retention: CacheRetention = options.get("cache_retention") or "short"
    caching = retention != "none" and supports_cache_points(model)
    body: dict[str, Any] = {"messages": messages}
    if system_prompt:
        system: list[dict[str, Any]] = [{"text": sanitize_surrogates(system_prompt)}]
        if caching:
            system.append(_cache_point(retention))
        body["system"] = system
    if caching and messages and messages[-1]["role"] == "user":
        messages[-1]["content"].append(_cache_point(retention))
    reasoning = _reasoning_fields(model, options)
    inference: dict[str, Any] = {}
    if options.get("max_tokens"):
        inference["maxTokens"] = options["max_tokens"]
    if options.get("temperature") is not None and reasoning is None:
        inference["temperature"] = options["temperature"]
    if inference:
        body["inferenceConfig"] = inference
    tool_choice = options.get("tool_choice")
    if reasoning is not None and tool_choice not in (None, "auto", "none"):
        # Claude thinking on Bedrock takes only an "auto" tool choice: offer, not force.
        tool_choice = "auto"
    tool_config = _tool_config(tools, tool_choice)
    if tool_config is not None:
        body["toolConfig"] = tool_config
    if reasoning is not None:
        body["additionalModelRequestFields"] = reasoning
    output = options.get("output_schema")
    if output is not None:
        definition: dict[str, Any] = {
            # Converse takes the schema as a JSON string; Claude needs its objects closed.
            "schema": json.dumps(closed_schema(output["schema"]), ensure_ascii=False),
            "name": output["name"],
        }
        if output.get("description"):
            definition["description"] = output["description"]
        body["outputConfig"] = {
            "textFormat": {"type": "json_schema", "structure": {"jsonSchema": definition}}
        }
    return body


def endpoint_url(model: Model, region: str) -> str:
    """The ConverseStream URL for ``model`` in ``region`` (or at a custom base URL)."""
    model_path = quote(model.id, safe="")
    base = model.base_url.rstrip("/")
    if not base or "amazonaws.com" in base:
        base = f"https://bedrock-runtime.{region}.amazonaws.com"
    return f"{base}/model/{model_path}/converse-stream"


def build_request(model: Model, context: Context, options: BedrockOptions) -> ProviderRequest:
    """The ConverseStream request. With a Bedrock API key it carries the bearer token; else the
    adapter signs it (SigV4) once the final body is known."""
    token = bearer_token(options)
    auth = {"authorization": f"Bearer {token}"} if token else None
    return ProviderRequest(
        endpoint_url(model, resolve_region(options)),
        request_headers(model, options, auth, DEFAULT_HEADERS),
        request_body(model, context, options),
    )
