"""``bash``: run a shell command in the working directory, streaming its output.

stdout and stderr are merged; the last 50 KB / 2,000 lines are kept (earlier output is counted,
not stored, so memory stays bounded and nothing is left on disk). A non-zero exit is an error
result, so the model sees that the command failed.

The shell runs in a session of its own. The call ends when the shell exits: its output is read
to the end, and if children still hold the output open after a short moment (``sleep 1000 &``),
the whole process group is killed rather than waited for. A timeout or an abort kills the group
at once, whether or not the shell itself has exited. A background job that redirects its output
away from the pipe is left running; a process that starts a session of its own escapes the group.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal as signals
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tau.agent import AgentTool, AgentToolResult, ToolUpdateCallback
from tau.ai import AbortSignal, TextContent
from tau.cli.tools.paths import Workspace
from tau.cli.tools.truncate import MAX_BYTES, format_size, truncate_tail

_SCHEMA = {
    "type": "object",
    "properties": {
        "command": {"type": "string", "description": "Bash command to execute"},
        "timeout": {"type": "number", "description": "Timeout in seconds (optional)"},
    },
    "required": ["command"],
}

_ROLLING_BYTES = 100 * 1024
_DRAIN_GRACE = 0.2
"""Seconds the output may stay open after the shell exits before the group is killed."""
_CLOSE_WAIT = 2.0
"""Seconds to wait for killed processes to exit and release the output."""


class _Output:
    """The tail of the output in memory, and counts of all of it."""

    def __init__(self) -> None:
        self.chunks: deque[bytes] = deque()
        self.size = 0
        self.total = 0
        self.lines = 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        self.lines += chunk.count(b"\n")
        self.chunks.append(chunk)
        self.size += len(chunk)
        # Drop old chunks only while at least 100 KB stays: the 50 KB shown is always whole lines.
        while self.size - len(self.chunks[0]) >= _ROLLING_BYTES:
            self.size -= len(self.chunks.popleft())

    def text(self) -> str:
        return b"".join(self.chunks).decode("utf-8", errors="replace")


class _Pipe(asyncio.Protocol):
    """The read end of the output pipe; ``closed`` resolves once no process holds it open."""

    def __init__(self, on_data: Callable[[bytes], None]) -> None:
        self.on_data = on_data
        self.closed: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def data_received(self, data: bytes) -> None:
        self.on_data(data)

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.closed.done():
            self.closed.set_result(None)


def _shell() -> list[str]:
    for candidate in ("/bin/bash", shutil.which("bash"), shutil.which("sh")):
        if candidate and Path(candidate).exists():
            return [candidate, "-c"]
    return ["sh", "-c"]


def _render(output: _Output) -> str:
    # A final newline ends the last line; it does not start another.
    full = output.text()
    ends_with_newline = full.endswith("\n")
    full = full.removesuffix("\n")
    cut = truncate_tail(full)
    text = cut.text or "(no output)"
    if not cut.truncated:
        return text
    # Memory holds only the tail: number the lines against everything the command printed.
    total = output.lines + (0 if ends_with_newline else 1)
    first = total - (cut.last_line - cut.first_line)
    if cut.first_line == cut.last_line and cut.by == "bytes":
        line_size = format_size(len(full.rsplit("\n", 1)[-1].encode("utf-8")))
        notice = (
            f"[Showing last {format_size(len(cut.text.encode('utf-8')))} of line "
            f"{total} (line is {line_size}).]"
        )
    else:
        limit = f" ({format_size(MAX_BYTES)} limit)" if cut.by == "bytes" else ""
        notice = (
            f"[Showing lines {first}-{total} of {total}{limit}. Earlier output is not kept: "
            "redirect it to a file to see all of it.]"
        )
    return f"{text}\n\n{notice}"


def _kill_group(pid: int) -> None:
    # The group outlives its leader while members remain, and its id stays reserved meanwhile.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signals.SIGKILL)


class BashError(RuntimeError):
    """The command failed, timed out or was aborted; the message holds its output."""


async def _run(
    command: str,
    cwd: Path,
    time_limit: float | None,
    signal: AbortSignal,
    on_data: Callable[[bytes], None],
) -> tuple[str | None, int | None]:
    """Run ``command``; returns why it was stopped (None, "timeout", "aborted") and its status."""
    loop = asyncio.get_running_loop()
    read_end, write_end = os.pipe()
    try:
        process = await asyncio.create_subprocess_exec(
            *_shell(),
            command,
            cwd=cwd,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=write_end,
            stderr=write_end,
            start_new_session=True,
        )
    except BaseException:
        os.close(read_end)
        raise
    finally:
        os.close(write_end)  # from here on only the shell and its children hold it
    transport, pipe = await loop.connect_read_pipe(
        lambda: _Pipe(on_data), os.fdopen(read_end, "rb", buffering=0)
    )
    stopped: asyncio.Future[str] = loop.create_future()

    def stop() -> None:
        if not stopped.done():
            stopped.set_result("aborted")

    def on_abort() -> None:
        loop.call_soon_threadsafe(stop)

    remove = signal.add_callback(on_abort)
    exited = asyncio.ensure_future(process.wait())
    reason: str | None = None
    try:
        waiters: list[asyncio.Future[Any]] = [exited, stopped]
        done, _ = await asyncio.wait(
            waiters, timeout=time_limit, return_when=asyncio.FIRST_COMPLETED
        )
        if exited in done:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(pipe.closed), _DRAIN_GRACE)
        else:
            reason = stopped.result() if stopped in done else "timeout"
    finally:
        remove()
        await _close(process.pid, exited, pipe, transport)
    return reason, process.returncode


async def _close(
    pid: int,
    exited: asyncio.Future[int],
    pipe: _Pipe,
    transport: asyncio.ReadTransport,
) -> None:
    """Kill what is left of the group and release the pipe, even while being cancelled."""
    if not (exited.done() and pipe.closed.done()):
        _kill_group(pid)
    cancelled: asyncio.CancelledError | None = None
    for waiter in (exited, pipe.closed):
        try:
            await asyncio.wait_for(asyncio.shield(waiter), _CLOSE_WAIT)
        except TimeoutError:
            pass  # a process that left the group still holds the pipe: close our end anyway
        except asyncio.CancelledError as exc:
            cancelled = exc
    transport.close()
    if cancelled is not None:
        raise cancelled


def bash_tool(workspace: Workspace) -> AgentTool:
    """The ``bash`` tool, running in ``workspace.cwd``."""

    async def execute(
        tool_call_id: str,
        params: dict[str, Any],
        signal: AbortSignal,
        on_update: ToolUpdateCallback,
    ) -> AgentToolResult:
        signal.throw_if_aborted()
        command: str = params["command"]
        timeout = params.get("timeout")
        output = _Output()

        def on_data(chunk: bytes) -> None:
            output.add(chunk)
            on_update(AgentToolResult([TextContent(_render(output))]))

        reason, status = await _run(
            command, workspace.cwd, float(timeout) if timeout else None, signal, on_data
        )
        text = _render(output)
        if reason == "aborted":
            raise BashError(f"{text}\n\nCommand aborted")
        if reason == "timeout":
            raise BashError(f"{text}\n\nCommand timed out after {timeout} seconds")
        if status:
            raise BashError(f"{text}\n\nCommand exited with code {status}")
        return AgentToolResult([TextContent(text)])

    return AgentTool(
        "bash",
        "Execute a bash command in the working directory",
        _SCHEMA,
        execute=execute,
        label="Bash",
    )
