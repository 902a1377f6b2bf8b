"""How tau reaches an MCP server: a subprocess over stdio, streamable HTTP, or the older SSE.

Each transport opens as the SDK's stream pair. A stdio server's stderr goes into a
:class:`StderrTail`, so that an error can quote what the server said before it failed.
"""

from __future__ import annotations

import os
import re
import shlex
import threading
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO, TypeAlias
from urllib.parse import urlsplit

from mcp.client import Transport
from mcp.client.stdio import StdioServerParameters, stdio_client

from tau.ai import redact_secrets

__all__ = ["HttpTransport", "StderrTail", "StdioTransport", "TransportSpec"]

# Seconds of silence an HTTP response stream may have before the SDK gives up on it (the
# per-call timeout is separate and usually shorter), and to connect or send.
HTTP_READ_TIMEOUT = 300.0
HTTP_TIMEOUT = 30.0


class StderrTail:
    """The last bytes a server process wrote to stderr, read by a daemon thread.

    Only a bounded tail is kept, however much the server logs. ``writer`` is the file handed
    to the child; :meth:`close_writer` closes the parent's copy once the child holds its own,
    so that the reader sees the end of the stream when the server exits.
    """

    LIMIT = 8192

    def __init__(self) -> None:
        read_fd, write_fd = os.pipe()
        self.writer: TextIO = os.fdopen(write_fd, "w", encoding="utf-8", errors="replace")
        self._data = bytearray()
        self._lock = threading.Lock()
        self._thread = threading.Thread(
            target=self._pump, args=(read_fd,), name="tau-mcp-stderr", daemon=True
        )
        self._thread.start()

    def _pump(self, fd: int) -> None:
        with os.fdopen(fd, "rb", buffering=0) as pipe:
            while chunk := pipe.read(4096):
                with self._lock:
                    self._data += chunk
                    if len(self._data) > 2 * self.LIMIT:
                        del self._data[: -self.LIMIT]

    def close_writer(self) -> None:
        """Drop the parent's end of the pipe (idempotent)."""
        self.writer.close()

    @property
    def finished(self) -> bool:
        """Whether every process holding the pipe has closed it."""
        return not self._thread.is_alive()

    def wait_finished(self, limit: float) -> None:
        """Block until :attr:`finished`, for at most ``limit`` seconds."""
        self._thread.join(limit)

    def text(self) -> str:
        """What was kept, decoded."""
        with self._lock:
            data = bytes(self._data[-self.LIMIT :])
        return data.decode("utf-8", errors="replace")

    def last_line(self, limit: int = 300) -> str:
        """The last non-empty line (a traceback's is the exception), shortened to ``limit``."""
        lines = [line.strip() for line in self.text().splitlines() if line.strip()]
        if not lines:
            return ""
        line = lines[-1]
        return line if len(line) <= limit else line[: limit - 1] + "…"


_MASK = "***"
# A flag or an assignment whose name says it carries a credential.
_SECRET_NAME = re.compile(
    r"(?i)^-{0,2}[\w.-]*(?:key|token|secret|passw(?:or)?d|auth|credentials?|bearer)[\w.-]*$"
)
_MIN_ENV_SECRET = 6


def _masked_command(words: list[str], env: Mapping[str, str]) -> str:
    """``words`` as a shell line, every secret-looking word (or value) shown as ``***``."""
    hidden = [v for v in env.values() if len(v) >= _MIN_ENV_SECRET]
    out: list[str] = []
    mask_next = False
    for index, word in enumerate(words):
        if mask_next:
            out.append(_MASK)
            mask_next = False
            continue
        name, equals, value = word.partition("=")
        if index > 0 and _SECRET_NAME.match(name):
            if equals:
                out.append(f"{shlex.quote(name + '=')}{_MASK}" if value else shlex.quote(word))
                continue
            if name.startswith("-"):
                mask_next = True  # the flag's value is the next word
        for value in hidden:
            word = word.replace(value, _MASK)
        cleaned = redact_secrets(word)
        out.append(_MASK if cleaned != word else shlex.quote(word))
    return " ".join(out)


@dataclass(frozen=True, slots=True)
class StdioTransport:
    """A server run as a subprocess, speaking JSON-RPC lines on its stdin and stdout."""

    command: str
    args: tuple[str, ...] = ()
    env: Mapping[str, str] | None = None
    cwd: str | None = None

    def describe(self) -> str:
        """The command line, on one line and shortened for messages, with secret-looking
        arguments (``--api-key VALUE``, ``--token=VALUE``, ``PASSWORD=VALUE``, key shapes,
        known keys) and the values of the server's environment masked."""
        line = " ".join(_masked_command([self.command, *self.args], self.env or {}).split())
        return line if len(line) <= 160 else line[:159] + "…"

    def default_name(self) -> str:
        """A name for messages when none is given: the program's."""
        return Path(self.command).name or "stdio"

    def open(self, stderr: StderrTail | None) -> Transport:
        """The SDK transport (spawns the process when entered)."""
        params = StdioServerParameters(
            command=self.command,
            args=list(self.args),
            env=dict(self.env) if self.env is not None else None,
            cwd=self.cwd,
        )
        if stderr is None:
            return stdio_client(params)
        return stdio_client(params, errlog=stderr.writer)


@dataclass(frozen=True, slots=True)
class HttpTransport:
    """A server at a URL: streamable HTTP, or the older HTTP+SSE transport when ``sse``."""

    url: str
    headers: Mapping[str, str] = field(default_factory=dict)
    sse: bool = False

    def describe(self) -> str:
        """The URL (without any credentials in it)."""
        parts = urlsplit(self.url)
        host = parts.hostname or ""
        if parts.port is not None:
            host = f"{host}:{parts.port}"
        kind = "sse" if self.sse else "http"
        return f"{kind}: {parts.scheme}://{host}{parts.path}"

    def default_name(self) -> str:
        """A name for messages when none is given: the host."""
        return urlsplit(self.url).hostname or "http"

    def open(self, stderr: StderrTail | None) -> Transport:
        """The SDK transport (connects when entered)."""
        del stderr  # a remote server's stderr is not ours to read
        return self._open_sse() if self.sse else self._open_http()

    @asynccontextmanager
    async def _open_http(self) -> AsyncIterator[Any]:
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        timeout = httpx2.Timeout(HTTP_TIMEOUT, read=HTTP_READ_TIMEOUT)
        async with (
            httpx2.AsyncClient(headers=dict(self.headers), timeout=timeout) as client,
            streamable_http_client(self.url, http_client=client) as streams,
        ):
            yield streams

    @asynccontextmanager
    async def _open_sse(self) -> AsyncIterator[Any]:
        from mcp.client.sse import sse_client

        async with sse_client(
            self.url,
            headers=dict(self.headers),
            timeout=HTTP_TIMEOUT,
            sse_read_timeout=HTTP_READ_TIMEOUT,
        ) as streams:
            yield streams


TransportSpec: TypeAlias = StdioTransport | HttpTransport
