"""HTTP plumbing shared by the adapters: a pooled client per event loop, an SSE decoder, and
one request function with retries, timeouts and readable errors.

This is the only module that imports ``httpx2``; adapters import it lazily (``import tau.ai``
never does).

Client lifetime: :func:`get_client` keeps one ``httpx2.AsyncClient`` per running event loop
(a ``WeakKeyDictionary`` keyed by the loop). It is closed when that loop shuts down its async
generators, which ``asyncio.run()``, ``asyncio.Runner`` and pytest-asyncio all do; a loop
closed without that step leaves its sockets to the garbage collector (no loop is kept alive
by the cache), and :func:`close_client` closes the current loop's client explicitly. A client passed as the
``client`` option is used as it is and never closed here.

Usage from an adapter::

    async with open_stream(options, "POST", url, headers=headers, json=body) as response:
        async for event in response:          # SSEEvent, decoded as bytes arrive
            ...

``open_stream`` retries 429/500/502/503/504/529, "overloaded" bodies and connection failures
*before* the first byte of the body (never after), honouring ``Retry-After`` and
``retry-after-ms``; everything else that fails raises :class:`ProviderError` (or
:class:`ProviderHTTPError` for a status), which ``launch_stream`` turns into an ``error``
event.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import functools
import json as jsonlib
import random
import re
import ssl
import sys
import time
import weakref
from collections.abc import AsyncGenerator, AsyncIterator, Iterable, Mapping
from dataclasses import dataclass
from types import TracebackType
from typing import Any, cast
from urllib.parse import urlsplit

import httpx2

from tau.ai.abort import AbortedError
from tau.ai.builder import (
    ABORTED_MESSAGE,
    ProviderConnectionError,
    ProviderError,
    ProviderTimeoutError,
)
from tau.ai.observe import request_report

__all__ = [
    "DEFAULT_TIMEOUTS",
    "HTTPStream",
    "ProviderHTTPError",
    "SSEDecoder",
    "SSEEvent",
    "close_client",
    "error_message_from_body",
    "get_client",
    "open_stream",
    "resolve_timeouts",
    "retry_delay_from_headers",
]

DEFAULT_TIMEOUTS: dict[str, float] = {"connect": 10.0, "first_byte": 120.0, "idle": 120.0}
"""Seconds: to connect, from sending the request to the first body byte, between two chunks."""
DEFAULT_MAX_RETRIES = 3
DEFAULT_MAX_RETRY_DELAY_MS = 60_000
RETRYABLE_STATUSES = frozenset({429, 500, 502, 503, 504, 529})
BACKOFF_BASE_S = 0.5
"""First backoff delay when the server names none; doubles per attempt, up to BACKOFF_MAX_S."""
BACKOFF_MAX_S = 8.0
DRAIN_S = 1.0
"""How long to read on for the end of the body after the adapter's last event."""
_MAX_ERROR_BODY = 1 << 20
_MESSAGE_LIMIT = 500
_BOM = b"\xef\xbb\xbf"


# --------------------------------------------------------------------------- client per loop

_Entry = tuple[httpx2.AsyncClient, AsyncGenerator[None, None]]
# loop -> (its client, the parked async generator whose ``finally`` closes it). Nothing in an
# entry refers to the loop strongly, so a loop that is dropped takes its entry with it.
_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Entry] = weakref.WeakKeyDictionary()


def get_client() -> httpx2.AsyncClient:
    """The shared pooled client of the running event loop (created on first use)."""
    loop = asyncio.get_running_loop()
    entry = _clients.get(loop)
    if entry is not None and not entry[0].is_closed:
        return entry[0]
    client = httpx2.AsyncClient(
        verify=_ssl_context(),
        timeout=None,
        # An LLM client holds many long streams at once: never queue one behind another.
        limits=httpx2.Limits(max_connections=None, max_keepalive_connections=64),
    )
    _clients[loop] = (client, _park_closer(loop, client))
    return client


@functools.cache
def _ssl_context() -> ssl.SSLContext:
    # Loading the CA bundle takes a noticeable fraction of a second: once per process, shared
    # by the clients of every loop (an SSLContext may be used from any thread).
    return httpx2.create_ssl_context()


def _park_closer(
    loop: asyncio.AbstractEventLoop, client: httpx2.AsyncClient
) -> AsyncGenerator[None, None]:
    # Starting an async generator registers it with the loop (the asyncgen firstiter hook);
    # the loop's shutdown_asyncgens() then runs its ``finally`` inside the loop. Our own
    # finalizer hook holds the loop weakly (asyncio's would keep it alive) and does nothing
    # once the loop is gone or closed.
    loop_ref = weakref.ref(loop)

    def finalize(agen: AsyncGenerator[None, None]) -> None:
        alive = loop_ref()
        if alive is not None and not alive.is_closed():
            alive.call_soon_threadsafe(alive.create_task, agen.aclose())

    closer = _close_at_shutdown(client)
    hooks = sys.get_asyncgen_hooks()
    sys.set_asyncgen_hooks(firstiter=hooks.firstiter, finalizer=finalize)
    try:
        with contextlib.suppress(StopIteration):
            closer.__anext__().send(None)
    finally:
        sys.set_asyncgen_hooks(*hooks)
    return closer


async def _close_at_shutdown(client: httpx2.AsyncClient) -> AsyncGenerator[None, None]:
    try:
        yield
    finally:
        await client.aclose()


async def close_client() -> None:
    """Close the running loop's shared client now (a later call creates a fresh one)."""
    entry = _clients.pop(asyncio.get_running_loop(), None)
    if entry is not None:
        await entry[1].aclose()


# --------------------------------------------------------------------------- SSE decoding


@dataclass(slots=True)
class SSEEvent:
    """One dispatched server-sent event."""

    event: str
    """The ``event:`` field, ``"message"`` when absent."""
    data: str
    """The ``data:`` lines joined with ``\\n``."""
    id: str = ""
    """The last event id seen so far in the stream (it persists across events)."""
    retry: int | None = None
    """A ``retry:`` value given since the previous event, else None."""


class SSEDecoder:
    """Incremental WHATWG ``text/event-stream`` decoder: feed bytes, get events.

    Lines end in CRLF, LF or CR (a CRLF split across two chunks counts once); lines starting
    with ``:`` are comments; a leading UTF-8 BOM is dropped; data is decoded as UTF-8 with
    replacement characters for invalid bytes. Events without data are not dispatched, as the
    standard says. Unlike the standard, an event left unterminated at end of stream *is*
    dispatched by :meth:`close`: a server that closes right after its last ``data:`` line
    still meant it (several proxies do this).

    The work per chunk is a few ``bytes`` searches and one ``splitlines``; an unterminated
    line is kept as a list of pieces, so a huge event in tiny chunks stays linear.
    """

    __slots__ = ("_data", "_event", "_id", "_parts", "_retry", "_skip_lf", "_started")

    def __init__(self) -> None:
        self._parts: list[bytes] = []
        self._data: list[bytes] = []
        self._event = ""
        self._id = ""
        self._retry: int | None = None
        self._skip_lf = False
        self._started = False

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        """Decode ``chunk``; returns the events it completed (often none or one)."""
        if not chunk:
            return []
        if self._skip_lf:
            # The previous chunk ended in CR: a LF here is the rest of that CRLF.
            self._skip_lf = False
            if chunk[0] == 10:
                chunk = chunk[1:]
                if not chunk:
                    return []
        if not self._started:
            parts = self._parts
            head = b"".join(parts) + chunk if parts else chunk
            if len(head) < 3 and _BOM.startswith(head):
                self._parts = [head]
                return []
            self._started = True
            self._parts = []
            chunk = head[3:] if head.startswith(_BOM) else head
            if not chunk:
                return []
        cut = max(chunk.rfind(b"\n"), chunk.rfind(b"\r"))
        if cut < 0:
            self._parts.append(chunk)
            return []
        if self._parts:
            self._parts.append(chunk)
            data = b"".join(self._parts)
            self._parts = []
            complete = len(data) - len(chunk) + cut + 1 == len(data)
        else:
            data = chunk
            complete = cut + 1 == len(chunk)
        lines = data.splitlines()
        if not complete:
            self._parts.append(lines.pop())
        elif data[-1] == 13:
            self._skip_lf = True
        return self._lines(lines)

    def close(self) -> list[SSEEvent]:
        """End of stream: the pending line, and an unterminated event, are dispatched."""
        lines = [b"".join(self._parts)] if self._parts else []
        self._parts = []
        events = self._lines(lines)
        if self._data:
            events.append(self._dispatch())
        return events

    def _lines(self, lines: Iterable[bytes]) -> list[SSEEvent]:
        events: list[SSEEvent] = []
        data = self._data
        for line in lines:
            if not line:
                if data:
                    events.append(self._dispatch())
                    data = self._data
                else:
                    self._event = ""
                continue
            # Fast paths for what providers actually send, then the general field syntax.
            if line.startswith(b"data: "):
                data.append(line[6:])
                continue
            if line.startswith(b"event: "):
                self._event = line[7:].decode("utf-8", "replace")
                continue
            name, _, value = line.partition(b":")
            if not name:
                continue  # comment
            if value.startswith(b" "):
                value = value[1:]
            if name == b"data":
                data.append(value)
            elif name == b"event":
                self._event = value.decode("utf-8", "replace")
            elif name == b"id":
                if b"\0" not in value:
                    self._id = value.decode("utf-8", "replace")
            elif name == b"retry" and value.isdigit():
                self._retry = int(value)
        return events

    def _dispatch(self) -> SSEEvent:
        data = self._data
        text = (data[0] if len(data) == 1 else b"\n".join(data)).decode("utf-8", "replace")
        event = SSEEvent(self._event or "message", text, self._id, self._retry)
        self._data = []
        self._event = ""
        self._retry = None
        return event


# --------------------------------------------------------------------------- errors


class ProviderHTTPError(ProviderError):
    """A non-2xx answer (after retries); the text is ``"<status> <provider's message>"``."""

    status: int

    def __init__(
        self, message: str, status: int, body: str = "", retry_after: float | None = None
    ) -> None:
        super().__init__(message, status=status, retry_after=retry_after)
        self.body = body


_TITLE = re.compile(rb"<title[^>]*>(.*?)</title>", re.IGNORECASE | re.DOTALL)


def error_message_from_body(body: bytes, content_type: str = "") -> str:
    """The provider's own message from an error body, on one line.

    Understands ``{"error": {"message", "type"}}``, ``{"error": "..."}``, ``{"message"}`` and
    ``{"detail"}`` (also inside a one-element list); an HTML page becomes a short note with
    its title; other text is truncated. An empty body is ``"(no body)"``.
    """
    stripped = body.strip()
    if not stripped:
        return "(no body)"
    if stripped[:1] in (b"{", b"["):
        try:
            parsed = jsonlib.loads(stripped)
        except ValueError:
            parsed = None
        if parsed is not None:
            found = _message_from_json(parsed)
            if found:
                return _one_line(found)
    head = stripped[:512].lower()
    if "html" in content_type.lower() or head.startswith((b"<!doctype", b"<html")):
        match = _TITLE.search(stripped[:8192])
        title = _one_line(match.group(1).decode("utf-8", "replace")) if match else ""
        note = "the server answered with an HTML page instead of an API response"
        return f"{note} ({title})" if title else note
    return _one_line(stripped.decode("utf-8", "replace"))


def _message_from_json(value: Any) -> str | None:
    if isinstance(value, list) and value:
        return _message_from_json(value[0])
    if not isinstance(value, dict):
        return None
    error = value.get("error")
    if isinstance(error, dict):
        message = error.get("message")
        kind = error.get("type") or error.get("status")
        if isinstance(message, str) and message:
            return f"{kind}: {message}" if isinstance(kind, str) and kind else message
        if isinstance(kind, str) and kind:
            return kind
    elif isinstance(error, str) and error:
        return error
    message = value.get("message")
    if isinstance(message, str) and message:
        return message
    detail = value.get("detail")
    if isinstance(detail, str) and detail:
        return detail
    if isinstance(detail, list) and detail:
        texts = [d.get("msg") for d in detail if isinstance(d, dict) and d.get("msg")]
        if texts:
            return "; ".join(str(t) for t in texts)
    return None


def _one_line(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _MESSAGE_LIMIT else text[: _MESSAGE_LIMIT - 1] + "…"


# --------------------------------------------------------------------------- timeouts


def resolve_timeouts(value: object) -> tuple[float | None, float | None, float | None]:
    """``(connect, first_byte, idle)`` from the ``timeout`` option (None = no limit).

    A number sets all three; a ``Timeouts`` dict sets some (the others keep their defaults);
    a phase set to None or a non-positive number has no limit.
    """
    if value is None:
        phases: Mapping[str, Any] = DEFAULT_TIMEOUTS
    elif isinstance(value, int | float) and not isinstance(value, bool):
        phases = dict.fromkeys(DEFAULT_TIMEOUTS, float(value))
    elif isinstance(value, Mapping):
        unknown = set(value) - set(DEFAULT_TIMEOUTS)
        if unknown:
            raise ProviderError(
                f"Unknown timeout phase(s) {sorted(unknown)}; use connect, first_byte, idle"
            )
        phases = {**DEFAULT_TIMEOUTS, **value}
    else:
        raise ProviderError(
            f"The timeout option must be seconds or a dict of phases, not {type(value).__name__}"
        )

    def limit(name: str) -> float | None:
        seconds = phases[name]
        if seconds is None:
            return None
        if not isinstance(seconds, int | float) or isinstance(seconds, bool):
            raise ProviderError(f"timeout[{name!r}] must be a number of seconds")
        return float(seconds) if seconds > 0 else None

    return limit("connect"), limit("first_byte"), limit("idle")


class _Watchdog:
    """Cancels the task when no data arrived in time; data costs one clock read (``last``).

    One timer handle is kept: when it fires early (data came since) it re-arms for the new
    deadline instead of every chunk rescheduling it.
    """

    __slots__ = ("_handle", "_loop", "_task", "expired", "first_byte", "got_data", "idle", "last")

    def __init__(self, first_byte: float | None, idle: float | None) -> None:
        self._loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        assert task is not None
        self._task = task
        self._handle: asyncio.TimerHandle | None = None
        self.first_byte = first_byte
        self.idle = idle
        self.last = 0.0
        self.got_data = False
        self.expired: str | None = None

    def arm(self) -> None:
        """Start the first-byte phase now (a new attempt)."""
        self.cancel()
        self.got_data = False
        self.last = self._loop.time()
        if self.first_byte is not None:
            self._handle = self._loop.call_at(self.last + self.first_byte, self._check)

    def data(self) -> None:
        """The first data arrived: from now on the idle limit applies."""
        self.got_data = True
        self.last = self._loop.time()
        self.cancel()
        if self.idle is not None:
            self._handle = self._loop.call_at(self.last + self.idle, self._check)

    def _check(self) -> None:
        limit = self.idle if self.got_data else self.first_byte
        if limit is None:
            self._handle = None
            return
        deadline = self.last + limit
        if self._loop.time() < deadline:
            self._handle = self._loop.call_at(deadline, self._check)
            return
        self._handle = None
        self.expired = "idle" if self.got_data else "first_byte"
        self._task.cancel()

    def cancel(self) -> None:
        """Stop watching."""
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None


# --------------------------------------------------------------------------- retries


def retry_delay_from_headers(headers: Mapping[str, str]) -> float | None:
    """Seconds the server asks to wait (``retry-after-ms``, ``Retry-After`` seconds or date)."""
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    after = headers.get("retry-after")
    if after:
        try:
            return max(0.0, float(after))
        except ValueError:
            pass
        try:
            when = email.utils.parsedate_to_datetime(after)
        except (TypeError, ValueError):
            return None
        return max(0.0, when.timestamp() - time.time())
    return None


def _backoff(attempt: int) -> float:
    # Jitter keeps many clients that failed together from retrying together.
    delay: float = min(BACKOFF_BASE_S * 2.0**attempt, BACKOFF_MAX_S)
    return delay * (1 - 0.25 * random.random())


# --------------------------------------------------------------------------- requests


class HTTPStream:
    """A successful streamed response: iterate it for :class:`SSEEvent`\\ s, or use
    :meth:`chunks` for raw bytes (binary event streams). Both enforce the idle timeout."""

    __slots__ = ("_iterator", "_watchdog", "host", "response")

    def __init__(self, response: httpx2.Response, watchdog: _Watchdog, host: str) -> None:
        self.response = response
        self._watchdog = watchdog
        self.host = host
        self._iterator: AsyncGenerator[Any, None] | None = None

    @property
    def headers(self) -> httpx2.Headers:
        """The response headers."""
        return self.response.headers

    def chunks(self) -> AsyncIterator[bytes]:
        """The decoded body bytes as they arrive."""
        iterator = self._chunks()
        self._iterator = iterator
        return iterator

    def __aiter__(self) -> AsyncIterator[SSEEvent]:
        iterator = self._events()
        self._iterator = iterator
        return iterator

    async def _chunks(self) -> AsyncGenerator[bytes, None]:
        watchdog = self._watchdog
        clock = watchdog._loop.time
        first = True
        try:
            async for chunk in self.response.aiter_bytes():
                if first:
                    first = False
                    watchdog.data()
                else:
                    watchdog.last = clock()
                yield chunk
        except httpx2.TransportError as exc:
            raise ProviderConnectionError(
                f"Connection to {self.host} lost while streaming: {_describe(exc)}"
            ) from exc

    async def _events(self) -> AsyncGenerator[SSEEvent, None]:
        decoder = SSEDecoder()
        feed = decoder.feed
        async for chunk in self._chunks():
            for event in feed(chunk):
                yield event
        for event in decoder.close():
            yield event

    async def _finish(self, drain: bool) -> None:
        # An adapter stops reading at the protocol's last event; the end of the HTTP body
        # (the final chunk) usually follows at once. Reading it lets the connection go back
        # to the pool instead of being closed, so the next call skips connect + TLS.
        iterator, self._iterator = self._iterator, None
        if iterator is None:
            return
        try:
            if drain:
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
    ``max_retry_delay_ms``, ``signal``). ``expect`` lists the acceptable content types of a
    2xx answer (a missing content type is accepted). Timeouts, lost connections and non-2xx
    answers raise :class:`ProviderError` / :class:`ProviderHTTPError` from the ``async with``.
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
        expect: tuple[str, ...] = ("text/event-stream",),
    ) -> None:
        self._options = options
        self._method = method
        self._url = url
        self._headers = dict(headers or {})
        if json is not None:
            content = jsonlib.dumps(json, separators=(",", ":")).encode()
            self._headers.setdefault("content-type", "application/json")
        self._content = content
        self._expect = expect
        self._host = urlsplit(url).netloc or url
        self._response: httpx2.Response | None = None
        self._stream: HTTPStream | None = None
        self._watchdog: _Watchdog | None = None
        self._cancelling = 0
        self._timeouts: tuple[float | None, float | None, float | None] = (None, None, None)

    async def __aenter__(self) -> HTTPStream:
        connect, first_byte, idle = self._timeouts = resolve_timeouts(self._options.get("timeout"))
        task = asyncio.current_task()
        assert task is not None
        self._cancelling = task.cancelling()
        self._watchdog = _Watchdog(first_byte, idle)
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
        self._stream = HTTPStream(response, self._watchdog, self._host)
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
        if self._response is not None:
            await asyncio.shield(self._response.aclose())
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
        max_retries = DEFAULT_MAX_RETRIES if max_retries is None else max(0, int(max_retries))
        cap_ms = options.get("max_retry_delay_ms")
        cap = (DEFAULT_MAX_RETRY_DELAY_MS if cap_ms is None else cap_ms) / 1000
        signal = options.get("signal")
        watchdog = self._watchdog
        assert watchdog is not None
        timeout = httpx2.Timeout(connect=connect, read=None, write=connect, pool=connect)
        report = request_report(self._method, self._url, self._headers)  # None: nobody listens
        attempt = 0
        while True:
            if signal is not None and signal.aborted:
                raise AbortedError(signal.reason or ABORTED_MESSAGE)
            request = client.build_request(
                self._method, self._url, headers=self._headers, content=self._content,
                timeout=timeout,
            )  # fmt: skip
            watchdog.arm()
            if report is not None:
                report.attempt()
            try:
                response = await client.send(request, stream=True)
            except (httpx2.ConnectError, httpx2.ConnectTimeout, httpx2.PoolTimeout) as exc:
                failure: ProviderError = ProviderConnectionError(
                    f"Could not connect to {self._host}: {_describe(exc)}"
                    + (f" (connect timeout {connect:g} s)" if _is_timeout(exc) else "")
                )
                server_delay = None
            except (httpx2.RemoteProtocolError, httpx2.ReadError, httpx2.WriteError) as exc:
                # Typically a pooled keep-alive connection the server had closed.
                failure = ProviderConnectionError(
                    f"Connection to {self._host} failed before a response: {_describe(exc)}"
                )
                server_delay = None
            except httpx2.TransportError as exc:
                raise ProviderConnectionError(
                    f"Request to {self._host} failed: {_describe(exc)}"
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
                    body = await _read_limited(response)
                finally:
                    await response.aclose()
                message = error_message_from_body(body, response.headers.get("content-type", ""))
                server_delay = retry_delay_from_headers(response.headers)
                failure = ProviderHTTPError(
                    f"{response.status_code} {message}",
                    response.status_code,
                    body.decode("utf-8", "replace"),
                    server_delay,
                )
                if not _retryable(response, body):
                    raise failure
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
            delay = server_delay if server_delay is not None else _backoff(attempt)
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
        body = await _read_limited(response)
        message = error_message_from_body(body, content_type)
        raise ProviderHTTPError(
            f"{response.status_code} expected an event stream from {self._host} but got "
            f"{mime or 'no content type'}: {message}",
            response.status_code,
            body.decode("utf-8", "replace"),
        )


def _retryable(response: httpx2.Response, body: bytes) -> bool:
    should = response.headers.get("x-should-retry")
    if should == "true":
        return True
    if should == "false":
        return False
    return response.status_code in RETRYABLE_STATUSES or b"overloaded" in body.lower()


async def _read_limited(response: httpx2.Response) -> bytes:
    parts: list[bytes] = []
    size = 0
    try:
        async for chunk in response.aiter_bytes():
            parts.append(chunk)
            size += len(chunk)
            if size >= _MAX_ERROR_BODY:
                break
    except httpx2.TransportError:
        pass  # what arrived is enough to describe the error
    return b"".join(parts)


def _is_timeout(exc: BaseException) -> bool:
    return isinstance(exc, httpx2.TimeoutException)


def _describe(exc: BaseException) -> str:
    text = str(exc).strip()
    return text if text else type(exc).__name__
