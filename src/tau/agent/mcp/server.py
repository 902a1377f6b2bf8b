""":class:`MCPServer`: a connection to one MCP server, whose tools an agent can run.

::

    async with MCPServer.stdio("python", ["server.py"]) as files:
        agent = Agent(model=model, tool_sources=[files])   # tools re-listed every turn
        await agent.prompt("…")

The connection lives between ``__aenter__`` and ``__aexit__``. A server that goes away (its
process exits, its HTTP session breaks) is marked disconnected: the call in flight fails with
a message saying so, and the next use connects again, or fails saying why it cannot. Tool
lists are re-read when the server says they changed (``notifications/tools/list_changed``, or
on 2026-era sessions the same through a ``subscriptions/listen`` stream); from a server that
offers neither, the listing is asked for on every use (the SDK's response cache honours the
server's caching hints).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from types import TracebackType
from typing import Any, Literal, TypeAlias, TypedDict, TypeVar, Unpack

from mcp import Client, MCPError
from mcp import types as mcp_types
from mcp.types import CONNECTION_CLOSED, REQUEST_TIMEOUT

from tau.agent.mcp.connection import Connection, describe_exception, leaf_exception
from tau.agent.mcp.content import (
    error_text,
    progress_result,
    resource_contents,
    tool_result,
    user_content,
)
from tau.agent.mcp.tools import MCPTool, MCPToolset
from tau.agent.mcp.transports import HttpTransport, StdioTransport, TransportSpec
from tau.agent.tools import AgentToolResult, ToolUpdateCallback
from tau.ai import (
    AbortedError,
    AbortSignal,
    AssistantMessage,
    ImageContent,
    TextContent,
    UserMessage,
)

__all__ = ["MCPServer", "MCPServerError", "MCPStatus", "MCPToolError", "ServerOptions"]

MCPStatus: TypeAlias = Literal[
    "not connected", "connecting", "connected", "disconnected", "failed", "closed"
]
"""Where a server stands: ``disconnected`` means it went away and the next use reconnects."""

_Item = TypeVar("_Item")
_Fetch: TypeAlias = Callable[[Client, str | None], Awaitable[tuple[Sequence[_Item], str | None]]]
"""``(client, cursor) -> (items, next_cursor)``: one page of a listing."""

DEFAULT_TIMEOUT = 300.0
DEFAULT_CONNECT_TIMEOUT = 30.0
# A server that pages its listings forever must not hang a turn.
MAX_PAGES = 100


class ServerOptions(TypedDict, total=False):
    """The keyword options of :meth:`MCPServer.stdio`, :meth:`~MCPServer.http` and
    :meth:`~MCPServer.sse` (see :class:`MCPServer`)."""

    name: str | None
    timeout: float | None
    connect_timeout: float | None


class MCPServerError(RuntimeError):
    """A server that cannot be reached, went away, timed out, or refused a request."""


class MCPToolError(RuntimeError):
    """A tool call the server answered with ``isError``; the message is the tool's text."""


class MCPServer:
    """One MCP server. Build it with :meth:`stdio`, :meth:`http` or :meth:`sse`.

    ``timeout`` bounds every request (a tool call included; None: no limit, though an abort
    still ends a call at once); ``connect_timeout`` bounds starting the server and the MCP
    handshake. ``name`` is used in messages and by the ``tau`` command.
    """

    def __init__(
        self,
        transport: TransportSpec,
        *,
        name: str | None = None,
        timeout: float | None = DEFAULT_TIMEOUT,
        connect_timeout: float | None = DEFAULT_CONNECT_TIMEOUT,
    ) -> None:
        self.transport = transport
        self.name = name or transport.default_name()
        self.timeout = timeout
        self.connect_timeout = connect_timeout
        self._conn: Connection | None = None
        self._status: MCPStatus = "not connected"
        self._error: str | None = None
        self._stderr = ""
        self._opening: asyncio.Task[Client] | None = None
        self._listing: tuple[mcp_types.Tool, ...] | None = None
        self._changes = 0
        self._seen_changes = 0
        self._default_toolset = MCPToolset(self)

    # ----------------------------------------------------------------------- construction

    @classmethod
    def stdio(
        cls,
        command: str,
        args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        **options: Unpack[ServerOptions],
    ) -> MCPServer:
        """A server run as a subprocess: ``command args…``, speaking MCP on stdin/stdout.

        The process gets a minimal environment (``PATH``, ``HOME`` and the like) plus ``env``,
        as the MCP SDK does: pass API keys the server needs in ``env``. Its stderr is kept
        (the last few KB, see :attr:`stderr`) and quoted when it fails. ``options``: ``name``,
        ``timeout``, ``connect_timeout``.
        """
        if isinstance(args, str):
            raise TypeError("args must be a sequence of strings, not one string")
        spec = StdioTransport(command, tuple(args), dict(env) if env else None, cwd)
        return cls(spec, **options)

    @classmethod
    def http(
        cls, url: str, headers: Mapping[str, str] | None = None, **options: Unpack[ServerOptions]
    ) -> MCPServer:
        """A server at ``url`` over streamable HTTP (``headers`` on every request: auth…)."""
        return cls(HttpTransport(url, dict(headers or {})), **options)

    @classmethod
    def sse(
        cls, url: str, headers: Mapping[str, str] | None = None, **options: Unpack[ServerOptions]
    ) -> MCPServer:
        """A server at ``url`` over the older HTTP+SSE transport (deprecated by MCP)."""
        return cls(HttpTransport(url, dict(headers or {}), sse=True), **options)

    def __repr__(self) -> str:
        return f"MCPServer({self.name!r}, {self.transport.describe()!r}, {self._status!r})"

    # ----------------------------------------------------------------------- state

    @property
    def status(self) -> MCPStatus:
        """Where the server stands now."""
        conn = self._conn
        if self._status == "connected" and conn is not None and not conn.alive:
            return "disconnected"
        return self._status

    @property
    def error(self) -> str | None:
        """Why the server is not connected (after a failure or a disconnection), else None."""
        conn = self._conn
        if self.status == "disconnected" and conn is not None:
            return self._failure(f"the server went away ({conn.lost_reason})")
        return self._error

    @property
    def stderr(self) -> str:
        """The last few KB the server process wrote to stderr (stdio servers only)."""
        conn = self._conn
        if conn is not None and conn.stderr is not None:
            return conn.stderr.text()
        return self._stderr

    @property
    def server_info(self) -> mcp_types.Implementation | None:
        """The server's name and version from the handshake (None before it, or if unsent)."""
        conn = self._conn
        return conn.client.server_info if conn is not None and conn.client else None

    @property
    def protocol_version(self) -> str | None:
        """The MCP revision the session speaks (``2025-11-25``, ``2026-07-28``…), else None."""
        conn = self._conn
        return conn.client.protocol_version if conn is not None and conn.client else None

    @property
    def notifies_tool_changes(self) -> bool:
        """Whether the server says when its tools change; if not, they are listed on every use.

        True for 2025-era sessions (``notifications/tools/list_changed``) and for 2026-era ones
        with a ``subscriptions/listen`` stream open (when the server offers one).
        """
        conn = self._conn
        return conn is not None and conn.alive and conn.notifies_tool_changes

    @property
    def instructions(self) -> str | None:
        """The usage instructions the server sent in the handshake, if any."""
        conn = self._conn
        return conn.client.instructions if conn is not None and conn.client else None

    def _failure(self, what: str, stderr_line: str = "") -> str:
        text = f"MCP server {self.name!r} ({self.transport.describe()}): {what}"
        return f"{text}; stderr: {stderr_line}" if stderr_line else text

    # ----------------------------------------------------------------------- lifetime

    async def __aenter__(self) -> MCPServer:
        await self.connect()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.close()

    async def connect(self) -> None:
        """Start the server (or connect to it) and do the MCP handshake.

        Raises :class:`MCPServerError` saying why it failed (with the server's last stderr
        line). Connecting again after :meth:`close` is allowed.
        """
        await self._client(connect=True)

    async def close(self) -> None:
        """End the session and stop a stdio server (bounded: at most a few seconds)."""
        opening = self._opening
        if opening is not None and not opening.done():
            opening.cancel()
            await asyncio.wait([opening])
        conn, self._conn = self._conn, None
        if conn is not None:
            await conn.close()
            if conn.stderr is not None:
                self._stderr = conn.stderr.text()
        self._status = "closed"

    async def _client(self, *, connect: bool = False) -> Client:
        """The live SDK client, reconnecting once if the server went away."""
        conn = self._conn
        if conn is not None and conn.alive and conn.client is not None:
            return conn.client
        if not connect and self._status in ("not connected", "closed"):
            raise MCPServerError(
                f"MCP server {self.name!r} is not connected: use `async with server:` "
                "(or `await server.connect()`) first"
            )
        # Concurrent callers share one attempt; one caller's cancellation does not stop it.
        if self._opening is None or self._opening.done():
            self._opening = asyncio.create_task(self._open())
            self._opening.add_done_callback(_consume)
        return await asyncio.shield(self._opening)

    async def _open(self) -> Client:
        old, self._conn = self._conn, None
        if old is not None:
            await old.close()
        self._status = "connecting"
        conn = Connection(self.transport, self._tools_changed)
        try:
            client = await conn.open(self.connect_timeout)
        except Exception as error:
            self._status = "failed"
            exc = leaf_exception(error)
            if isinstance(exc, TimeoutError):
                what = f"no MCP handshake within {self.connect_timeout:g} s"
            elif isinstance(exc, MCPError) and exc.code == CONNECTION_CLOSED:
                what = "the server exited (or closed the connection) during startup"
            else:
                what = f"cannot connect: {describe_exception(exc)}"
            if conn.garbage is not None:
                what += f"; it sent something that is not MCP: {conn.garbage}"
            self._error = self._failure(what, await conn.stderr_line())
            if conn.stderr is not None:
                self._stderr = conn.stderr.text()
            raise MCPServerError(self._error) from None
        self._conn = conn
        self._status = "connected"
        self._error = None
        self._changes += 1  # a new session may offer other tools
        return client

    def _tools_changed(self) -> None:
        self._changes += 1

    # ----------------------------------------------------------------------- requests

    async def _request_failed(self, exc: BaseException, what: str) -> MCPServerError:
        """The error for a failed request; marks the server disconnected if it went away."""
        conn = self._conn
        exc = leaf_exception(exc)
        if isinstance(exc, MCPError) and exc.code == REQUEST_TIMEOUT:
            return MCPServerError(
                self._failure(f"{what} got no answer within {self.timeout:g} s (cancelled)")
            )
        gone = isinstance(exc, MCPError) and exc.code == CONNECTION_CLOSED
        if conn is not None and (gone or not conn.alive):
            conn.mark_lost(describe_exception(exc))
            line = await conn.stderr_line()
            return MCPServerError(self._failure(f"the server went away during {what}", line))
        return MCPServerError(self._failure(f"{what} failed: {describe_exception(exc)}"))

    async def _paged(self, what: str, fetch: _Fetch[_Item]) -> list[_Item]:
        """Every page of a listing (at most :data:`MAX_PAGES`: a server paging forever stops)."""
        client = await self._client()
        items: list[_Item] = []
        cursor: str | None = None
        try:
            for _ in range(MAX_PAGES):
                page, cursor = await fetch(client, cursor)
                items += page
                if cursor is None:
                    break
        except Exception as exc:
            raise await self._request_failed(exc, what) from None
        return items

    async def list_tool_specs(self) -> tuple[mcp_types.Tool, ...]:
        """The server's tools as it lists them (the same tuple object while unchanged).

        A server that went away is reconnected; if that fails, the last listing is kept (its
        tools then fail with the reason when called) and only a server never listed raises.
        """
        try:
            client = await self._client()
            if client.server_capabilities.tools is None:
                self._listing = ()  # a server of resources or prompts only
                return self._listing
            notified = self.notifies_tool_changes
            if self._listing is not None and notified and self._changes == self._seen_changes:
                return self._listing
            changes = self._changes

            async def fetch(
                client: Client, cursor: str | None
            ) -> tuple[list[mcp_types.Tool], str | None]:
                result = await client.list_tools(cursor=cursor)
                return result.tools, result.next_cursor

            listing = tuple(await self._paged("listing its tools", fetch))
        except MCPServerError:
            if self._listing is None or self._status in ("not connected", "closed"):
                raise
            return self._listing
        self._seen_changes = changes
        if listing != self._listing:
            self._listing = listing
        assert self._listing is not None
        return self._listing

    async def tools(
        self,
        prefix: str | None = None,
        include: Collection[str] | None = None,
        exclude: Collection[str] | None = None,
    ) -> list[MCPTool]:
        """The server's tools as agent tools, optionally prefixed (``prefix_name``) and filtered.

        For tools that follow the server's changes from turn to turn, give the server (or a
        :meth:`toolset`) to ``Agent(tool_sources=[...])`` instead of these to ``tools=``.
        """
        if prefix is None and include is None and exclude is None:
            return await self._default_toolset.tools()
        return await MCPToolset(self, prefix, include, exclude).tools()

    def toolset(
        self,
        prefix: str | None = None,
        include: Collection[str] | None = None,
        exclude: Collection[str] | None = None,
    ) -> MCPToolset:
        """A prefixed or filtered view of the tools, to use as a tool source."""
        return MCPToolset(self, prefix, include, exclude)

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        signal: AbortSignal | None = None,
        on_update: ToolUpdateCallback | None = None,
    ) -> AgentToolResult:
        """Call tool ``name`` (its name on the server) and map its result to tau content.

        Progress notifications go to ``on_update`` as partial results. ``signal`` aborting
        sends the server an MCP cancellation and raises :class:`~tau.ai.AbortedError` at
        once. Raises :class:`MCPToolError` for an ``isError`` result and
        :class:`MCPServerError` when the server cannot answer (it went away, timed out…).
        """
        client = await self._client()
        on_progress = None
        if on_update is not None:
            report = on_update

            async def on_progress(
                progress: float, total: float | None, message: str | None
            ) -> None:
                report(progress_result(progress, total, message))

        call = asyncio.create_task(
            client.call_tool(
                name,
                dict(arguments or {}),
                read_timeout_seconds=self.timeout,
                progress_callback=on_progress,
            )
        )
        remove = _cancel_on_abort(signal, call)
        try:
            await asyncio.wait([call])
        except asyncio.CancelledError:
            call.cancel()  # the MCP cancellation goes out as the task unwinds
            await asyncio.wait([call], timeout=1.0)
            raise
        finally:
            remove()
        if call.cancelled():
            reason = signal.reason if signal is not None else None
            raise AbortedError(reason or f"the call to MCP tool {name!r} was aborted")
        exc = call.exception()
        if exc is not None:
            raise await self._request_failed(exc, f"the call to tool {name!r}") from None
        result, is_error = tool_result(call.result())
        if is_error:
            raise MCPToolError(error_text(result.content))
        return result

    # ----------------------------------------------------------------------- resources, prompts

    async def list_resources(self) -> list[mcp_types.Resource]:
        """The resources the server offers (every page)."""

        async def fetch(
            client: Client, cursor: str | None
        ) -> tuple[list[mcp_types.Resource], str | None]:
            result = await client.list_resources(cursor=cursor)
            return result.resources, result.next_cursor

        return await self._paged("listing its resources", fetch)

    async def list_resource_templates(self) -> list[mcp_types.ResourceTemplate]:
        """The resource URI templates the server offers (every page)."""

        async def fetch(
            client: Client, cursor: str | None
        ) -> tuple[list[mcp_types.ResourceTemplate], str | None]:
            result = await client.list_resource_templates(cursor=cursor)
            return result.resource_templates, result.next_cursor

        return await self._paged("listing its resource templates", fetch)

    async def read_resource(self, uri: str) -> list[TextContent | ImageContent]:
        """Resource ``uri`` as content blocks, ready to put in a message.

        Text stays text (headed by its URI), images are images, other binary content becomes
        a note naming its type and size.
        """
        client = await self._client()
        try:
            result = await client.read_resource(uri)
        except Exception as exc:
            raise await self._request_failed(exc, f"reading resource {uri!r}") from None
        return resource_contents(result.contents)

    async def list_prompts(self) -> list[mcp_types.Prompt]:
        """The prompt templates the server offers (every page)."""

        async def fetch(
            client: Client, cursor: str | None
        ) -> tuple[list[mcp_types.Prompt], str | None]:
            result = await client.list_prompts(cursor=cursor)
            return result.prompts, result.next_cursor

        return await self._paged("listing its prompts", fetch)

    async def get_prompt(
        self, name: str, arguments: Mapping[str, str] | None = None
    ) -> list[UserMessage | AssistantMessage]:
        """Prompt ``name`` filled with ``arguments``, as messages for a transcript.

        Assistant messages are marked as coming from this server (``provider="mcp"``).
        """
        client = await self._client()
        try:
            result = await client.get_prompt(name, dict(arguments) if arguments else None)
        except Exception as exc:
            raise await self._request_failed(exc, f"getting prompt {name!r}") from None
        messages: list[UserMessage | AssistantMessage] = []
        for message in result.messages:
            block = user_content(message.content)
            if message.role == "assistant":
                if isinstance(block, ImageContent):  # an assistant turn cannot hold an image
                    block = TextContent(f"[image: {block.mime_type}]")
                messages.append(
                    AssistantMessage([block], api="mcp", provider="mcp", model=self.name)
                )
            else:
                messages.append(UserMessage([block]))
        return messages


def _consume(task: asyncio.Task[Any]) -> None:
    # Every caller may have been cancelled away from a shared attempt: never leave its
    # exception unretrieved.
    if not task.cancelled():
        task.exception()


def _cancel_on_abort(signal: AbortSignal | None, task: asyncio.Task[Any]) -> Any:
    if signal is None:
        return lambda: None
    loop = asyncio.get_running_loop()

    def on_abort() -> None:
        if not loop.is_closed():
            loop.call_soon_threadsafe(task.cancel)

    return signal.add_callback(on_abort)
