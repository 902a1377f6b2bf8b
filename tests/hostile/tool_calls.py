"""Helpers for calling the built-in tools the way the agent does, without ever hanging a test.

A hostile input that makes a tool block (a FIFO, an endless device) must fail the test, not
stall the suite: every call runs in a daemon thread joined with a deadline.
"""

from __future__ import annotations

import asyncio
import os
import stat
import threading
import time
from pathlib import Path
from typing import Any

from tau.agent.tools import AgentTool, AgentToolResult, as_tool_result
from tau.ai.core.abort import AbortController
from tau.ai.core.types import TextContent
from tau.cli.tools import Workspace, build_tools

DEADLINE = 10.0


def tool(name: str, root: Path, allowed: tuple[Path, ...] = ()) -> AgentTool:
    """The built-in tool ``name`` working in ``root``."""
    return build_tools([name], Workspace(root.resolve(), allowed))[0]


def call(
    agent_tool: AgentTool,
    params: dict[str, Any],
    *,
    abort_after: float | None = None,
    deadline: float = DEADLINE,
) -> AgentToolResult:
    """Run one tool call on a fresh event loop in a daemon thread; fail if it outlives ``deadline``."""
    outcome: list[Any] = []

    async def run() -> AgentToolResult:
        controller = AbortController()
        if abort_after is not None:
            asyncio.get_running_loop().call_later(abort_after, controller.abort)
        result = agent_tool.execute("call_1", params, controller.signal, lambda _: None)
        if asyncio.iscoroutine(result):
            result = await result
        return as_tool_result(result)

    def target() -> None:
        try:
            outcome.append(asyncio.run(run()))
        except BaseException as exc:
            outcome.append(exc)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(deadline)
    if thread.is_alive():
        raise AssertionError(f"the {agent_tool.name} call did not return within {deadline} s")
    if isinstance(outcome[0], BaseException):
        raise outcome[0]
    return outcome[0]


def text_of(result: AgentToolResult) -> str:
    return "".join(b.text for b in result.content if isinstance(b, TextContent))


def process_alive(pid: int) -> bool:
    """Whether ``pid`` still runs (a zombie waiting to be reaped counts as gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):
        return False
    return fields[0] != "Z"


def wait_gone(pid: int, within: float = 5.0) -> bool:
    """True once ``pid`` has ended, polling for at most ``within`` seconds."""
    end = time.monotonic() + within
    while time.monotonic() < end:
        if not process_alive(pid):
            return True
        time.sleep(0.05)
    return not process_alive(pid)


def make_fifo(path: Path) -> Path:
    os.mkfifo(path)
    assert stat.S_ISFIFO(os.stat(path).st_mode)
    return path


def unblock_fifo(path: Path) -> None:
    """Open both ends of ``path`` briefly so a thread stuck opening it can go on."""
    try:
        reader = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return
    try:
        writer = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
        os.close(writer)
    except OSError:
        pass
    finally:
        os.close(reader)
