"""Starting the fixture MCP server for tests: over stdio, or over HTTP in a subprocess."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from tau.agent.mcp import MCPServer

FIXTURE = Path(__file__).resolve().parent / "fixture_server.py"
START_TIMEOUT = 20.0


def stdio_server(*args: str, name: str = "fixture", **options: Any) -> MCPServer:
    """The fixture server over stdio (not yet connected)."""
    return MCPServer.stdio(sys.executable, [str(FIXTURE), *args], name=name, **options)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _wait_for_port(port: int, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the HTTP fixture server exited with {process.returncode}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
            return
        time.sleep(0.05)
    raise RuntimeError(f"the HTTP fixture server did not listen on {port} in {START_TIMEOUT} s")


@contextlib.contextmanager
def http_fixture(
    *args: str, transport: str = "--http"
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """The fixture server over streamable HTTP (or ``--sse``) on 127.0.0.1: its URL, process."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, str(FIXTURE), transport, str(port), *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _wait_for_port(port, process)
        path = "/mcp" if transport == "--http" else "/sse"
        yield f"http://127.0.0.1:{port}{path}", process
    finally:
        stop(process)


def stop(process: subprocess.Popen[bytes]) -> None:
    """Stop a fixture server process (politely, then not)."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie counts as gone: it has exited and only waits to be reaped.
    with contextlib.suppress(OSError):
        stat = Path(f"/proc/{pid}/stat").read_text()
        return stat.rsplit(")", 1)[1].split()[0] != "Z"
    return True


def _read(path: Path) -> str:
    return path.read_text() if path.exists() else ""


async def wait_for_file(path: Path, limit: float = 20.0) -> str:
    """The text of ``path`` once it exists and is not empty (polling; fails after ``limit`` s)."""
    deadline = time.monotonic() + limit
    while not (content := _read(path)):
        assert time.monotonic() < deadline, f"{path} never appeared"
        await asyncio.sleep(0.02)
    return content


async def wait_until(predicate: Callable[[], bool], limit: float = 5.0) -> None:
    """Wait (polling) until ``predicate()`` holds, failing after ``limit`` seconds."""
    deadline = time.monotonic() + limit
    while not predicate():
        assert time.monotonic() < deadline, "condition never became true"
        await asyncio.sleep(0.02)
