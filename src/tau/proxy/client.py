"""The proxy client: LLM calls through a tau proxy server, for apps that must keep provider
keys on a server.

:func:`stream_proxy` has the signature of :func:`tau.ai.stream_simple` plus ``proxy_url`` and
``auth_token``, so it drops in as an agent's ``stream_fn``::

    from functools import partial
    agent = Agent(model=model, stream_fn=partial(stream_proxy, proxy_url=url, auth_token=token))

On the wire (``POST {proxy_url}/api/stream`` with ``Authorization: Bearer <token>``) the
request is ``{"model", "context", "options"}`` in pi JSON, and the answer is server-sent
events, one JSON object per ``data:`` line, in pi's proxy format: the provider events
**without** ``partial`` (the client rebuilds the message with the same
:class:`~tau.ai.MessageBuilder` providers use, tool arguments through the incremental
partial-JSON parser), ``done``/``error`` carrying the usage.

Departures from pi's ``streamProxy``: a body that ends without ``done``/``error`` is an error
event (pi's result never resolved); ``toolcall_end`` carries the final arguments and
``thinking_start`` the redacted flag, so the rebuilt message is exact; transient failures
before the first byte are retried like any provider request.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Unpack

import jiter

from tau.ai import (
    AssistantMessageEvent,
    AssistantMessageEventStream,
    Context,
    DoneEvent,
    ErrorEvent,
    Model,
    ProviderError,
    SimpleStreamOptions,
    TextContent,
    TextDeltaEvent,
    TextEndEvent,
    TextStartEvent,
    ThinkingContent,
    ThinkingDeltaEvent,
    ThinkingEndEvent,
    ThinkingStartEvent,
    ToolCall,
    ToolCallDeltaEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
    dump_context,
    dump_model,
)
from tau.ai.adapters import (
    MessageBuilder,
    ProviderRequest,
    dump_usage,
    launch_stream,
    load_usage,
    run_http_adapter,
)

__all__ = [
    "PROXY_OPTION_KEYS",
    "ProxyDecoder",
    "decode_proxy_event",
    "encode_proxy_event",
    "stream_proxy",
]

PROXY_OPTION_KEYS: dict[str, str] = {
    "temperature": "temperature",
    "max_tokens": "maxTokens",
    "reasoning": "reasoning",
    "thinking_budgets": "thinkingBudgets",
    "session_id": "sessionId",
    "output_schema": "outputSchema",
}
"""The stream options a client forwards (snake_case → wire name); the server may refuse more."""

HTTP_OPTION_KEYS = (
    "signal",
    "timeout",
    "max_retries",
    "max_retry_delay_ms",
    "client",
    "max_line_bytes",
)
"""The options that shape the client's own request to the proxy."""

NO_TERMINAL = "Proxy error: the stream ended without a done or error event"


# --------------------------------------------------------------------------- server → wire


def encode_proxy_event(event: AssistantMessageEvent) -> dict[str, Any]:
    """A provider event in the proxy wire format (no ``partial``)."""
    out: dict[str, Any] = {"type": event.type}
    match event:
        case TextDeltaEvent() | ThinkingDeltaEvent() | ToolCallDeltaEvent():
            out["contentIndex"] = event.content_index
            out["delta"] = event.delta
        case TextStartEvent():
            out["contentIndex"] = event.content_index
        case ThinkingStartEvent():
            out["contentIndex"] = event.content_index
            block = event.partial.content[event.content_index]
            if isinstance(block, ThinkingContent) and block.redacted:
                out["redacted"] = True
        case ToolCallStartEvent():
            out["contentIndex"] = event.content_index
            call = event.partial.content[event.content_index]
            assert isinstance(call, ToolCall)
            out["id"] = call.id
            out["toolName"] = call.name
            if call.thought_signature is not None:
                out["thoughtSignature"] = call.thought_signature
        case TextEndEvent():
            out["contentIndex"] = event.content_index
            text = event.partial.content[event.content_index]
            if isinstance(text, TextContent) and text.text_signature is not None:
                out["contentSignature"] = text.text_signature
        case ThinkingEndEvent():
            out["contentIndex"] = event.content_index
            thought = event.partial.content[event.content_index]
            if isinstance(thought, ThinkingContent) and thought.thinking_signature is not None:
                out["contentSignature"] = thought.thinking_signature
        case ToolCallEndEvent():
            out["contentIndex"] = event.content_index
            out["arguments"] = event.tool_call.arguments
        case DoneEvent():
            out["reason"] = event.reason
            out["usage"] = dump_usage(event.message.usage)
        case ErrorEvent():
            out["reason"] = event.reason
            out["errorMessage"] = event.error.error_message
            out["usage"] = dump_usage(event.error.usage)
    return out


# --------------------------------------------------------------------------- wire → client


class ProxyDecoder:
    """Replays proxy events onto a builder: the server's content index is the builder key."""

    __slots__ = ("_builder", "_ended")

    def __init__(self, builder: MessageBuilder) -> None:
        self._builder = builder
        self._ended = False
        # The server priced the usage with its own model (and service tier): keep its cost.
        builder.cost_multiplier = None

    def feed(self, data: str, event: str = "message") -> bool:
        """Apply one event; False once the stream is over."""
        payload = data.strip()
        if not payload:
            return True
        self._ended = self.apply(decode_proxy_event(payload))
        return not self._ended

    def finish(self) -> None:
        """The body ended: without ``done`` or ``error``, that is an error."""
        if not self._ended:
            raise ProviderError(NO_TERMINAL)

    def apply(self, data: Mapping[str, Any]) -> bool:
        """Apply one decoded event; True once the stream is over."""
        out = self._builder
        kind = data.get("type")
        raw = data.get("contentIndex")
        # A key that is not an int names no block (the builder opens none under None here).
        key = raw if type(raw) is int else None
        if kind == "text_delta":
            if out.text(key, _text(data, "delta"), start=False) is None:
                raise _not_open(data, TextContent)
        elif kind == "thinking_delta":
            if out.thinking(key, _text(data, "delta"), start=False) is None:
                raise _not_open(data, ThinkingContent)
        elif kind == "toolcall_delta":
            if out.tool_call(key, args_delta=_text(data, "delta"), start=False) is None:
                raise _not_open(data, ToolCall)
        elif kind == "start":
            out.start()
        elif kind == "text_start":
            out.text(_index(raw), "")
        elif kind == "thinking_start":
            out.thinking(_index(raw), "", redacted=bool(data.get("redacted")))
        elif kind == "toolcall_start":
            out.tool_call(
                _index(raw),
                id=_text(data, "id"),
                name=_text(data, "toolName"),
                thought_signature=data.get("thoughtSignature"),
            )
        elif kind == "text_end" or kind == "thinking_end":
            block = out.block(key)
            signature = data.get("contentSignature")
            if isinstance(block, TextContent) and kind == "text_end":
                block.text_signature = signature or block.text_signature
            elif isinstance(block, ThinkingContent) and kind == "thinking_end":
                block.thinking_signature = signature or block.thinking_signature
            else:
                raise _not_open(data, TextContent if kind == "text_end" else ThinkingContent)
            out.close(key)
        elif kind == "toolcall_end":
            if not isinstance(out.block(key), ToolCall):
                raise _not_open(data, ToolCall)
            arguments = data.get("arguments")
            out.close(key, dict(arguments) if isinstance(arguments, Mapping) else None)
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


def _not_open(data: Mapping[str, Any], kind: type) -> ProviderError:
    return ProviderError(
        f"Proxy error: received {data.get('type')} for content index "
        f"{data.get('contentIndex')!r}, which is not an open {kind.__name__} block"
    )


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
    """One ``data:`` payload as a dict (raises :class:`~tau.ai.ProviderError` if it is not one)."""
    try:
        value = jiter.from_json(
            line.encode() if isinstance(line, str) else line, allow_inf_nan=False
        )
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
    """Stream one response through a tau proxy server (see :mod:`tau.proxy.server`).

    Only the options in :data:`PROXY_OPTION_KEYS` are sent; keys and headers stay on the
    server. ``signal``, ``timeout``, ``max_retries`` and ``client`` apply to the HTTP request.
    Failures arrive as an ``error`` event whose message starts with ``Proxy error:``.
    """
    opts: Mapping[str, Any] = options
    body = {
        "model": dump_model(model),
        "context": dump_context(context),
        "options": {
            wire: opts[key] for key, wire in PROXY_OPTION_KEYS.items() if opts.get(key) is not None
        },
    }
    headers = {"authorization": f"Bearer {auth_token}", "accept": "text/event-stream"}
    request = ProviderRequest(proxy_url.rstrip("/") + "/api/stream", headers, body)
    http = {key: opts[key] for key in HTTP_OPTION_KEYS if key in opts}

    async def run(builder: MessageBuilder) -> None:
        try:
            await run_http_adapter(builder, request, ProxyDecoder(builder), http)
        except ProviderError as exc:
            if str(exc).startswith("Proxy error"):
                raise
            raise ProviderError(f"Proxy error: {exc}") from exc

    return launch_stream(model, options, run)
