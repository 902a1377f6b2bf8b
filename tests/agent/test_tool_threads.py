"""Synchronous tools run in reused worker threads (issue 32), keeping every guarantee.

* A turn's calls of quick tools reuse the same worker: no thread is started per call.
* Parallel synchronous calls still run at the same time: two calls that wait for each other
  both finish (a call still running after a moment gets another worker).
* A tool stuck for good holds only its own worker: later calls run at once.
* A call sees the caller's context variables.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import gc
import threading
import time
import weakref
from typing import Any

from tau.agent import (
    Agent,
    AgentContext,
    AgentLoopConfig,
    AgentTool,
    ToolExecutionEndEvent,
    agent_loop,
    agent_tool,
)
from tau.agent.tool_threads import run_in_thread
from tau.ai import AbortController, AbortSignal, UserMessage
from tau.ai.providers.faux import FauxResponse, faux_model, text, tool_call
from tests.agent.helpers import collect, result_text


def _turns(name: str, turns: int, calls: int) -> Any:
    responses = [
        FauxResponse([tool_call(name, {}, id=f"t{t}-{i}") for i in range(calls)])
        for t in range(turns)
    ]
    return faux_model([*responses, FauxResponse([text("done")])])


def _results(agent: Agent[Any]) -> list[ToolExecutionEndEvent]:
    ends: list[ToolExecutionEndEvent] = []
    agent.subscribe(lambda e: ends.append(e) if isinstance(e, ToolExecutionEndEvent) else None)
    return ends


async def test_quick_sync_tools_reuse_their_worker_threads() -> None:
    seen: list[threading.Thread] = []  # the objects, kept alive: a new thread is a new one

    def where(call_id: str, params: Any, signal: AbortSignal, on_update: Any) -> str:
        seen.append(threading.current_thread())
        return "ok"

    agent = Agent(model=_turns("where", 20, 3), tools=[AgentTool("where", "", None, execute=where)])
    ends = _results(agent)
    await asyncio.wait_for(agent.prompt("go"), 10)
    assert [result_text(e.result) for e in ends] == ["ok"] * 60
    assert threading.current_thread() not in seen  # never on the event loop's thread
    # 60 calls, a handful of threads: workers are reused (a thread per call made 60).
    assert len({id(thread) for thread in seen}) <= 6, len({id(thread) for thread in seen})


async def test_parallel_sync_calls_that_wait_for_each_other_both_finish() -> None:
    barrier = threading.Barrier(3, timeout=5)

    @agent_tool
    def meet() -> str:
        """Waits for the two other calls."""
        barrier.wait()
        return "met"

    agent = Agent(model=_turns("meet", 1, 3), tools=[meet])
    ends = _results(agent)
    await asyncio.wait_for(agent.prompt("go"), 10)
    assert [(e.is_error, result_text(e.result)) for e in ends] == [(False, "met")] * 3


async def test_a_stuck_tool_holds_only_its_own_worker() -> None:
    release = threading.Event()

    @agent_tool
    def stuck() -> str:
        """Never returns (until the test ends)."""
        release.wait(30)
        return "late"

    @agent_tool
    def quick() -> str:
        """Returns at once."""
        return "quick"

    try:
        controller = AbortController()
        stream = agent_loop(
            [UserMessage("go")],
            AgentContext("", [], [stuck]),
            AgentLoopConfig(model=_turns("stuck", 1, 1), tool_abort_grace=0.05),
            controller.signal,
        )
        running = asyncio.ensure_future(collect(stream))
        await asyncio.sleep(0.1)
        controller.abort()
        events = await running
        end = next(e for e in events if isinstance(e, ToolExecutionEndEvent))
        assert result_text(end.result) == "Operation aborted"
        # The stuck call still holds a worker; a new run's calls do not wait for it.
        second = Agent(model=_turns("quick", 3, 2), tools=[quick])
        ends = _results(second)
        await asyncio.wait_for(second.prompt("go"), 5)
        assert [result_text(e.result) for e in ends] == ["quick"] * 6
    finally:
        release.set()


async def test_a_sync_tool_sees_the_callers_context_variables() -> None:
    request_id: contextvars.ContextVar[str] = contextvars.ContextVar("request_id")

    @agent_tool
    def which() -> str:
        """Reports the request id."""
        return request_id.get("unset")

    request_id.set("r-42")
    agent = Agent(model=_turns("which", 1, 2), tools=[which])
    ends = _results(agent)
    await asyncio.wait_for(agent.prompt("go"), 5)
    assert [result_text(e.result) for e in ends] == ["r-42", "r-42"]


def test_an_event_loop_that_ran_sync_tools_is_not_kept_alive() -> None:
    loops: list[weakref.ref[asyncio.AbstractEventLoop]] = []

    async def main() -> int:
        loops.append(weakref.ref(asyncio.get_running_loop()))
        results = await asyncio.gather(run_in_thread(lambda: 1), run_in_thread(lambda: 2))
        return sum(results)

    assert asyncio.run(main()) == 3
    gc.collect()
    assert loops[0]() is None


def test_a_call_ending_after_its_loop_closed_is_dropped_quietly() -> None:
    release = threading.Event()
    finished = threading.Event()
    loops: list[weakref.ref[asyncio.AbstractEventLoop]] = []

    def late() -> str:
        release.wait(5)
        finished.set()
        return "late"

    async def main() -> None:
        loops.append(weakref.ref(asyncio.get_running_loop()))
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(run_in_thread(late), 0.05)

    asyncio.run(main())  # the loop is closed while the call still runs
    release.set()
    assert finished.wait(5)
    time.sleep(0.05)  # the worker posts its result to the closed loop: nothing raises
    gc.collect()
    assert loops[0]() is None
