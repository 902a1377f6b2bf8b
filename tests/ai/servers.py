"""A tiny scripted HTTP/1.1 server on 127.0.0.1 for tests, replays, faults and benchmarks.

Each request gets the next :class:`Reply` (or whatever ``handler(request)`` returns). A reply's
``body`` is a list of steps: ``bytes`` are written as one chunk (chunked transfer encoding),
a ``float`` sleeps that many seconds, :data:`STALL` waits until the client hangs up or the server stops, and
:data:`CLOSE` drops the connection without finishing the body. The server stops itself after
``lifetime`` seconds at the latest, and when its ``async with`` block ends.

    async with LocalServer([Reply(200, SSE_HEADERS, [b"data: 1\\n\\n"])]) as server:
        ... server.url ...
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Self

STALL = object()
"""A body step that waits until the server stops."""
CLOSE = object()
"""A body step that drops the connection at once."""

SSE_HEADERS = {"content-type": "text/event-stream"}
JSON_HEADERS = {"content-type": "application/json"}


@dataclass
class Reply:
    """One scripted response."""

    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: Sequence[Any] = ()
    """Steps: bytes (a chunk), float (sleep), STALL or CLOSE."""
    delay: float = 0.0
    """Seconds to wait before sending the status line."""


@dataclass
class Request:
    """What the server received."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    header_lines: list[tuple[str, str]] = field(default_factory=list)
    """Every header line as sent (name lower-cased), repeats included."""


Handler = Callable[[Request], "Reply | Awaitable[Reply]"]

_REASONS = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    404: "Not Found",
    413: "Payload Too Large",
    429: "Too Many Requests",
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
    504: "Gateway Timeout",
    529: "Overloaded",
}


class LocalServer:
    """Serves scripted replies on 127.0.0.1 (a free port) until stopped or ``lifetime`` ends.

    ``body_delay``: seconds to wait after a request's head before reading its body (a slow
    uplink), or :data:`STALL` never to read it.
    """

    def __init__(
        self,
        replies: Sequence[Reply] | Handler = (),
        *,
        lifetime: float = 60.0,
        max_requests: int = 10_000,
        body_delay: float | object = 0.0,
    ) -> None:
        self._replies = list(replies) if not callable(replies) else []
        self._handler = replies if callable(replies) else None
        self.requests: list[Request] = []
        self.connections = 0
        """How many connections were accepted so far."""
        self._lifetime = lifetime
        self._max_requests = max_requests
        self._body_delay = body_delay
        self._server: asyncio.Server | None = None
        self._stopped = asyncio.Event()
        self._connections: set[asyncio.Task[None]] = set()
        self._writers: set[asyncio.StreamWriter] = set()
        self._timer: asyncio.TimerHandle | None = None
        self.port = 0

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>``."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def open_connections(self) -> int:
        """Connections still open (a client that leaks one keeps this above zero)."""
        return len(self._connections)

    def add(self, *replies: Reply) -> None:
        """Queue more replies."""
        self._replies.extend(replies)

    async def __aenter__(self) -> LocalServer:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        loop = asyncio.get_running_loop()
        self._timer = loop.call_later(self._lifetime, lambda: loop.create_task(self.stop()))
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    async def stop(self) -> None:
        """Stop listening, end stalled replies and close every connection."""
        self._stopped.set()
        if self._timer is not None:
            self._timer.cancel()
        if self._server is not None:
            self._server.close()
        # Handlers are never cancelled (asyncio logs that as an error): closing their
        # connections ends any read, and every wait in a reply also watches _stopped.
        for writer in list(self._writers):
            writer.close()
        if self._connections:
            await asyncio.wait(list(self._connections), timeout=5)
        if self._server is not None:
            await self._server.wait_closed()
            self._server = None

    async def _before_body(self) -> None:
        # A slow uplink, as the client sees it: its writes wait once the socket buffers fill.
        if self._body_delay is STALL:
            await self._stopped.wait()
        elif isinstance(self._body_delay, int | float) and self._body_delay > 0:
            await self._pause(self._body_delay)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections.add(task)
        self._writers.add(writer)
        self.connections += 1
        try:
            while not self._stopped.is_set():
                request = await _read_request(reader, self._before_body)
                if request is None:
                    break
                self.requests.append(request)
                if len(self.requests) > self._max_requests:
                    break
                reply = await self._next_reply(request)
                if not await self._write_reply(reply, reader, writer):
                    break
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            self._connections.discard(task)
            self._writers.discard(writer)
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _next_reply(self, request: Request) -> Reply:
        if self._handler is not None:
            result = self._handler(request)
            return await result if isinstance(result, Awaitable) else result
        if not self._replies:
            return Reply(500, {"content-type": "text/plain"}, [b"no scripted reply left"])
        return self._replies.pop(0)

    async def _write_reply(
        self, reply: Reply, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> bool:
        """Write one response; False when the connection must close."""
        if reply.delay and await self._pause(reply.delay):
            return False
        headers = {k.lower(): v for k, v in reply.headers.items()}
        headers.setdefault("transfer-encoding", "chunked")
        head = f"HTTP/1.1 {reply.status} {_REASONS.get(reply.status, 'Status')}\r\n"
        head += "".join(f"{k}: {v}\r\n" for k, v in headers.items()) + "\r\n"
        writer.write(head.encode("latin-1"))
        for step in reply.body:
            if isinstance(step, bytes | bytearray):
                if step:
                    writer.write(b"%x\r\n%s\r\n" % (len(step), step))
                    await writer.drain()
            elif isinstance(step, int | float):
                await writer.drain()
                if await self._pause(step):
                    return False
            elif step is STALL:
                # Until the client hangs up or the server stops (which closes the socket).
                await writer.drain()
                with contextlib.suppress(ConnectionError):
                    while await reader.read(65536):
                        pass
                return False
            elif step is CLOSE:
                await writer.drain()
                return False
            else:
                raise TypeError(f"unknown body step {step!r}")
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        return True

    async def _pause(self, seconds: float) -> bool:
        """Sleep; True if the server stopped meanwhile."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._stopped.wait(), seconds)
        return self._stopped.is_set()


async def _read_request(
    reader: asyncio.StreamReader, before_body: Callable[[], Awaitable[None]]
) -> Request | None:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError:
        return None
    lines = head.decode("latin-1").split("\r\n")
    method, path, _ = lines[0].split(" ", 2)
    header_lines = []
    for line in lines[1:]:
        if ":" in line:
            name, value = line.split(":", 1)
            header_lines.append((name.strip().lower(), value.strip()))
    headers = dict(header_lines)
    length = int(headers.get("content-length", "0"))
    if length:
        await before_body()
    body = await reader.readexactly(length) if length else b""
    return Request(method, path, headers, body, header_lines)


async def wait_until(condition: Callable[[], bool], limit: float = 10.0) -> None:
    """Poll ``condition`` until true; fail after ``limit`` seconds."""
    deadline = time.monotonic() + limit
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        await asyncio.sleep(0.01)


def refused_url() -> str:
    """An ``http://127.0.0.1:<port>`` address nothing listens on: connecting is refused."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


class ServerThread:
    """A :class:`LocalServer` answering with ``handler`` in a thread of its own, so that
    synchronous code and other processes reach it: ``with ServerThread(handler) as server``,
    then ``server.url``. The handler runs on the server's thread."""

    def __init__(self, handler: Handler) -> None:
        self.url = ""
        self._handler = handler
        self._ready = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._thread = threading.Thread(target=lambda: asyncio.run(self._serve()), daemon=True)

    def __enter__(self) -> Self:
        self._thread.start()
        assert self._ready.wait(10), "the server thread did not start"
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._loop is not None and self._stop is not None
        self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(10)

    async def _serve(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        async with LocalServer(self._handler, lifetime=3600, max_requests=1_000_000) as server:
            self.url = server.url
            self._ready.set()
            await self._stop.wait()
