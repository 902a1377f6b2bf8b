"""Items 11 and 21: how the agent loop runs tools.

* A synchronous tool (an ``AgentTool`` with a sync ``execute``, a sync ``@agent_tool``, every
  CLI built-in but ``bash``) runs in a worker thread, so it never blocks the event loop, and
  abort plus the grace period end the run even while it is stuck.
* ``after_tool_call`` (or ``before_tool_call``) returning something that is not its result
  type gives that call an error result; the run goes on.
* A tool raising ``GeneratorExit``, ``SystemExit`` or any other ``BaseException`` (but
  cancellation) gets an error result; nothing escapes ``prompt()``.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from tau.agent import (
    Agent,
    AgentContext,
    AgentLoopConfig,
    AgentTool,
    ToolExecutionEndEvent,
    agent_loop,
    agent_tool,
    tool_from_function,
)
from tau.ai import AbortController, AbortSignal, AssistantMessage, UserMessage
from tau.ai.providers.faux import FauxResponse, faux_model, text, tool_call
from tests.agent.helpers import check_grammar, collect, result_text


def _model(name: str) -> Any:
    return faux_model(
        [FauxResponse([tool_call(name, {}, id="A")]), FauxResponse([text("after tools")])]
    )


async def _abort_while_blocked(tool: AgentTool, release: threading.Event) -> None:
    controller = AbortController()
    stream = agent_loop(
        [UserMessage("go")],
        AgentContext("", [], [tool]),
        AgentLoopConfig(model=_model(tool.name), tool_abort_grace=0.1),
        controller.signal,
    )
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0.01)

    ticking = asyncio.ensure_future(ticker())
    try:
        collecting = asyncio.ensure_future(collect(stream))
        await asyncio.sleep(0.3)
        assert ticks >= 10, f"the event loop ran only {ticks} times in 0.3 s: the tool blocks it"
        started = time.monotonic()
        controller.abort()
        events = await collecting
        assert time.monotonic() - started < 2, "abort waited for the blocked tool"
    finally:
        release.set()
        ticking.cancel()
    check_grammar(events)
    end = next(e for e in events if isinstance(e, ToolExecutionEndEvent))
    assert end.is_error and result_text(end.result) == "Operation aborted"


async def test_a_sync_execute_runs_in_a_thread_and_abort_applies() -> None:
    release = threading.Event()

    def execute(call_id: str, params: Any, signal: Any, on_update: Any) -> str:
        release.wait(3)
        return "late"

    await _abort_while_blocked(AgentTool("block", "blocks", None, execute=execute), release)


async def test_a_sync_agent_tool_runs_in_a_thread_by_default() -> None:
    release = threading.Event()

    @agent_tool
    def block() -> str:
        """Blocks."""
        release.wait(3)
        return "late"

    await _abort_while_blocked(block, release)


async def test_a_sync_execute_override_runs_in_a_thread() -> None:
    release = threading.Event()

    class Blocking(AgentTool):
        def execute(self, call_id: str, params: Any, signal: Any, on_update: Any) -> str:
            release.wait(3)
            return "late"

    await _abort_while_blocked(Blocking("block", "blocks", None), release)


async def test_threaded_false_keeps_a_function_on_the_loop_thread() -> None:
    seen: list[int] = []

    def where() -> str:
        """Reports its thread."""
        seen.append(threading.get_ident())
        return "here"

    tool = tool_from_function(where, threaded=False)
    agent = Agent(model=_model("where"), tools=[tool])
    await asyncio.wait_for(agent.prompt("go"), 5)
    assert seen == [threading.get_ident()]


@pytest.mark.parametrize("junk", ["redacted", {"content": []}, 42], ids=["str", "dict", "int"])
@pytest.mark.parametrize("hook", ["after_tool_call", "before_tool_call"])
async def test_a_hook_returning_junk_gives_an_error_result(hook: str, junk: object) -> None:
    ran: list[str] = []

    def run_tool() -> str:
        """Runs."""
        ran.append("yes")
        return "ran"

    tool = tool_from_function(run_tool)
    agent = Agent(model=_model("run_tool"), tools=[tool], **{hook: lambda ctx, signal: junk})
    await asyncio.wait_for(agent.prompt("go"), 5)
    roles = [m.role for m in agent.state.messages]
    assert roles == ["user", "assistant", "toolResult", "assistant"], roles
    result = agent.state.messages[2]
    expected = "AfterToolCallResult" if hook == "after_tool_call" else "BeforeToolCallResult"
    assert result.is_error  # type: ignore[union-attr]
    assert f"{hook} must return {expected} or None, not {type(junk).__name__}" in result_text(
        result  # type: ignore[arg-type]
    )
    final = agent.state.messages[-1]
    assert isinstance(final, AssistantMessage) and final.text == "after tools"


class Custom(BaseException):
    pass


def _raiser(exc: Callable[[], BaseException], *, sync: bool) -> AgentTool:
    if sync:

        def execute(call_id: str, params: Any, signal: AbortSignal, on_update: Any) -> Any:
            raise exc()

        return AgentTool("explode", "raises", None, execute=execute)

    async def aexecute(call_id: str, params: Any, signal: AbortSignal, on_update: Any) -> Any:
        await asyncio.sleep(0)
        raise exc()

    return AgentTool("explode", "raises", None, execute=aexecute)


@pytest.mark.parametrize("sync", [True, False], ids=["sync", "async"])
@pytest.mark.parametrize(
    ("exc", "described"),
    [
        (GeneratorExit, "GeneratorExit"),
        (lambda: SystemExit(3), "SystemExit: 3"),
        (lambda: Custom("custom failure"), "custom failure"),
    ],
    ids=["GeneratorExit", "SystemExit", "custom"],
)
async def test_a_tool_raising_a_base_exception_never_escapes_prompt(
    exc: Callable[[], BaseException], described: str, sync: bool
) -> None:
    agent = Agent(model=_model("explode"), tools=[_raiser(exc, sync=sync)])
    await asyncio.wait_for(agent.prompt("go"), 5)
    roles = [m.role for m in agent.state.messages]
    assert roles == ["user", "assistant", "toolResult", "assistant"], roles
    result = agent.state.messages[2]
    assert result.is_error and described in result_text(result)  # type: ignore[union-attr, arg-type]
    assert agent.state.error is None
