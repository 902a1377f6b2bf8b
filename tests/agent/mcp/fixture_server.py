"""A real MCP server for the tests (FastMCP, now ``MCPServer`` in the ``mcp`` package).

    python fixture_server.py [--http PORT | --sse PORT] [--name NAME] [--legacy] [--no-listen]
                             [--crash-on-start | --hang-on-start]

``--no-listen`` serves no ``subscriptions/listen`` (2026-era tool changes go unannounced).
``FIXTURE_PID_FILE`` in the environment names a file to write the process id to.
``--legacy`` answers only the 2025-era handshake (no ``server/discover``), as most servers in
the wild still do. ``--crash-on-start`` writes to stderr and exits; ``--hang-on-start`` never
answers. Tools that need a file to report to (cancellation markers) take its path.
"""

from __future__ import annotations

import argparse
import base64
import os
import sys
import time
from pathlib import Path
from typing import Any

import anyio
from mcp import types
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.prompts.base import AssistantMessage, UserMessage
from mcp.server.mcpserver.utilities.types import Image

# A 1x1 PNG.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


def _write(path: str, text: str) -> None:
    Path(path).write_text(text)


def build(name: str, *, listen: bool = True) -> MCPServer[Any]:
    app: MCPServer[Any] = MCPServer(
        name,
        instructions=f"the {name} test server",
        log_level="WARNING",
        subscriptions=None if listen else False,
    )

    @app.tool(title="Echo a text")
    def echo(text: str) -> str:
        """Return the text, prefixed with the server's name."""
        return f"{name}: {text}"

    @app.tool()
    def read(path: str) -> str:
        """Pretend to read a file (its name clashes with tau's built-in read tool)."""
        return f"{name} read {path}"

    @app.tool()
    def header(key: str, ctx: Context) -> str:
        """The value of HTTP request header `key` (empty over stdio)."""
        return (ctx.headers or {}).get(key.lower(), "")

    @app.tool()
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @app.tool()
    def weather(city: str) -> dict[str, Any]:
        """Structured weather for a city."""
        return {"city": city, "temperature": 22, "sky": "sunny"}

    @app.tool()
    def picture() -> Image:
        """A tiny image."""
        return Image(data=PNG, format="png")

    @app.tool()
    def mixed() -> list[types.ContentBlock]:
        """One block of every other kind."""
        return [
            types.AudioContent(
                data=base64.b64encode(b"RIFF0000WAVE").decode(), mime_type="audio/wav"
            ),
            types.EmbeddedResource(
                resource=types.TextResourceContents(
                    uri="note://inline", mime_type="text/plain", text="inline note"
                )
            ),
            types.EmbeddedResource(
                resource=types.BlobResourceContents(
                    uri="blob://data", mime_type="application/octet-stream", blob="AAAA"
                )
            ),
            types.ResourceLink(name="readme", uri="file:///readme.md", mime_type="text/markdown"),
        ]

    @app.tool()
    def fail(message: str) -> str:
        """Always fails, with the given message."""
        raise ToolError(message)

    @app.tool()
    async def count(steps: int, ctx: Context) -> str:
        """Count up, reporting progress at each step."""
        for step in range(1, steps + 1):
            await ctx.report_progress(step, steps, f"step {step}")
            await anyio.sleep(0.01)
        return f"counted to {steps}"

    @app.tool()
    async def slow(seconds: float, marker: str, ctx: Context) -> str:
        """Sleep, writing `marker` if cancelled (and `marker`.started when it starts)."""
        _write(marker + ".started", str(os.getpid()))
        try:
            await ctx.report_progress(0, seconds, "sleeping")
            await anyio.sleep(seconds)
        except anyio.get_cancelled_exc_class():
            _write(marker, "cancelled")  # synchronous: no await in a cancelled scope
            raise
        return "slept"

    @app.tool()
    async def grow(tool: str, ctx: Context) -> str:
        """Add a tool called `tool` and tell the client that the tool list changed."""

        def added(text: str) -> str:
            return f"{tool} says {text}"

        app.add_tool(added, name=tool, description=f"Added at run time ({tool}).")
        await ctx.notify_tools_changed()  # 2026-era sessions: subscriptions/listen
        if ctx.protocol_version is not None and ctx.protocol_version < "2026":
            await ctx.session.send_tool_list_changed()  # 2025-era sessions
        return f"added {tool}"

    @app.resource("note://hello", mime_type="text/plain")
    def hello() -> str:
        """A greeting."""
        return "hello from a resource"

    @app.resource("img://dot", mime_type="image/png")
    def dot() -> bytes:
        """A tiny image."""
        return PNG

    @app.prompt()
    def review(code: str) -> list[Any]:
        """Ask for a code review."""
        return [UserMessage(f"Review this code:\n{code}"), AssistantMessage("Looking at it.")]

    return app


async def _serve_legacy_stdio(app: MCPServer[Any]) -> None:
    """Serve stdio as a 2025-era server would: ``server/discover`` is an unknown method."""
    from mcp.server.stdio import stdio_server
    from mcp.shared.message import SessionMessage

    server = app._lowlevel_server
    async with stdio_server() as (read, write):
        send, receive = anyio.create_memory_object_stream[Any](0)

        async def filter_discover() -> None:
            async with send:
                async for item in read:
                    message = getattr(item, "message", None)
                    if (
                        isinstance(message, types.JSONRPCRequest)
                        and message.method == "server/discover"
                    ):
                        error = types.ErrorData(
                            code=types.METHOD_NOT_FOUND, message="Method not found"
                        )
                        reply = types.JSONRPCError(jsonrpc="2.0", id=message.id, error=error)
                        await write.send(SessionMessage(reply))
                        continue
                    await send.send(item)

        async with anyio.create_task_group() as group:
            group.start_soon(filter_discover)
            await server.run(receive, write, server.create_initialization_options())
            group.cancel_scope.cancel()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", type=int)
    parser.add_argument("--sse", type=int)
    parser.add_argument("--name", default="fixture")
    parser.add_argument("--legacy", action="store_true")
    parser.add_argument("--no-listen", action="store_true")
    parser.add_argument("--crash-on-start", action="store_true")
    parser.add_argument("--hang-on-start", action="store_true")
    args = parser.parse_args()
    pid_file = os.environ.get("FIXTURE_PID_FILE")
    if pid_file:
        Path(pid_file).write_text(str(os.getpid()))
    if args.crash_on_start:
        print("starting the fixture server", file=sys.stderr)
        print("RuntimeError: missing FIXTURE_TOKEN", file=sys.stderr, flush=True)
        sys.exit(3)
    if args.hang_on_start:
        time.sleep(3600)
    app = build(args.name, listen=not args.no_listen)
    if args.legacy:
        anyio.run(_serve_legacy_stdio, app)
    elif args.http:
        app.run("streamable-http", host="127.0.0.1", port=args.http)
    elif args.sse:
        app.run("sse", host="127.0.0.1", port=args.sse)
    else:
        app.run()


if __name__ == "__main__":
    main()
