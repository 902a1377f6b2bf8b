"""Building a Messages API request: the body, the headers and the key.

An OAuth (Claude subscription) token is sent as a bearer token with Claude Code's identity:
the system prompt starts with it, and tools named like Claude Code's own are sent under its
spellings (:data:`CLAUDE_CODE_TOOLS`; the decoder maps them back).
"""

from __future__ import annotations

import os
from typing import Any

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
    Tool,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from tau.ai.lookup.env_keys import resolve_api_key
from tau.ai.providers.anthropic.options import AnthropicOptions
from tau.ai.providers.output_schema import closed_schema
from tau.ai.streaming.adapter import ProviderRequest
from tau.ai.streaming.headers import request_headers
from tau.ai.streaming.sanitize import sanitize_surrogates

__all__ = [
    "CLAUDE_CODE_TOOLS",
    "build_request",
    "convert_messages",
    "convert_tools",
    "is_adaptive",
    "is_oauth_token",
    "request_body",
]

ANTHROPIC_VERSION = "2023-06-01"
BETA_FINE_GRAINED_TOOLS = "fine-grained-tool-streaming-2025-05-14"
BETA_INTERLEAVED_THINKING = "interleaved-thinking-2025-05-14"
BETA_OAUTH = ("claude-code-20250219", "oauth-2025-04-20")
CLAUDE_CODE_IDENTITY = "You are Claude Code, Anthropic's official CLI for Claude."
CLAUDE_CODE_VERSION = "2.1.75"
REDACTED_THINKING_TEXT = "[Reasoning redacted]"
TOOL_RESULT_IMAGE_ONLY_TEXT = "(see attached image)"

# Claude Code's own tool names: an OAuth (subscription) token is accepted for them, so
# matching tools are sent under these spellings and mapped back on the way in.
CLAUDE_CODE_TOOLS = {
    name.lower(): name
    for name in (
        "Read",
        "Write",
        "Edit",
        "Bash",
        "Grep",
        "Glob",
        "AskUserQuestion",
        "EnterPlanMode",
        "ExitPlanMode",
        "KillShell",
        "NotebookEdit",
        "Skill",
        "Task",
        "TaskOutput",
        "TodoWrite",
        "WebFetch",
        "WebSearch",
    )
}

# --------------------------------------------------------------------------- request


def is_adaptive(model: Model) -> bool:
    """Models that take ``thinking: {type: adaptive}`` and an effort instead of a budget."""
    return any(tag in model.id for tag in ("opus-4-6", "opus-4.6", "sonnet-4-6", "sonnet-4.6"))


def is_oauth_token(api_key: str) -> bool:
    """A Claude subscription (OAuth) token rather than an API key."""
    return "sk-ant-oat" in api_key


def resolve_cache_retention(value: CacheRetention | None) -> CacheRetention:
    """The option, else ``TAU_CACHE_RETENTION`` from the environment, else ``"short"``."""
    if value is not None:
        return value
    match os.environ.get("TAU_CACHE_RETENTION"):
        case "none" | "short" | "long" as env:
            return env
        case _:
            return "short"


def cache_control_for(model: Model, retention: CacheRetention) -> dict[str, str] | None:
    """The ``cache_control`` marker, or None when caching is off (the 1h TTL is first-party only)."""
    if retention == "none":
        return None
    if retention == "long" and "api.anthropic.com" in model.base_url:
        return {"type": "ephemeral", "ttl": "1h"}
    return {"type": "ephemeral"}


def build_request(model: Model, context: Context, options: AnthropicOptions) -> ProviderRequest:
    """``POST {base_url}/v1/messages``: the body, the version and beta headers, and the key."""
    api_key = require_key(model, options)
    url = model.base_url.rstrip("/") + "/v1/messages"
    body = request_body(model, context, options, oauth=is_oauth_token(api_key))
    return ProviderRequest(url, _headers(model, options, api_key), body)


def require_key(model: Model, options: AnthropicOptions) -> str:
    """The key of the call (an API key or an OAuth token), or a clear error naming where."""
    api_key = resolve_api_key(model, options)
    if api_key:
        return api_key
    where = (
        "ANTHROPIC_API_KEY (ANTHROPIC_OAUTH_TOKEN for a subscription token)"
        if model.provider == "anthropic"
        else "the provider's key variable"
    )
    raise ProviderError(f"No API key for provider {model.provider!r}: pass api_key= or set {where}")


def _headers(model: Model, options: AnthropicOptions, api_key: str) -> dict[str, str]:
    betas: list[str] = []
    defaults = {
        "accept": "application/json",
        "content-type": "application/json",
        "anthropic-version": ANTHROPIC_VERSION,
    }
    if is_oauth_token(api_key):
        betas += BETA_OAUTH
        auth = {"authorization": f"Bearer {api_key}"}
        defaults["user-agent"] = f"claude-cli/{CLAUDE_CODE_VERSION}"
        defaults["x-app"] = "cli"
    else:
        auth = {"x-api-key": api_key}
    betas.append(BETA_FINE_GRAINED_TOOLS)
    if options.get("interleaved_thinking", True) and not is_adaptive(model):
        betas.append(BETA_INTERLEAVED_THINKING)
    defaults["anthropic-beta"] = ",".join(betas)
    return request_headers(model, options, auth, defaults)


def request_body(
    model: Model, context: Context, options: AnthropicOptions, *, oauth: bool = False
) -> dict[str, Any]:
    """The request body of a streamed Messages call."""
    cache = cache_control_for(model, resolve_cache_retention(options.get("cache_retention")))
    params: dict[str, Any] = {
        "model": model.id,
        "messages": convert_messages(
            transform_messages(context.messages, model, normalize_id_anthropic),
            model,
            cache,
            oauth=oauth,
        ),
        "max_tokens": options.get("max_tokens") or max(1, model.max_tokens // 3),
        "stream": True,
    }
    system: list[dict[str, Any]] = []
    if oauth:
        system.append({"type": "text", "text": CLAUDE_CODE_IDENTITY})
    if context.system_prompt:
        system.append({"type": "text", "text": sanitize_surrogates(context.system_prompt)})
    if system:
        if cache is not None:
            for block in system:
                block["cache_control"] = cache
        params["system"] = system
    thinking = bool(options.get("thinking_enabled")) and model.reasoning
    temperature = options.get("temperature")
    if temperature is not None and not thinking:
        params["temperature"] = temperature
    if context.tools:
        params["tools"] = convert_tools(context.tools, oauth=oauth)
    if thinking:
        if is_adaptive(model):
            params["thinking"] = {"type": "adaptive"}
            effort = options.get("effort")
            if effort:
                params["output_config"] = {"effort": effort}
        else:
            budget = options.get("thinking_budget_tokens") or 1024
            params["thinking"] = {"type": "enabled", "budget_tokens": budget}
    metadata = options.get("metadata") or {}
    if isinstance(metadata.get("user_id"), str):
        params["metadata"] = {"user_id": metadata["user_id"]}
    tool_choice = options.get("tool_choice")
    if tool_choice is not None:
        params["tool_choice"] = _tool_choice(tool_choice, thinking)
    output = options.get("output_schema")
    if output is not None:
        config = params.setdefault("output_config", {})
        config["format"] = {"type": "json_schema", "schema": closed_schema(output["schema"])}
    return params


def _tool_choice(choice: Any, thinking: bool) -> Any:
    if isinstance(choice, str):
        choice = (
            {"type": choice}
            if choice in ("auto", "any", "none")
            else {
                "type": "tool",
                "name": choice,
            }
        )
    if thinking and isinstance(choice, dict) and choice.get("type") in ("any", "tool"):
        # With extended thinking the API takes only "auto" and "none": the tool is offered,
        # not forced.
        return {"type": "auto"}
    return choice


def convert_tools(tools: list[Tool], *, oauth: bool = False) -> list[dict[str, Any]]:
    """Tool definitions with their whole JSON Schema (``$defs``, enums, formats… kept)."""
    out = []
    for tool in tools:
        schema = dict(tool.json_schema)
        schema.setdefault("type", "object")
        if schema["type"] == "object":
            schema.setdefault("properties", {})
        name = CLAUDE_CODE_TOOLS.get(tool.name.lower(), tool.name) if oauth else tool.name
        out.append({"name": name, "description": tool.description, "input_schema": schema})
    return out


def convert_messages(
    messages: list[Message],
    model: Model,
    cache_control: dict[str, str] | None = None,
    *,
    oauth: bool = False,
) -> list[dict[str, Any]]:
    """Messages API ``messages`` from tau messages already made safe for ``model`` by
    :func:`~tau.ai.capabilities.transform_messages.transform_messages` (so every thinking block here
    is this model's own and signed).

    Consecutive tool results become one user message of ``tool_result`` blocks; blank text
    and empty messages are dropped; lone surrogates are removed from every text. With
    ``cache_control``, the last block of a final user message carries it.
    """
    out: list[dict[str, Any]] = []
    images = "image" in model.input
    i = 0
    while i < len(messages):
        message = messages[i]
        if isinstance(message, UserMessage):
            converted = _user_content(message, images)
            if converted is not None:
                out.append({"role": "user", "content": converted})
        elif isinstance(message, AssistantMessage):
            blocks = _assistant_blocks(message, oauth)
            if blocks:
                out.append({"role": "assistant", "content": blocks})
        elif isinstance(message, ToolResultMessage):
            results = []
            while i < len(messages):
                result = messages[i]
                if not isinstance(result, ToolResultMessage):
                    break
                results.append(_tool_result(result))
                i += 1
            out.append({"role": "user", "content": results})
            continue
        i += 1
    if cache_control is not None and out and out[-1]["role"] == "user":
        last = out[-1]
        if isinstance(last["content"], str):
            last["content"] = [{"type": "text", "text": last["content"]}]
        block = last["content"][-1]
        if block.get("type") in ("text", "image", "tool_result"):
            block["cache_control"] = cache_control
    return out


def _user_content(message: UserMessage, images: bool) -> str | list[dict[str, Any]] | None:
    if isinstance(message.content, str):
        return sanitize_surrogates(message.content) if message.content.strip() else None
    blocks: list[dict[str, Any]] = []
    for part in message.content:
        if isinstance(part, TextContent):
            if part.text.strip():
                blocks.append({"type": "text", "text": sanitize_surrogates(part.text)})
        elif isinstance(part, ImageContent) and images:
            blocks.append(_image(part))
    return blocks or None


def _image(image: ImageContent) -> dict[str, Any]:
    return {
        "type": "image",
        "source": {"type": "base64", "media_type": image.mime_type, "data": image.data},
    }


def _assistant_blocks(message: AssistantMessage, oauth: bool) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for part in message.content:
        if isinstance(part, TextContent):
            if part.text.strip():
                blocks.append({"type": "text", "text": sanitize_surrogates(part.text)})
        elif isinstance(part, ThinkingContent):
            # Signed by this model (transform_messages saw to it): sent back byte for byte,
            # even when its text is empty (display "omitted"), or the signature breaks.
            if part.redacted:
                blocks.append({"type": "redacted_thinking", "data": part.thinking_signature})
            else:
                blocks.append(
                    {
                        "type": "thinking",
                        "thinking": part.thinking,
                        "signature": part.thinking_signature,
                    }
                )
        elif isinstance(part, ToolCall):
            name = CLAUDE_CODE_TOOLS.get(part.name.lower(), part.name) if oauth else part.name
            blocks.append(
                {"type": "tool_use", "id": part.id, "name": name, "input": part.arguments or {}}
            )
    return blocks


def _tool_result(result: ToolResultMessage) -> dict[str, Any]:
    texts = [sanitize_surrogates(p.text) for p in result.content if isinstance(p, TextContent)]
    has_images = any(isinstance(p, ImageContent) for p in result.content)
    content: str | list[dict[str, Any]]
    if not has_images:
        content = "\n".join(texts)
    else:
        content = []
        if not any(t.strip() for t in texts):
            content.append({"type": "text", "text": TOOL_RESULT_IMAGE_ONLY_TEXT})
        for part in result.content:
            if isinstance(part, TextContent):
                if part.text.strip():
                    content.append({"type": "text", "text": sanitize_surrogates(part.text)})
            else:
                content.append(_image(part))
    return {
        "type": "tool_result",
        "tool_use_id": result.tool_call_id,
        "content": content,
        "is_error": result.is_error,
    }
