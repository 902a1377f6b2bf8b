"""JSON form of the data model, field for field the same as pi-ai's.

``dump_*`` functions return plain JSON-compatible dicts (camelCase keys, pi discriminators,
optional fields omitted when unset); ``load_*`` functions accept the same, check it, and raise
:class:`SerializationError` naming the path of anything malformed. ``to_json``/``from_json``
do the text round trip for a :class:`~tau.ai.core.types.Context`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

import jiter

from tau.ai.capabilities.secrets import redact_secrets
from tau.ai.core.compat import OpenAICompletionsCompat
from tau.ai.core.types import (
    AssistantContent,
    AssistantMessage,
    Context,
    ImageContent,
    Message,
    Model,
    ModelCost,
    TextContent,
    ThinkingContent,
    Tool,
    ToolCall,
    ToolResultMessage,
    Usage,
    UsageCost,
    UserContent,
    UserMessage,
)

JsonDict = dict[str, Any]
T = TypeVar("T")


class SerializationError(ValueError):
    """Raised by the ``load_*`` functions for input that is not a valid pi-format object."""


def _snake_to_camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


# --------------------------------------------------------------------------- helpers for loading


def _obj(value: Any, path: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise SerializationError(f"{path}: expected an object, got {type(value).__name__}")
    return value


def _req(data: Mapping[str, Any], key: str, kind: type[T] | tuple[type, ...], path: str) -> T:
    if key not in data:
        raise SerializationError(f"{path}: missing field {key!r}")
    return _typed(data[key], kind, f"{path}.{key}")


def _opt(
    data: Mapping[str, Any], key: str, kind: type[T] | tuple[type, ...], path: str
) -> T | None:
    value = data.get(key)
    if value is None:
        return None
    return _typed(value, kind, f"{path}.{key}")


def _typed(value: Any, kind: type[T] | tuple[type, ...], path: str) -> T:
    # bool is an int subclass: a number field must not silently accept true/false.
    ok = isinstance(value, kind) and not (isinstance(value, bool) and bool not in _kinds(kind))
    if not ok:
        names = "/".join(k.__name__ for k in _kinds(kind))
        raise SerializationError(f"{path}: expected {names}, got {type(value).__name__}")
    return cast(T, value)


def _kinds(kind: type | tuple[type, ...]) -> tuple[type, ...]:
    return kind if isinstance(kind, tuple) else (kind,)


def _list(data: Mapping[str, Any], key: str, path: str) -> list[Any]:
    return _req(data, key, list, path)


_NUMBER = (int, float)


# --------------------------------------------------------------------------- content blocks


def dump_content(block: AssistantContent | UserContent) -> JsonDict:
    """One content block as pi JSON."""
    if isinstance(block, TextContent):
        out: JsonDict = {"type": "text", "text": block.text}
        if block.text_signature is not None:
            out["textSignature"] = block.text_signature
        return out
    if isinstance(block, ThinkingContent):
        out = {"type": "thinking", "thinking": block.thinking}
        if block.thinking_signature is not None:
            out["thinkingSignature"] = block.thinking_signature
        if block.redacted is not None:
            out["redacted"] = block.redacted
        return out
    if isinstance(block, ToolCall):
        out = {"type": "toolCall", "id": block.id, "name": block.name, "arguments": block.arguments}
        if block.thought_signature is not None:
            out["thoughtSignature"] = block.thought_signature
        return out
    if isinstance(block, ImageContent):
        return {"type": "image", "data": block.data, "mimeType": block.mime_type}
    raise TypeError(f"not a content block: {block!r}")


def load_content(data: Any, path: str = "content") -> AssistantContent | UserContent:
    """One content block from pi JSON."""
    d = _obj(data, path)
    kind = d.get("type")
    if kind == "text":
        return TextContent(_req(d, "text", str, path), _opt(d, "textSignature", str, path))
    if kind == "thinking":
        return ThinkingContent(
            _req(d, "thinking", str, path),
            _opt(d, "thinkingSignature", str, path),
            _opt(d, "redacted", bool, path),
        )
    if kind == "toolCall":
        args = d.get("arguments")
        return ToolCall(
            _req(d, "id", str, path),
            _req(d, "name", str, path),
            dict(_obj(args, f"{path}.arguments")) if args is not None else {},
            _opt(d, "thoughtSignature", str, path),
        )
    if kind == "image":
        return ImageContent(_req(d, "data", str, path), _req(d, "mimeType", str, path))
    raise SerializationError(f"{path}.type: unknown content type {kind!r}")


def _load_blocks(items: list[Any], allowed: tuple[type, ...], path: str) -> list[Any]:
    blocks = []
    for i, item in enumerate(items):
        block = load_content(item, f"{path}[{i}]")
        if not isinstance(block, allowed):
            raise SerializationError(f"{path}[{i}]: {block.type!r} is not allowed here")
        blocks.append(block)
    return blocks


# --------------------------------------------------------------------------- usage


def _js_number(value: float) -> float | int:
    # JavaScript writes 3.0 as 3: dumping whole floats as ints keeps the text pi's, byte for byte.
    return int(value) if value.is_integer() else value


def dump_usage(usage: Usage) -> JsonDict:
    """Usage as pi JSON (``reasoning`` only when known, an extension pi ignores)."""
    c = usage.cost
    out: JsonDict = {
        "input": usage.input,
        "output": usage.output,
        "cacheRead": usage.cache_read,
        "cacheWrite": usage.cache_write,
        "totalTokens": usage.total_tokens,
        "cost": {
            "input": _js_number(c.input),
            "output": _js_number(c.output),
            "cacheRead": _js_number(c.cache_read),
            "cacheWrite": _js_number(c.cache_write),
            "total": _js_number(c.total),
        },
    }
    if usage.reasoning is not None:
        out["reasoning"] = usage.reasoning
    return out


def load_usage(data: Any, path: str = "usage") -> Usage:
    """Usage from pi JSON."""
    d = _obj(data, path)
    cost = _obj(d.get("cost", {}), f"{path}.cost")
    cpath = f"{path}.cost"
    return Usage(
        input=_req(d, "input", int, path),
        output=_req(d, "output", int, path),
        cache_read=_opt(d, "cacheRead", int, path) or 0,
        cache_write=_opt(d, "cacheWrite", int, path) or 0,
        total_tokens=_opt(d, "totalTokens", int, path) or 0,
        cost=UsageCost(
            input=float(_opt(cost, "input", _NUMBER, cpath) or 0),
            output=float(_opt(cost, "output", _NUMBER, cpath) or 0),
            cache_read=float(_opt(cost, "cacheRead", _NUMBER, cpath) or 0),
            cache_write=float(_opt(cost, "cacheWrite", _NUMBER, cpath) or 0),
            total=float(_opt(cost, "total", _NUMBER, cpath) or 0),
        ),
        reasoning=_opt(d, "reasoning", int, path),
    )


# --------------------------------------------------------------------------- messages


def dump_message(message: Message) -> JsonDict:
    """One LLM message as pi JSON."""
    if isinstance(message, UserMessage):
        content: Any = (
            message.content
            if isinstance(message.content, str)
            else [dump_content(b) for b in message.content]
        )
        return {"role": "user", "content": content, "timestamp": message.timestamp}
    if isinstance(message, AssistantMessage):
        out: JsonDict = {
            "role": "assistant",
            "content": [dump_content(b) for b in message.content],
            "api": message.api,
            "provider": message.provider,
            "model": message.model,
        }
        if message.response_id is not None:
            out["responseId"] = message.response_id
        out |= {
            "usage": dump_usage(message.usage),
            "stopReason": message.stop_reason,
        }
        if message.error_message is not None:
            # A provider's error can repeat the key it was sent: never written as it is.
            out["errorMessage"] = redact_secrets(message.error_message)
        out["timestamp"] = message.timestamp
        return out
    if isinstance(message, ToolResultMessage):
        out = {
            "role": "toolResult",
            "toolCallId": message.tool_call_id,
            "toolName": message.tool_name,
            "content": [dump_content(b) for b in message.content],
        }
        if message.details is not None:
            out["details"] = message.details
        out["isError"] = message.is_error
        out["timestamp"] = message.timestamp
        return out
    raise TypeError(f"not an LLM message: {message!r}")


_STOP_REASONS = ("stop", "length", "toolUse", "error", "aborted")


def load_message(data: Any, path: str = "message") -> Message:
    """One LLM message from pi JSON."""
    d = _obj(data, path)
    role = d.get("role")
    ts = _opt(d, "timestamp", int, path)
    if role == "user":
        raw: str | list[Any] = _req(d, "content", (str, list), path)
        content: str | list[UserContent] = (
            raw
            if isinstance(raw, str)
            else _load_blocks(raw, (TextContent, ImageContent), f"{path}.content")
        )
        msg: Message = UserMessage(content)
    elif role == "assistant":
        stop = _req(d, "stopReason", str, path)
        if stop not in _STOP_REASONS:
            raise SerializationError(f"{path}.stopReason: unknown stop reason {stop!r}")
        msg = AssistantMessage(
            content=_load_blocks(
                _list(d, "content", path),
                (TextContent, ThinkingContent, ToolCall),
                f"{path}.content",
            ),
            api=_req(d, "api", str, path),
            provider=_req(d, "provider", str, path),
            model=_req(d, "model", str, path),
            usage=load_usage(d["usage"], f"{path}.usage") if "usage" in d else Usage(),
            stop_reason=cast(Any, stop),
            error_message=_opt(d, "errorMessage", str, path),
            response_id=_opt(d, "responseId", str, path),
        )
    elif role == "toolResult":
        msg = ToolResultMessage(
            tool_call_id=_req(d, "toolCallId", str, path),
            tool_name=_req(d, "toolName", str, path),
            content=_load_blocks(
                _list(d, "content", path), (TextContent, ImageContent), f"{path}.content"
            ),
            is_error=_opt(d, "isError", bool, path) or False,
            details=d.get("details"),
        )
    else:
        raise SerializationError(f"{path}.role: unknown role {role!r}")
    if ts is not None:
        msg.timestamp = ts
    return msg


# --------------------------------------------------------------------------- tools and context


def dump_tool(tool: Tool) -> JsonDict:
    """A tool schema as pi JSON (``parameters`` is always the JSON Schema)."""
    return {"name": tool.name, "description": tool.description, "parameters": tool.json_schema}


def load_tool(data: Any, path: str = "tool") -> Tool:
    """A tool schema from pi JSON."""
    d = _obj(data, path)
    params = _opt(d, "parameters", dict, path)
    return Tool(_req(d, "name", str, path), _opt(d, "description", str, path) or "", params)


def dump_context(context: Context) -> JsonDict:
    """A context as pi JSON."""
    out: JsonDict = {}
    if context.system_prompt is not None:
        out["systemPrompt"] = context.system_prompt
    out["messages"] = [dump_message(m) for m in context.messages]
    if context.tools is not None:
        out["tools"] = [dump_tool(t) for t in context.tools]
    return out


def load_context(data: Any, path: str = "context") -> Context:
    """A context from pi JSON."""
    d = _obj(data, path)
    tools = _opt(d, "tools", list, path)
    return Context(
        messages=[
            load_message(m, f"{path}.messages[{i}]")
            for i, m in enumerate(_list(d, "messages", path))
        ],
        system_prompt=_opt(d, "systemPrompt", str, path),
        tools=[load_tool(t, f"{path}.tools[{i}]") for i, t in enumerate(tools)]
        if tools is not None
        else None,
    )


def to_json(context: Context) -> str:
    """A context as pi-format JSON text."""
    import json

    return json.dumps(dump_context(context), ensure_ascii=False)


def from_json(text: str | bytes) -> Context:
    """A context from pi-format JSON text."""
    try:
        data = jiter.from_json(text.encode() if isinstance(text, str) else text)
    except ValueError as exc:
        raise SerializationError(f"invalid JSON: {exc}") from exc
    return load_context(data)


# --------------------------------------------------------------------------- models

_COMPAT_FIELDS = tuple(OpenAICompletionsCompat.__dataclass_fields__)


def dump_compat(compat: OpenAICompletionsCompat) -> JsonDict:
    """Compat flags as pi JSON: only the fields that are set."""
    return {
        _snake_to_camel(name): getattr(compat, name)
        for name in _COMPAT_FIELDS
        if getattr(compat, name) is not None
    }


def load_compat(data: Any, path: str = "compat") -> OpenAICompletionsCompat:
    """Compat flags from pi JSON; unknown keys are ignored (pi has provider-specific ones)."""
    d = _obj(data, path)
    by_camel = {_snake_to_camel(name): name for name in _COMPAT_FIELDS}
    return OpenAICompletionsCompat(**{by_camel[k]: v for k, v in d.items() if k in by_camel})


def dump_model(model: Model) -> JsonDict:
    """A model as pi JSON."""
    out: JsonDict = {
        "id": model.id,
        "name": model.name,
        "api": model.api,
        "provider": model.provider,
        "baseUrl": model.base_url,
        "reasoning": model.reasoning,
        "input": list(model.input),
        "cost": {
            "input": _js_number(model.cost.input),
            "output": _js_number(model.cost.output),
            "cacheRead": _js_number(model.cost.cache_read),
            "cacheWrite": _js_number(model.cost.cache_write),
        },
        "contextWindow": model.context_window,
        "maxTokens": model.max_tokens,
    }
    if model.headers is not None:
        out["headers"] = dict(model.headers)
    if model.compat is not None:
        out["compat"] = dump_compat(model.compat)
    return out


def load_model(data: Any, path: str = "model") -> Model:
    """A model from pi JSON."""
    d = _obj(data, path)
    cost = _obj(d.get("cost", {}), f"{path}.cost")
    cpath = f"{path}.cost"
    modalities = _opt(d, "input", list, path) or ["text"]
    for i, m in enumerate(modalities):
        if m not in ("text", "image"):
            raise SerializationError(f"{path}.input[{i}]: unknown modality {m!r}")
    headers = _opt(d, "headers", dict, path)
    compat = d.get("compat")
    return Model(
        id=_req(d, "id", str, path),
        name=_opt(d, "name", str, path) or d["id"],
        api=_req(d, "api", str, path),
        provider=_req(d, "provider", str, path),
        base_url=_opt(d, "baseUrl", str, path) or "",
        reasoning=_opt(d, "reasoning", bool, path) or False,
        input=modalities,
        cost=ModelCost(
            input=float(_opt(cost, "input", _NUMBER, cpath) or 0),
            output=float(_opt(cost, "output", _NUMBER, cpath) or 0),
            cache_read=float(_opt(cost, "cacheRead", _NUMBER, cpath) or 0),
            cache_write=float(_opt(cost, "cacheWrite", _NUMBER, cpath) or 0),
        ),
        context_window=_opt(d, "contextWindow", int, path) or 128_000,
        max_tokens=_opt(d, "maxTokens", int, path) or 16_384,
        headers={str(k): str(v) for k, v in headers.items()} if headers is not None else None,
        compat=load_compat(compat, f"{path}.compat") if compat is not None else None,
    )
