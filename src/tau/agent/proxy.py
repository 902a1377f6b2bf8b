"""LLM calls through a tau proxy server, for apps that must keep provider keys on a server.

The client side: :func:`stream_proxy` has the signature of :func:`tau.ai.stream_simple` plus
``proxy_url`` and ``auth_token``, so it drops in as an agent's ``stream_fn``::

    from functools import partial
    agent = Agent(model=model, stream_fn=partial(stream_proxy, proxy_url=url, auth_token=token))

The server side is :mod:`tau.agent.proxy_server`. On the wire (``POST {proxy_url}/api/stream``
with ``Authorization: Bearer <token>``) the request is ``{"model", "context", "options"}`` in
pi JSON, and the answer is server-sent events, one JSON object per ``data:`` line, in pi's
proxy format: the provider events **without** ``partial`` (the client rebuilds the message
with the same :class:`~tau.ai.MessageBuilder` providers use, tool arguments through the
incremental partial-JSON parser), ``done``/``error`` carrying the usage.

Departures from pi's ``streamProxy``: a body that ends without ``done``/``error`` is an error
event (pi's result never resolved); ``toolcall_end`` carries the final arguments and
``thinking_start`` the redacted flag, so the rebuilt message is exact; transient failures
before the first byte are retried like any provider request (:func:`tau.ai.http.open_stream`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Unpack

import jiter

from tau.ai.builder import MessageBuilder, ProviderError, launch_stream
from tau.ai.event_stream import AssistantMessageEventStream
from tau.ai.events import AssistantMessageEvent
from tau.ai.options import SimpleStreamOptions
from tau.ai.serialization import dump_context, dump_model, dump_usage, load_usage
from tau.ai.types import Context, Model, TextContent, ThinkingContent, ToolCall

__all__ = ["PROXY_OPTION_KEYS", "decode_proxy_event", "encode_proxy_event", "stream_proxy"]

PROXY_OPTION_KEYS: dict[str, str] = {
    "temperature": "temperature",
    "max_tokens": "maxTokens",
    "reasoning": "reasoning",
    "thinking_budgets": "thinkingBudgets",
    "session_id": "sessionId",
}
"""The stream options a client forwards (snake_case → wire name); the server may refuse more."""

NO_TERMINAL = "Proxy error: the stream ended without a done or error event"


# --------------------------------------------------------------------------- server → wire


def encode_proxy_event(event: AssistantMessageEvent) -> dict[str, Any]:
    """A provider event in the proxy wire format (no ``partial``)."""
    kind = event.type
    out: dict[str, Any] = {"type": kind}
    if kind == "start":
        return out
    if kind == "done":
        out["reason"] = event.reason  # type: ignore[union-attr]
        out["usage"] = dump_usage(event.message.usage)  # type: ignore[union-attr]
        return out
    if kind == "error":
        error = event.error  # type: ignore[union-attr]
        out["reason"] = event.reason  # type: ignore[union-attr]
        out["errorMessage"] = error.error_message
        out["usage"] = dump_usage(error.usage)
        return out
    index: int = event.content_index  # type: ignore[union-attr]
    out["contentIndex"] = index
    if kind.endswith("_delta"):
        out["delta"] = event.delta  # type: ignore[union-attr]
        return out
    block = event.partial.content[index]  # type: ignore[union-attr]
    if isinstance(block, TextContent):
        if kind == "text_end" and block.text_signature is not None:
            out["contentSignature"] = block.text_signature
    elif isinstance(block, ThinkingContent):
        if kind == "thinking_start" and block.redacted:
            out["redacted"] = True
        if kind == "thinking_end" and block.thinking_signature is not None:
            out["contentSignature"] = block.thinking_signature
    elif isinstance(block, ToolCall):
        if kind == "toolcall_start":
            out["id"] = block.id
            out["toolName"] = block.name
            if block.thought_signature is not None:
                out["thoughtSignature"] = block.thought_signature
        elif kind == "toolcall_end":
            out["arguments"] = event.tool_call.arguments  # type: ignore[union-attr]
    return out


# --------------------------------------------------------------------------- wire → client


class _Rebuilder:
    """Replays proxy events onto a builder; server content indexes map to local ones."""

    __slots__ = ("indexes", "out")

    def __init__(self, out: MessageBuilder) -> None:
        self.out = out
        self.indexes: dict[int, int] = {}

    def block(self, data: Mapping[str, Any], kind: type[Any], event: str) -> int:
        index = self.indexes.get(data.get("contentIndex", -1))
        content = self.out.message.content
        if index is None or not isinstance(content[index], kind):
            raise ProviderError(
                f"Proxy error: received {event} for content index "
                f"{data.get('contentIndex')!r}, which is not an open {kind.__name__} block"
            )
        return index

    def apply(self, data: Mapping[str, Any]) -> bool:
        """Apply one event; True once the stream is over."""
        out = self.out
        kind = data.get("type")
        server_index = data.get("contentIndex")
        if kind == "start":
            out.start()
        elif kind == "text_start":
            self.indexes[_index(server_index)] = out.open_text()
        elif kind == "text_delta":
            out.text_delta(self.block(data, TextContent, kind), _text(data, "delta"))
        elif kind == "text_end":
            index = self.block(data, TextContent, kind)
            block = out.message.content[index]
            assert isinstance(block, TextContent)
            block.text_signature = data.get("contentSignature") or block.text_signature
            out.close_text(index)
        elif kind == "thinking_start":
            self.indexes[_index(server_index)] = out.open_thinking(
                redacted=bool(data.get("redacted"))
            )
        elif kind == "thinking_delta":
            out.thinking_delta(self.block(data, ThinkingContent, kind), _text(data, "delta"))
        elif kind == "thinking_end":
            index = self.block(data, ThinkingContent, kind)
            thinking = out.message.content[index]
            assert isinstance(thinking, ThinkingContent)
            thinking.thinking_signature = (
                data.get("contentSignature") or thinking.thinking_signature
            )
            out.close_thinking(index)
        elif kind == "toolcall_start":
            self.indexes[_index(server_index)] = out.open_tool_call(
                _text(data, "id"),
                _text(data, "toolName"),
                thought_signature=data.get("thoughtSignature"),
            )
        elif kind == "toolcall_delta":
            out.tool_call_delta(self.block(data, ToolCall, kind), _text(data, "delta"))
        elif kind == "toolcall_end":
            arguments = data.get("arguments")
            out.close_tool_call(
                self.block(data, ToolCall, kind),
                dict(arguments) if isinstance(arguments, Mapping) else None,
            )
        elif kind == "done":
            reason = data.get("reason")
            if reason not in ("stop", "length", "toolUse"):
                raise ProviderError(f"Proxy error: unknown done reason {reason!r}")
            out.message.stop_reason = reason
            if "usage" in data:
                out.message.usage = load_usage(data["usage"])
            out.done()
            return True
        elif kind == "error":
            if "usage" in data:
                out.message.usage = load_usage(data["usage"])
            out.fail(
                str(data.get("errorMessage") or "Proxy error: the request failed"),
                aborted=data.get("reason") == "aborted",
            )
            return True
        # Unknown event types come from newer servers: ignoring them keeps old clients working.
        return False


def _index(value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise ProviderError(f"Proxy error: invalid contentIndex {value!r}")
    return value


def _text(data: Mapping[str, Any], key: str) -> str:
    value = data.get(key)
    if not isinstance(value, str):
        raise ProviderError(f"Proxy error: {data.get('type')} event without a string {key!r}")
    return value


def decode_proxy_event(line: str | bytes) -> dict[str, Any]:
    """One ``data:`` payload as a dict (raises :class:`ProviderError` if it is not one)."""
    try:
        value = jiter.from_json(line.encode() if isinstance(line, str) else line)
    except ValueError as exc:
        raise ProviderError(f"Proxy error: invalid event JSON: {exc}") from exc
    if not isinstance(value, dict):
        raise ProviderError(f"Proxy error: an event must be a JSON object, got {value!r}")
    return value


# --------------------------------------------------------------------------- the client


def stream_proxy(
    model: Model,
    context: Context,
    *,
    proxy_url: str,
    auth_token: str,
    **options: Unpack[SimpleStreamOptions],
) -> AssistantMessageEventStream:
    """Stream one response through a tau proxy server (see :mod:`tau.agent.proxy_server`).

    Only the options in :data:`PROXY_OPTION_KEYS` are sent; keys and headers stay on the
    server. ``signal``, ``timeout``, ``max_retries`` and ``client`` apply to the HTTP request.
    Failures arrive as an ``error`` event whose message starts with ``Proxy error:``.
    """
    from tau.ai.http import open_stream

    opts: Mapping[str, Any] = options
    body = {
        "model": dump_model(model),
        "context": dump_context(context),
        "options": {
            wire: opts[key] for key, wire in PROXY_OPTION_KEYS.items() if opts.get(key) is not None
        },
    }
    url = proxy_url.rstrip("/") + "/api/stream"
    headers = {"authorization": f"Bearer {auth_token}", "accept": "text/event-stream"}

    async def run(out: MessageBuilder) -> None:
        # The server priced the usage with its own model (and service tier): keep its cost.
        out.cost_multiplier = None
        rebuild = _Rebuilder(out)
        try:
            async with open_stream(opts, "POST", url, headers=headers, json=body) as response:
                async for sse in response:
                    payload = sse.data.strip()
                    if not payload:
                        continue
                    if rebuild.apply(decode_proxy_event(payload)):
                        return
        except ProviderError as exc:
            if str(exc).startswith("Proxy error"):
                raise
            raise ProviderError(f"Proxy error: {exc}") from exc
        raise ProviderError(NO_TERMINAL)

    return launch_stream(model, options, run)
