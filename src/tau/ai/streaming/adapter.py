"""The shape every HTTP adapter shares, and the one driver that runs it.

An adapter is two pure parts and a line that joins them:

* ``build_request(model, context, options) -> ProviderRequest``: the URL, the headers (by the
  rule of :mod:`tau.ai.streaming.headers`) and the JSON body. No I/O, so it can be called and checked on
  its own (tests validate bodies against the official SDKs' types with it);
* a decoder, ``<Provider>Decoder(builder)``, whose ``feed`` takes one SSE ``data`` payload (or
  one chunk of a binary event stream) and translates it into :class:`~tau.ai.MessageBuilder`
  calls, and whose ``finish`` decides how the response ended;
* ``stream = launch_http(model, context, options, build_request, decoder)``.

The driver (:func:`run_http_adapter`) does the rest, the same way for everyone: the
``on_payload`` hook, the body as JSON bytes, authentication that needs the body or I/O
(``authorize``), the request with its retries and timeouts, feeding the decoder, and the end.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, TypeAlias, TypeGuard, cast

from tau.ai.core.errors import ProviderError, ProviderHTTPError
from tau.ai.core.types import Context, Model
from tau.ai.streaming.builder import MessageBuilder
from tau.ai.streaming.event_stream import AssistantMessageEventStream
from tau.ai.streaming.json_body import json_bytes
from tau.ai.streaming.launch import launch_stream
from tau.ai.streaming.sse import oversized_event

__all__ = [
    "EventDecoder",
    "FrameDecoder",
    "ProviderRequest",
    "apply_on_payload",
    "launch_http",
    "run_http_adapter",
    "set_given",
]


@dataclass(frozen=True, slots=True)
class ProviderRequest:
    """What an adapter sends: ``POST url`` with ``headers`` and the JSON ``body``."""

    url: str
    headers: dict[str, str]
    body: dict[str, Any]


class EventDecoder(Protocol):
    """Turns a server-sent event stream into builder calls, one ``data`` payload at a time."""

    def feed(self, data: str, event: str) -> bool:
        """Apply one event (``event`` is its SSE type); False once the protocol has ended."""
        ...

    def finish(self) -> None:
        """The body ended: settle the stop reason, or raise if the response is incomplete."""
        ...


class FrameDecoder(Protocol):
    """Turns a binary event stream into builder calls, one chunk of bytes at a time."""

    content_type: str
    """The content type of the stream it decodes."""

    def feed(self, data: bytes) -> bool:
        """Apply the complete frames in ``data``; False once the protocol has ended."""
        ...

    def pending_bytes(self) -> int:
        """Bytes the incomplete frame holds, or claims in its length prefix if that is more
        (the driver ends the stream when it passes ``max_line_bytes``)."""
        ...

    def finish(self) -> None:
        """The body ended: settle the stop reason, or raise if the response is incomplete."""
        ...


BuildRequest: TypeAlias = Callable[[Model, Context, Any], ProviderRequest]
"""An adapter's ``build_request(model, context, options)``."""
Authorize: TypeAlias = Callable[[ProviderRequest, bytes], Awaitable[ProviderRequest]]
"""Authentication that needs the final body or I/O (a SigV4 signature, a refreshed token)."""
ExplainError: TypeAlias = Callable[[ProviderHTTPError], ProviderError]
"""An adapter's better text for an HTTP error (the provider's own details)."""


async def apply_on_payload(
    options: Mapping[str, Any], payload: dict[str, Any], model: Model
) -> dict[str, Any]:
    """Run the ``on_payload`` hook (sync or async); a returned dict replaces the payload.

    An exception in the hook propagates, so it ends the stream as an ``error`` event.
    """
    hook = options.get("on_payload")
    if hook is None:
        return payload
    result = hook(payload, model)
    if inspect.isawaitable(result):
        result = await result
    if result is None:
        return payload
    if not isinstance(result, dict):
        raise ProviderError(f"on_payload must return a dict or None, not {type(result).__name__}")
    return result


def set_given(body: dict[str, Any], **fields: Any) -> None:
    """Set each of ``fields`` whose value is not None in ``body``: an option the caller left
    out is not sent, so the provider's default applies."""
    for name, value in fields.items():
        if value is not None:
            body[name] = value


async def run_http_adapter(
    builder: MessageBuilder,
    request: ProviderRequest,
    decoder: EventDecoder | FrameDecoder,
    options: Mapping[str, Any],
    *,
    authorize: Authorize | None = None,
    explain: ExplainError | None = None,
) -> None:
    """Send ``request`` and feed the response to ``decoder`` until it has ended: its
    server-sent events, or the raw chunks of a binary event stream for a
    :class:`FrameDecoder`."""
    from tau.ai.streaming.http import SSE_TYPES, open_stream

    frames = decoder if _reads_frames(decoder) else None
    expect = (frames.content_type,) if frames is not None else SSE_TYPES
    body = await apply_on_payload(options, request.body, builder.model)
    content = json_bytes(body)
    if authorize is not None:
        request = await authorize(request, content)
    try:
        async with open_stream(
            options, "POST", request.url, headers=request.headers, content=content, expect=expect
        ) as response:
            backlog = options.get("max_buffered_events")
            if backlog is not None:
                response.hold = _reader_pacing(builder, backlog)
            if frames is not None:
                feed_chunk = frames.feed
                pending = frames.pending_bytes
                limit = response.max_line_bytes
                async for chunk in response.chunks():
                    if not feed_chunk(chunk):
                        break
                    if pending() > limit:
                        raise oversized_event(limit, "a binary event frame")
            else:
                feed = cast(EventDecoder, decoder).feed
                async for events in response.event_batches():
                    ended = False
                    for event in events:
                        if not feed(event.data, event.event):
                            ended = True  # the protocol's last event: what follows is not read
                            break
                    if ended:
                        break
    except ProviderHTTPError as exc:
        if explain is None:
            raise
        raise explain(exc) from exc
    decoder.finish()


def _reader_pacing(builder: MessageBuilder, limit: int) -> Callable[[Any], Awaitable[None]]:
    """What makes the body wait for the stream's reader: past ``limit`` unread events,
    reading pauses until the reader has taken half of them (or left)."""
    if not isinstance(limit, int) or isinstance(limit, bool) or limit <= 0:
        raise ProviderError(f"max_buffered_events must be a positive integer, not {limit!r}")
    low = limit // 2

    async def hold(watchdog: Any) -> None:
        if builder.unread() <= limit:
            return
        # Not reading is this side's choice: keep the idle timeout from firing meanwhile.
        # A reader that never comes back is its owner's to drop (the proxy's send timeout).
        while builder.unread() > low and not builder.finished:
            watchdog.last = watchdog.clock()
            await asyncio.sleep(_PACING_POLL_S)

    return hold


_PACING_POLL_S = 0.005


def _reads_frames(decoder: EventDecoder | FrameDecoder) -> TypeGuard[FrameDecoder]:
    # A protocol isinstance check costs microseconds per request; the attribute says it.
    return hasattr(decoder, "content_type")


def launch_http(
    model: Model,
    context: Context,
    options: Mapping[str, Any],
    build_request: BuildRequest,
    decoder: Callable[[MessageBuilder], EventDecoder],
    *,
    authorize: Authorize | None = None,
    explain: ExplainError | None = None,
) -> AssistantMessageEventStream:
    """The ``stream`` of an SSE adapter: build the request and run it, as one stream.

    ``build_request`` runs inside the stream, so a missing key becomes an ``error`` event.
    """

    async def run(builder: MessageBuilder) -> None:
        request = build_request(model, context, options)
        await run_http_adapter(
            builder, request, decoder(builder), options, authorize=authorize, explain=explain
        )

    return launch_stream(model, options, run)
