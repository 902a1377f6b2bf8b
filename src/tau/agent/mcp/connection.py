"""One live session with an MCP server, owned by a task of its own.

The SDK's client is built on anyio task groups and cancel scopes, which must be entered and
left by the same task. A connection may be opened by one task (``async with server``) and
reopened by another (a tool call after a crash), so neither owns it: a dedicated task enters
the SDK client, hands it over, and leaves it when asked to stop or when the server goes away.

Losing the server is noticed on its own, not only by a failing call: the transport's read
stream is watched, and its end (a stdio server that exited, an HTTP session that broke) marks
the connection lost, so that the next use reconnects instead of failing first.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
from mcp import Client
from mcp.client import Transport
from mcp.types import Implementation, ToolListChangedNotification
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from tau.agent.mcp.transports import StderrTail, StdioTransport, TransportSpec

__all__ = ["Connection", "describe_exception", "leaf_exception"]

_log = logging.getLogger("tau.agent.mcp")

# How long closing waits for the owner task (the SDK bounds a stdio shutdown at about 6 s:
# stdin closed, then SIGTERM, then SIGKILL).
CLOSE_TIMEOUT = 10.0
# How long an error waits for a dead server's last stderr lines to arrive.
STDERR_SETTLE = 0.5


def _client_info() -> Implementation:
    from tau import __version__

    return Implementation(name="tau", version=__version__)


class Connection:
    """A session with one server; :meth:`open` it once, :meth:`close` it once."""

    def __init__(self, spec: TransportSpec, on_tools_changed: Callable[[], None]) -> None:
        self.spec = spec
        self.client: Client | None = None
        self.lost_reason: str | None = None
        """Why the session ended without being closed (None while it lives)."""
        self.stderr = StderrTail() if isinstance(spec, StdioTransport) else None
        self.garbage: str | None = None
        self.listening = False
        """Whether a 2026-era ``subscriptions/listen`` stream reports tool changes."""
        """The first thing the server sent that is not MCP (a stray print to stdout…)."""
        self._on_tools_changed = on_tools_changed
        self._stop = asyncio.Event()
        self._closing = False
        self._task: asyncio.Task[None] | None = None

    @property
    def notifies_tool_changes(self) -> bool:
        """Whether the server tells us when its tools change (else: ask on every use).

        2025-era sessions get ``notifications/tools/list_changed`` unasked; 2026-era ones only
        through a ``subscriptions/listen`` stream, which is open only if the server offers it.
        """
        client = self.client
        if client is None:
            return False
        return self.listening or client.protocol_version not in MODERN_PROTOCOL_VERSIONS

    @property
    def alive(self) -> bool:
        """Whether the session is open and usable."""
        return self.client is not None and self.lost_reason is None and not self._closing

    def mark_lost(self, reason: str) -> None:
        """Record that the server went away; the owner task then winds the session down."""
        if self.lost_reason is None and not self._closing:
            self.lost_reason = reason
        self._stop.set()

    async def open(self, within: float | None) -> Client:
        """Start the session; raises what the SDK raised, or :class:`TimeoutError`."""
        ready: asyncio.Future[Client] = asyncio.get_running_loop().create_future()
        self._task = asyncio.create_task(self._own(ready), name="tau-mcp-connection")
        try:
            client = await asyncio.wait_for(asyncio.shield(ready), within)
        except BaseException:
            self._closing = True
            await self._cancel_owner()
            if ready.done() and not ready.cancelled():
                ready.exception()  # retrieved here: the caller gets its own exception
            raise
        finally:
            if self.stderr is not None:
                # The child holds its own copy of the pipe now (or was never started).
                self.stderr.close_writer()
        self.client = client
        return client

    async def close(self) -> None:
        """End the session and wait (bounded) until the server is let go."""
        self._closing = True
        self._stop.set()
        task = self._task
        if task is not None and not task.done():
            await asyncio.wait([task], timeout=CLOSE_TIMEOUT)
            await self._cancel_owner()

    async def _cancel_owner(self) -> None:
        task = self._task
        if task is not None and not task.done():
            task.cancel()
            await asyncio.wait([task], timeout=CLOSE_TIMEOUT)

    async def stderr_line(self) -> str:
        """The server's last stderr line, once a dead server's output has settled."""
        stderr = self.stderr
        if stderr is None:
            return ""
        if not stderr.finished:
            await asyncio.to_thread(stderr.wait_finished, STDERR_SETTLE)
        return stderr.last_line()

    async def _own(self, ready: asyncio.Future[Client]) -> None:
        try:
            async with Client(
                self._watched(self.spec.open(self.stderr)),
                message_handler=self._on_message,
                client_info=_client_info(),
            ) as client:
                if ready.done():  # the opener gave up waiting
                    return
                ready.set_result(client)
                async with anyio.create_task_group() as group:
                    if _offers_listen(client):
                        group.start_soon(self._listen, client)
                    await self._stop.wait()
                    group.cancel_scope.cancel()
        except BaseException as exc:
            if not ready.done():  # the session never started: the opener reports why
                if isinstance(exc, asyncio.CancelledError):
                    ready.cancel()
                else:
                    ready.set_exception(exc)
            elif not self._closing:
                self.mark_lost(describe_exception(exc))
            if isinstance(exc, asyncio.CancelledError | KeyboardInterrupt | SystemExit):
                raise
        finally:
            if self.lost_reason is None and not self._closing:
                self.lost_reason = "the session ended"

    @asynccontextmanager
    async def _watched(self, transport: Transport) -> AsyncIterator[Any]:
        """``transport``, with the end of its read stream reported as a lost connection."""
        async with transport as (read, write):
            yield _EndWatcher(read, self._read_ended), write

    def _read_ended(self) -> None:
        self.mark_lost("the server closed the connection")

    async def _listen(self, client: Client) -> None:
        try:
            async with client.listen(tools_list_changed=True) as subscription:
                self.listening = True
                self._on_tools_changed()  # a change before the acknowledgment went unseen
                async for _event in subscription:
                    self._on_tools_changed()
        except Exception as exc:  # the listing is then asked for on every use instead
            _log.debug("MCP subscriptions/listen ended: %r", exc)
        finally:
            self.listening = False

    async def _on_message(self, message: object) -> None:
        if isinstance(message, ToolListChangedNotification):
            self._on_tools_changed()
        elif isinstance(message, Exception):
            _log.debug("MCP transport reported: %r", message)
            if self.garbage is None:
                self.garbage = _received(message)


class _EndWatcher:
    """A read stream that reports its end (no extra task or hop: it only wraps iteration)."""

    def __init__(self, stream: Any, on_end: Callable[[], None]) -> None:
        self._stream = stream
        self._on_end = on_end

    def __aiter__(self) -> _EndWatcher:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self._stream.__anext__()
        except StopAsyncIteration:
            self._on_end()
            raise

    async def receive(self) -> Any:
        try:
            return await self._stream.receive()
        except anyio.EndOfStream:
            self._on_end()
            raise

    async def aclose(self) -> None:
        await self._stream.aclose()

    async def __aenter__(self) -> _EndWatcher:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)  # e.g. the HTTP stream's per-message context


def _offers_listen(client: Client) -> bool:
    tools = client.server_capabilities.tools
    modern = client.protocol_version in MODERN_PROTOCOL_VERSIONS
    return modern and tools is not None and tools.list_changed is True


def _received(exc: Exception) -> str:
    """What an unparsable message was, shortened: the input pydantic rejected, else the error."""
    errors = getattr(exc, "errors", None)
    if callable(errors):
        with contextlib.suppress(Exception):
            shown = repr(errors()[0]["input"])
            return shown if len(shown) <= 80 else shown[:79] + "…"
    return describe_exception(exc)


def leaf_exception(exc: BaseException) -> BaseException:
    """The first real exception inside (possibly nested) exception groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def describe_exception(exc: BaseException) -> str:
    """One line for a failure: an OS error's reason and file, else the exception's text."""
    exc = leaf_exception(exc)
    if isinstance(exc, OSError) and exc.strerror:
        target = f": {exc.filename}" if exc.filename else ""
        return f"{exc.strerror}{target}"
    text = str(exc).strip()
    return text or type(exc).__name__
