"""Sending one request and holding its streamed response: :class:`open_stream`.

``open_stream`` retries what :mod:`._retry` allows before the first byte of the body (never
after), enforces the three timeouts of :mod:`._timeouts`, never follows a redirect (not even
with a caller's client that would: see :func:`_http_error`), and turns every failure into a
:class:`~tau.ai.core.errors.ProviderError` (or :class:`~tau.ai.core.errors.ProviderHTTPError` for a
status), which ``launch_stream`` makes an ``error`` event.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Mapping
from types import TracebackType
from typing import Any, cast, overload
from urllib.parse import urlsplit

import httpx2

from tau.ai.core.abort import AbortedError
from tau.ai.core.errors import (
    ABORTED_MESSAGE,
    ProviderConnectionError,
    ProviderError,
    ProviderHTTPError,
    ProviderTimeoutError,
    describe_error,
)
from tau.ai.streaming.http import _retry
from tau.ai.streaming.http._errors import error_message_from_body, read_limited
from tau.ai.streaming.http._pool import get_client
from tau.ai.streaming.http._timeouts import Phases, Watchdog, resolve_timeouts
from tau.ai.streaming.json_body import json_bytes
from tau.ai.streaming.observe import request_report
from tau.ai.streaming.sse import DEFAULT_MAX_LINE_BYTES, SSEDecoder, SSEEvent, max_line_bytes

DRAIN_S = 1.0
"""How long to read on for the end of the body after the adapter's last event."""
SSE_TYPES = ("text/event-stream",)
"""The content type of a server-sent event stream (what ``open_stream`` expects by default)."""


class HTTPStream:
    """A successful streamed response: iterate it for :class:`~tau.ai.streaming.sse.SSEEvent`\\ s, or use
    :meth:`chunks` for raw bytes (binary event streams). Both enforce the idle timeout."""

    __slots__ = ("_iterator", "_watchdog", "hold", "host", "max_line_bytes", "response")

    def __init__(
        self,
        response: httpx2.Response,
        watchdog: Watchdog,
        host: str,
        max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    ) -> None:
        self.response = response
        self._watchdog = watchdog
        self.host = host
        self.max_line_bytes = max_line_bytes
        """Bytes one incomplete event (or binary frame) may hold: the ``max_line_bytes``
        option."""
        self.hold: Callable[[Watchdog], Awaitable[None]] | None = None
        """Awaited after each chunk when set: a reader that has fallen behind makes it wait,
        so no more of the body is read (the idle timeout does not run meanwhile)."""
        self._iterator: AsyncGenerator[Any, None] | None = None

    @property
    def headers(self) -> httpx2.Headers:
        """The response headers."""
        return self.response.headers

    def chunks(self) -> AsyncIterator[bytes]:
        """The decoded body bytes as they arrive."""
        iterator = self._read(None)
        self._iterator = iterator
        return iterator

    def event_batches(self) -> AsyncIterator[list[SSEEvent]]:
        """The server-sent events, as the list each chunk of the body completes (never empty).

        What an adapter reads: one step of one generator per chunk, however many events the
        chunk holds, where iterating the stream itself costs a second generator per event.
        """
        iterator = self._read(SSEDecoder(self.max_line_bytes))
        self._iterator = iterator
        return iterator

    def __aiter__(self) -> AsyncIterator[SSEEvent]:
        iterator = self._events()
        self._iterator = iterator
        return iterator

    async def _events(self) -> AsyncGenerator[SSEEvent, None]:
        async for events in self._read(SSEDecoder(self.max_line_bytes)):
            for event in events:
                yield event

    @overload
    def _read(self, decoder: None) -> AsyncGenerator[bytes, None]: ...
    @overload
    def _read(self, decoder: SSEDecoder) -> AsyncGenerator[list[SSEEvent], None]: ...
    async def _read(self, decoder: SSEDecoder | None) -> AsyncGenerator[Any, None]:
        """The body's chunks, or with ``decoder`` the events each completes; one generator
        for both, reading httpx's own, since each level costs every chunk a resumption."""
        watchdog = self._watchdog
        clock = watchdog.clock
        first = True
        try:
            async for chunk in self.response.aiter_bytes():
                if first:
                    first = False
                    watchdog.data()
                else:
                    watchdog.last = clock()
                if decoder is None:
                    yield chunk
                else:
                    events = decoder.feed(chunk)
                    if events:
                        yield events
                if self.hold is not None:
                    await self.hold(watchdog)
        except httpx2.TransportError as exc:
            raise ProviderConnectionError(
                f"Connection to {self.host} lost while streaming: {describe_error(exc)}"
            ) from exc
        if decoder is not None:
            events = decoder.close()
            if events:
                yield events

    async def _finish(self, drain: bool) -> None:
        # An adapter stops reading at the protocol's last event; the end of the HTTP body
        # (the final chunk) usually follows at once. Reading it lets the connection go back
        # to the pool instead of being closed, so the next call skips connect + TLS.
        iterator, self._iterator = self._iterator, None
        if iterator is None:
            return
        try:
            # A body read to its end has closed itself: nothing is left to drain.
            if drain and not self.response.is_closed:
                async with asyncio.timeout(DRAIN_S):
                    async for _ in iterator:
                        pass
        except (TimeoutError, ProviderError, httpx2.HTTPError):
            pass
        finally:
            await iterator.aclose()


class open_stream:
    """Send a request and hold its streamed response: ``async with open_stream(...) as s``.

    ``options`` are the stream options (``client``, ``timeout``, ``max_retries``,
    ``max_retry_delay_ms``, ``signal``, ``max_line_bytes``). ``expect`` lists the acceptable content types of a
    2xx answer (a missing content type is accepted). Timeouts, lost connections and non-2xx
    answers raise :class:`~tau.ai.core.errors.ProviderError` /
    :class:`~tau.ai.core.errors.ProviderHTTPError` from the ``async with``.
    """

    def __init__(
        self,
        options: Mapping[str, Any],
        method: str,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        json: Any = None,
        content: bytes | None = None,
        expect: tuple[str, ...] = SSE_TYPES,
    ) -> None:
        self._options = options
        self._method = method
        self._url = url
        self._headers = dict(headers or {})
        if json is not None:
            content = json_bytes(json)
            self._headers.setdefault("content-type", "application/json")
        self._content = content
        self._expect = expect
        self._host = urlsplit(url).netloc or url
        self._response: httpx2.Response | None = None
        self._stream: HTTPStream | None = None
        self._watchdog: Watchdog | None = None
        self._cancelling = 0
        self._timeouts: Phases = (None, None, None)

    async def __aenter__(self) -> HTTPStream:
        connect, first_byte, idle = self._timeouts = resolve_timeouts(self._options.get("timeout"))
        line_limit = max_line_bytes(self._options)
        task = asyncio.current_task()
        assert task is not None
        self._cancelling = task.cancelling()
        self._watchdog = Watchdog(task, first_byte, idle)
        try:
            response = await self._send_with_retries(connect)
        except asyncio.CancelledError:
            self._watchdog.cancel()
            self._raise_if_timed_out()
            raise
        except BaseException:
            self._watchdog.cancel()
            raise
        self._response = response
        self._stream = HTTPStream(response, self._watchdog, self._host, line_limit)
        return self._stream

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        assert self._watchdog is not None
        self._watchdog.cancel()
        if self._stream is not None:
            await self._stream._finish(drain=exc_type is None)
        response = self._response
        if response is not None and not response.is_closed:
            # Read to its end (the usual case), the response has closed itself already;
            # otherwise release the connection even if this task is being cancelled.
            await asyncio.shield(response.aclose())
        if exc_type is not None and issubclass(exc_type, asyncio.CancelledError):
            self._raise_if_timed_out()

    def _raise_if_timed_out(self) -> None:
        watchdog = self._watchdog
        if watchdog is None or watchdog.expired is None:
            return
        task = asyncio.current_task()
        assert task is not None
        if task.uncancel() > self._cancelling:
            return  # also cancelled from outside (abort): that wins
        _, first_byte, idle = self._timeouts
        if watchdog.expired == "idle":
            raise ProviderTimeoutError(
                f"No data from {self._host} for {idle:g} s: the stream stalled "
                "(idle timeout; raise the `timeout` option to wait longer)"
            )
        raise ProviderTimeoutError(
            f"No response from {self._host} within {first_byte:g} s "
            "(first-byte timeout; raise the `timeout` option to wait longer)"
        )

    async def _send_with_retries(self, connect: float | None) -> httpx2.Response:
        options = self._options
        client = cast(httpx2.AsyncClient, options.get("client") or get_client())
        max_retries = options.get("max_retries")
        max_retries = (
            _retry.DEFAULT_MAX_RETRIES if max_retries is None else max(0, int(max_retries))
        )
        cap_ms = options.get("max_retry_delay_ms")
        cap = (_retry.DEFAULT_MAX_RETRY_DELAY_MS if cap_ms is None else cap_ms) / 1000
        signal = options.get("signal")
        watchdog = self._watchdog
        assert watchdog is not None
        # httpx's own form of its four timeouts. Only connecting is left to httpx: the
        # watchdog's first-byte limit runs from the moment the request is sent, so it already
        # bounds waiting for a pooled connection and writing the body, and then reading is
        # its job. A write limit of its own would fail a large body on a slow uplink (each
        # write waits for the socket to drain), and would cost every request two timers.
        extensions = {"timeout": {"connect": connect, "read": None, "write": None, "pool": None}}
        report = request_report(self._method, self._url, self._headers)  # None: nobody listens
        attempt = 0
        while True:
            if signal is not None and signal.aborted:
                raise AbortedError(signal.reason or ABORTED_MESSAGE)
            request = _build_request(
                client, self._method, self._url, self._headers, self._content, extensions
            )
            watchdog.arm()
            if report is not None:
                report.attempt()
            try:
                # Never follow a redirect, whatever the client's setting: the next hop would
                # get the request's headers, and the key is in one of them under a name that
                # differs per provider (and per caller: the ``headers`` option).
                response = await client.send(request, stream=True, follow_redirects=False)
            except (httpx2.ConnectError, httpx2.ConnectTimeout, httpx2.PoolTimeout) as exc:
                failure: ProviderError = ProviderConnectionError(
                    f"Could not connect to {self._host}: {describe_error(exc)}"
                    + (
                        f" (connect timeout {connect:g} s)"
                        if isinstance(exc, httpx2.TimeoutException)
                        else ""
                    )
                )
                server_delay = None
            except (httpx2.RemoteProtocolError, httpx2.ReadError, httpx2.WriteError) as exc:
                # Typically a pooled keep-alive connection the server had closed.
                failure = ProviderConnectionError(
                    f"Connection to {self._host} failed before a response: {describe_error(exc)}"
                )
                server_delay = None
            except httpx2.TransportError as exc:
                raise ProviderConnectionError(
                    f"Request to {self._host} failed: {describe_error(exc)}"
                ) from exc
            else:
                if report is not None:
                    report.answered(response.status_code)
                if response.is_success:
                    try:
                        await self._check_content_type(response)
                    except BaseException:
                        await response.aclose()
                        raise
                    return response
                try:
                    body = await read_limited(response)
                finally:
                    await response.aclose()
                failure = _http_error(response, body, self._host)
                if not _retry.is_retryable(response.status_code, response.headers, body):
                    raise failure
                server_delay = failure.retry_after
            watchdog.cancel()
            if attempt >= max_retries:
                raise failure
            if server_delay is not None and cap > 0 and server_delay > cap:
                # Only a status answer names a delay, and the status stays known.
                raise ProviderError(
                    f"{failure} (the server asked to retry after {server_delay:g} s, longer "
                    f"than max_retry_delay_ms={cap * 1000:g}; not retrying)",
                    status=failure.status,
                    retry_after=server_delay,
                )
            delay = server_delay if server_delay is not None else _retry.backoff(attempt)
            if report is not None:
                report.retry(attempt + 1, max_retries, delay, failure)
            await asyncio.sleep(delay)
            attempt += 1

    async def _check_content_type(self, response: httpx2.Response) -> None:
        content_type = response.headers.get("content-type", "")
        if not content_type or not self._expect:
            return
        mime = content_type.split(";", 1)[0].strip().lower()
        if mime in self._expect:
            return
        body = await read_limited(response)
        message = error_message_from_body(body, content_type)
        raise ProviderHTTPError(
            f"{response.status_code} expected an event stream from {self._host} but got "
            f"{mime or 'no content type'}: {message}",
            response.status_code,
            body.decode("utf-8", "replace"),
            response.headers,
        )


def _build_request(
    client: httpx2.AsyncClient,
    method: str,
    url: str,
    headers: dict[str, str],
    content: bytes | None,
    extensions: dict[str, Any],
) -> httpx2.Request:
    """``client.build_request(...)`` for what providers send, a third cheaper.

    httpx merges the request's headers into a copy of the client's with a lookup and a
    removal through the whole list per header: for a Codex request's seven headers, 59 µs
    a request here against 37 µs this way (measured). For an absolute URL and a client
    without query parameters, that merge does two things only: the request's header names
    replace the client's, whatever their case, and the client's cookies go along. Any other
    request goes through httpx's own merge.
    """
    if client.params or not url.startswith(_ABSOLUTE):
        return client.build_request(
            method, url, headers=headers, content=content, extensions=extensions
        )
    ours = httpx2.Headers(headers).raw  # each name and value checked as httpx checks them
    replaced = {name.lower() for name, _ in ours}
    merged = [item for item in client.headers.raw if item[0].lower() not in replaced]
    merged += ours
    return httpx2.Request(
        method, url, headers=merged, content=content, cookies=client.cookies, extensions=extensions
    )


_ABSOLUTE = ("https://", "http://")


def _http_error(response: httpx2.Response, body: bytes, host: str) -> ProviderHTTPError:
    if response.is_redirect:
        target = urlsplit(response.headers.get("location", ""))
        where = f"{target.scheme}://{target.netloc}{target.path}" if target.netloc else "elsewhere"
        message = (
            f"{host} redirected the request to {where}; provider requests never follow "
            "redirects, so that the key is not sent to another address: set the model's "
            "base_url to the address that answers"
        )
    else:
        message = error_message_from_body(body, response.headers.get("content-type", ""))
    return ProviderHTTPError(
        f"{response.status_code} {message}",
        response.status_code,
        body.decode("utf-8", "replace"),
        response.headers,
        _delay(response.status_code, response.headers, body),
    )


def _delay(status: int, headers: httpx2.Headers, body: bytes) -> float | None:
    named = _retry.retry_delay_from_headers(headers)
    if named is None and status in _retry.RETRYABLE_STATUSES:
        named = _retry.retry_delay_from_body(body)
    return named
