"""``bash``: run a shell command in the working directory, streaming its output.

stdout and stderr are merged; the last 50 KB / 2,000 lines are kept (the whole output goes to a
temporary file once it passes either limit). A timeout or an abort kills the whole process group.
A non-zero exit is an error result, so the model sees that the command failed.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import shutil
import signal as signals
import tempfile
from collections import deque
from pathlib import Path
from typing import IO, Any

from tau.agent.tools import AgentTool, AgentToolResult, ToolUpdateCallback
from tau.ai.abort import AbortSignal
from tau.ai.types import TextContent
from tau.cli.tools.paths import Workspace
from tau.cli.tools.truncate import MAX_BYTES, MAX_LINES, format_size, truncate_tail

_SCHEMA = {
    "type": "object",
    "properties": {
        "command": {"type": "string", "description": "Bash command to execute"},
        "timeout": {"type": "number", "description": "Timeout in seconds (optional)"},
    },
    "required": ["command"],
}

_ROLLING_BYTES = 100 * 1024


class _Output:
    """The tail of the output in memory, and all of it on disk once it passes the limits."""

    def __init__(self) -> None:
        self.chunks: deque[bytes] = deque()
        self.size = 0
        self.total = 0
        self.lines = 0
        self.file: IO[bytes] | None = None
        self.file_path: str | None = None

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        self.lines += chunk.count(b"\n")
        if self.file is None and (self.total > MAX_BYTES or self.lines > MAX_LINES):
            name = f"tau-bash-{secrets.token_hex(8)}.log"
            self.file_path = os.path.join(tempfile.gettempdir(), name)
            self.file = open(self.file_path, "wb")  # noqa: SIM115 - closed in close()
            for earlier in self.chunks:
                self.file.write(earlier)
        if self.file is not None:
            self.file.write(chunk)
        self.chunks.append(chunk)
        self.size += len(chunk)
        # Drop old chunks only while at least 100 KB stays: the 50 KB shown is always whole lines.
        while self.size - len(self.chunks[0]) >= _ROLLING_BYTES:
            self.size -= len(self.chunks.popleft())

    def text(self) -> str:
        return b"".join(self.chunks).decode("utf-8", errors="replace")

    def close(self) -> None:
        if self.file is not None:
            self.file.close()


def _shell() -> list[str]:
    for candidate in ("/bin/bash", shutil.which("bash"), shutil.which("sh")):
        if candidate and Path(candidate).exists():
            return [candidate, "-c"]
    return ["sh", "-c"]


def _render(output: _Output) -> tuple[str, dict[str, Any]]:
    # A final newline ends the last line; it does not start another.
    full = output.text().removesuffix("\n")
    cut = truncate_tail(full)
    text = cut.text or "(no output)"
    details: dict[str, Any] = {}
    if output.file_path is not None:
        details["fullOutputPath"] = output.file_path
    if cut.truncated:
        # Memory holds only the tail: number the lines against everything the command printed.
        total = output.lines + (0 if output.text().endswith("\n") else 1)
        first = total - (cut.last_line - cut.first_line)
        details["truncation"] = {"by": cut.by, "totalLines": total}
        where = output.file_path
        if cut.first_line == cut.last_line and cut.by == "bytes":
            line_size = format_size(len(full.rsplit("\n", 1)[-1].encode("utf-8")))
            notice = (
                f"[Showing last {format_size(len(cut.text.encode('utf-8')))} of line "
                f"{total} (line is {line_size}). Full output: {where}]"
            )
        else:
            limit = f" ({format_size(MAX_BYTES)} limit)" if cut.by == "bytes" else ""
            notice = f"[Showing lines {first}-{total} of {total}{limit}. Full output: {where}]"
        text = f"{text}\n\n{notice}"
    return text, details


def _kill(process: asyncio.subprocess.Process) -> None:
    if process.returncode is None:
        with contextlib.suppress(ProcessLookupError):  # already gone
            os.killpg(process.pid, signals.SIGKILL)


class BashError(RuntimeError):
    """The command failed, timed out or was aborted; the message holds its output."""


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
        process = await asyncio.create_subprocess_exec(
            *_shell(),
            command,
            cwd=workspace.cwd,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
        )
        output = _Output()
        loop = asyncio.get_running_loop()
        aborted = False

        def on_abort() -> None:
            nonlocal aborted
            aborted = True
            loop.call_soon_threadsafe(_kill, process)

        remove = signal.add_callback(on_abort)

        async def pump() -> None:
            assert process.stdout is not None
            while chunk := await process.stdout.read(65536):
                output.add(chunk)
                text, details = _render(output)
                on_update(AgentToolResult([TextContent(text)], details))
            await process.wait()

        timed_out = False
        try:
            await asyncio.wait_for(pump(), timeout=float(timeout) if timeout else None)
        except TimeoutError:
            timed_out = True
            _kill(process)
            await process.wait()
        finally:
            remove()
            _kill(process)
            output.close()
        text, details = _render(output)
        if aborted:
            raise BashError(f"{text}\n\nCommand aborted")
        if timed_out:
            raise BashError(f"{text}\n\nCommand timed out after {timeout} seconds")
        if process.returncode:
            raise BashError(f"{text}\n\nCommand exited with code {process.returncode}")
        return AgentToolResult([TextContent(text)], details or None)

    return AgentTool(
        "bash",
        "Execute a bash command in the working directory",
        _SCHEMA,
        execute=execute,
        label="Bash",
    )
