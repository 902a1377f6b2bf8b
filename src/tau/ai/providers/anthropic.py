"""``anthropic-messages``: the Anthropic Messages API (and the endpoints that speak it: MiniMax,
Kimi coding, OpenCode, Vercel AI Gateway), spoken directly over :mod:`tau.ai.http`.

Provider options (see :class:`tau.ai.options.ProviderStreamOptions`): ``thinking_enabled``,
``thinking_budget_tokens``, ``effort`` (adaptive models), ``interleaved_thinking`` (default
True), ``tool_choice`` (``"auto" | "any" | "none"`` or ``{"type": "tool", "name": ...}``).

Decoding choices for output tau does not model: blocks other than text, thinking,
redacted_thinking and tool_use (server tools such as web search, their results, MCP,
compaction…) and deltas other than text/thinking/signature/input_json (citations…) are
skipped without events, so the text and tool calls around them come through unchanged.
Events of unknown type are ignored. ``temperature`` is sent only when given and thinking is
off (current SDK types no longer list it; an endpoint that rejects it answers with a 400
whose message the error event carries). An event whose data is not valid JSON ends the stream
with an error naming the event (skipping it could silently drop text), and so does a stream
that ends before ``message_stop`` or starts another message (a ``message_start`` with a new
id) before it; the same id again is ignored. Usage follows the ``iterations`` rule of
:class:`_UsageCounts`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from tau.ai.builder import MessageBuilder, ProviderError, apply_on_payload, launch_stream
from tau.ai.env_keys import resolve_api_key
from tau.ai.event_stream import AssistantMessageEventStream
from tau.ai.providers.simple_options import adjust_max_tokens_for_thinking, base_options
from tau.ai.types import (
    AssistantMessage,
    CacheRetention,
    Context,
    ImageContent,
    Message,
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
from tau.ai.utils.sanitize import sanitize_surrogates
from tau.ai.utils.transform_messages import normalize_id_anthropic, transform_messages

if TYPE_CHECKING:
    from tau.ai.http import HTTPStream

__all__ = [
    "build_headers",
    "build_params",
    "convert_messages",
    "convert_tools",
    "is_adaptive",
    "stream",
    "stream_simple",
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

_EFFORT = {"minimal": "low", "low": "low", "medium": "medium", "high": "high"}


# --------------------------------------------------------------------------- entry points


def stream(
    model: Model, context: Context, options: Mapping[str, Any]
) -> AssistantMessageEventStream:
    """Stream one Messages API call; provider options as in the module docstring."""

    async def run(builder: MessageBuilder) -> None:
        from tau.ai.http import open_stream

        api_key = resolve_api_key(model, options) or ""
        if not api_key:
            where = (
                "ANTHROPIC_API_KEY (ANTHROPIC_OAUTH_TOKEN for a subscription token)"
                if model.provider == "anthropic"
                else "the provider's key variable"
            )
            raise ProviderError(
                f"No API key for provider {model.provider!r}: pass api_key= or set {where}"
            )
        oauth = is_oauth_token(api_key)
        params = build_params(model, context, options, oauth=oauth)
        params = await apply_on_payload(options, params, model)
        headers = build_headers(model, options, api_key)
        url = model.base_url.rstrip("/") + "/v1/messages"
        tool_names = _incoming_tool_names(context.tools) if oauth else None
        async with open_stream(options, "POST", url, headers=headers, json=params) as response:
            await _decode(response, builder, tool_names)

    return launch_stream(model, options, run)


def stream_simple(
    model: Model, context: Context, options: Mapping[str, Any]
) -> AssistantMessageEventStream:
    """:func:`stream` with the unified ``reasoning`` level mapped to thinking options.

    Adaptive models (Opus/Sonnet 4.6) get adaptive thinking with an effort (``xhigh`` is
    ``max`` on Opus 4.6, ``high`` elsewhere); others a token budget added to ``max_tokens``.
    A level on a model without reasoning is ignored.
    """
    out = base_options(model, options)
    level = options.get("reasoning")
    if not level or not model.reasoning:
        out["thinking_enabled"] = False
    elif is_adaptive(model):
        out["thinking_enabled"] = True
        out["effort"] = _EFFORT.get(level) or (
            "max" if ("opus-4-6" in model.id or "opus-4.6" in model.id) else "high"
        )
    else:
        max_tokens, budget = adjust_max_tokens_for_thinking(
            out["max_tokens"], model.max_tokens, level, options.get("thinking_budgets")
        )
        out.update(thinking_enabled=True, thinking_budget_tokens=budget, max_tokens=max_tokens)
    return stream(model, context, out)


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
    env = os.environ.get("TAU_CACHE_RETENTION")
    if env in ("none", "short", "long"):
        return env  # type: ignore[return-value]
    return "short"


def cache_control_for(model: Model, retention: CacheRetention) -> dict[str, str] | None:
    """The ``cache_control`` marker, or None when caching is off (the 1h TTL is first-party only)."""
    if retention == "none":
        return None
    if retention == "long" and "api.anthropic.com" in model.base_url:
        return {"type": "ephemeral", "ttl": "1h"}
    return {"type": "ephemeral"}


def build_headers(model: Model, options: Mapping[str, Any], api_key: str) -> dict[str, str]:
    """Auth, version and beta headers; then ``model.headers``, then the ``headers`` option."""
    betas: list[str] = []
    headers = {"accept": "application/json", "anthropic-version": ANTHROPIC_VERSION}
    if is_oauth_token(api_key):
        betas += BETA_OAUTH
        headers["authorization"] = f"Bearer {api_key}"
        headers["user-agent"] = f"claude-cli/{CLAUDE_CODE_VERSION}"
        headers["x-app"] = "cli"
    else:
        headers["x-api-key"] = api_key
    betas.append(BETA_FINE_GRAINED_TOOLS)
    if options.get("interleaved_thinking", True) and not is_adaptive(model):
        betas.append(BETA_INTERLEAVED_THINKING)
    headers["anthropic-beta"] = ",".join(betas)
    headers.update(model.headers or {})
    headers.update(options.get("headers") or {})
    return headers


def build_params(
    model: Model, context: Context, options: Mapping[str, Any], *, oauth: bool = False
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
        params["tool_choice"] = (
            {"type": tool_choice} if isinstance(tool_choice, str) else tool_choice
        )
    return params


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


def _incoming_tool_names(tools: list[Tool] | None) -> dict[str, str]:
    return {tool.name.lower(): tool.name for tool in tools or ()}


def convert_messages(
    messages: list[Message],
    model: Model,
    cache_control: dict[str, str] | None = None,
    *,
    oauth: bool = False,
) -> list[dict[str, Any]]:
    """Messages API ``messages`` from tau messages already made safe for ``model`` by
    :func:`~tau.ai.utils.transform_messages.transform_messages` (so every thinking block here
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


# --------------------------------------------------------------------------- response

_TEXT, _THINKING, _TOOL = 1, 2, 3


async def _decode(
    response: HTTPStream, builder: MessageBuilder, tool_names: dict[str, str] | None
) -> None:
    """Turn the Messages event stream into builder calls (the per-token hot path)."""
    message = builder.message
    usage = message.usage
    counts = _UsageCounts()
    model = builder.model
    loads = json.loads
    message_id: str | None = None
    started = False
    # Anthropic block index -> (tau content index, kind); skipped blocks map to None.
    blocks: dict[int, tuple[int, int] | None] = {}
    start_inputs: dict[int, dict[str, Any]] = {}
    fed: set[int] = set()
    text_delta = builder.text_delta
    thinking_delta = builder.thinking_delta
    tool_call_delta = builder.tool_call_delta
    finished = False
    async for event in response:
        try:
            data = loads(event.data)
            kind = data["type"]
            if kind == "content_block_delta":
                target = blocks.get(data["index"])
                if target is None:
                    continue
                index, block_kind = target
                delta = data["delta"]
                delta_type = delta["type"]
                if delta_type == "text_delta":
                    if block_kind == _TEXT:
                        text_delta(index, delta["text"])
                elif delta_type == "thinking_delta":
                    if block_kind == _THINKING:
                        thinking_delta(index, delta["thinking"])
                elif delta_type == "input_json_delta":
                    if block_kind == _TOOL and delta["partial_json"]:
                        fed.add(index)
                        tool_call_delta(index, delta["partial_json"])
                elif delta_type == "signature_delta" and block_kind == _THINKING:
                    block = message.content[index]
                    assert isinstance(block, ThinkingContent)
                    block.thinking_signature = (block.thinking_signature or "") + delta["signature"]
            elif kind == "content_block_start":
                _start_block(data, builder, blocks, start_inputs, tool_names)
            elif kind == "content_block_stop":
                target = blocks.pop(data["index"], None)
                if target is None:
                    continue
                index, block_kind = target
                if block_kind == _TOOL:
                    initial = start_inputs.pop(index, None)
                    builder.close_tool_call(index, None if index in fed else (initial or {}))
                else:
                    builder.close_block(index)
            elif kind == "message_start":
                started_id = data["message"].get("id")
                if started:
                    if started_id != message_id:
                        # Two responses spliced into one stream (a proxy's retry, a broken
                        # relay): merging them would duplicate or truncate content.
                        raise ProviderError(
                            f"Anthropic started message {started_id!r} inside message "
                            f"{message_id!r}, which never ended (no message_stop)"
                        )
                    continue  # the same message announced again: nothing new
                started = True
                message_id = started_id
                builder.response_id(started_id)
                counts.apply(usage, data["message"].get("usage") or {})
                calculate_cost(model, usage)
                builder.start()
            elif kind == "message_delta":
                stop = (data.get("delta") or {}).get("stop_reason")
                if stop is not None:
                    _set_stop_reason(message, stop)
                counts.apply(usage, data.get("usage") or {})
                calculate_cost(model, usage)
            elif kind == "message_stop":
                finished = True
                break
            elif kind == "error":
                raise ProviderError(_stream_error(data))
            # "ping" and event types added later are ignored
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            raise ProviderError(
                f"Malformed {event.event!r} event from Anthropic ({_short(exc)}): "
                f"{_excerpt(event.data)}"
            ) from None
    if not finished:
        raise ProviderError(
            "The Anthropic stream ended before message_stop: the response is incomplete "
            "(connection closed early)"
        )


def _start_block(
    data: dict[str, Any],
    builder: MessageBuilder,
    blocks: dict[int, tuple[int, int] | None],
    start_inputs: dict[int, dict[str, Any]],
    tool_names: dict[str, str] | None,
) -> None:
    position = data.get("index", -1)
    block = data.get("content_block") or {}
    block_type = block.get("type")
    if block_type == "text":
        index = builder.open_text()
        blocks[position] = (index, _TEXT)
        if block.get("text"):
            builder.text_delta(index, block["text"])
    elif block_type == "thinking":
        index = builder.open_thinking(block.get("signature") or "")
        blocks[position] = (index, _THINKING)
        if block.get("thinking"):
            builder.thinking_delta(index, block["thinking"])
    elif block_type == "redacted_thinking":
        index = builder.open_thinking(block.get("data") or "", redacted=True)
        blocks[position] = (index, _THINKING)
        builder.thinking_delta(index, REDACTED_THINKING_TEXT)
    elif block_type == "tool_use":
        name = block.get("name") or ""
        if tool_names is not None:
            name = tool_names.get(name.lower(), name)
        index = builder.open_tool_call(block.get("id") or "", name)
        blocks[position] = (index, _TOOL)
        initial = block.get("input")
        if isinstance(initial, dict) and initial:
            start_inputs[index] = initial
    else:
        blocks[position] = None  # server tools, their results, compaction…: not modelled


class _UsageCounts:
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


def _stream_error(data: dict[str, Any]) -> str:
    error = data.get("error")
    if isinstance(error, dict):
        kind, text = error.get("type"), error.get("message")
        if kind and text:
            return f"{kind}: {text}"
        if text or kind:
            return str(text or kind)
    return f"Anthropic stream error: {_excerpt(json.dumps(data))}"


def _short(exc: Exception) -> str:
    if isinstance(exc, KeyError):
        return f"no {exc.args[0]!r} field"
    if isinstance(exc, json.JSONDecodeError):
        return f"invalid JSON: {exc}"
    return str(exc) or type(exc).__name__


def _excerpt(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
