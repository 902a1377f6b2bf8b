"""Paused and durable runs: the cost of a RunState round trip and of DBOS steps.

1. ``RunState.to_json()`` + ``RunState.from_json()`` of a paused run of 1,000 messages (user
   prompts, assistant tool calls, tool results; one pending call), CPU time
   (``time.process_time``), median of 15 (target <= 20 ms); wall time beside it. Baseline: tau.ai's own ``Context`` JSON round trip of the same messages
   (``tau.ai.to_json`` / ``from_json``), same run.
2. The DBOS step cost per model call on SQLite: wall time of a 40-turn run (one tool call per
   turn: 40 model steps and 39 tool steps) through ``tau.durable.DurableAgent`` against the
   same run of the plain ``Agent`` (faux model), median of 5 interleaved; the cost of one
   step is (durable - plain) / steps. Needs the ``[durable]`` extra.

Run: ``.venv/bin/python benchmarks/bench_runs.py``
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from tau.agent import Agent, AgentMessage, PendingCall, RunState, agent_tool
from tau.ai import (
    AssistantMessage,
    Context,
    TextContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
    from_json,
    to_json,
)
from tau.ai.providers.faux import FauxResponse, faux_model, text, tool_call

MESSAGES = 1_000
TURNS = 40


def transcript(count: int) -> list[AgentMessage]:
    """A realistic transcript: prompt, tool call, tool result, answer, repeated."""
    out: list[AgentMessage] = []
    i = 0
    while len(out) < count:
        out.append(UserMessage([TextContent(f"Question {i}: what is in file_{i}.py? " * 3)]))
        call = ToolCall(f"call_{i}", "read", {"path": f"src/file_{i}.py", "limit": 200})
        out.append(
            AssistantMessage(
                content=[TextContent("Let me read it."), call],
                api="openai-responses",
                provider="openai",
                model="gpt-5",
                usage=Usage(input=1200 + i, output=40),
                stop_reason="toolUse",
            )
        )
        out.append(
            ToolResultMessage(
                tool_call_id=call.id,
                tool_name="read",
                content=[TextContent("def f(x):\n    return x * 2\n" * 20)],
                is_error=False,
            )
        )
        out.append(
            AssistantMessage(
                content=[TextContent(f"file_{i}.py defines f, which doubles its input. " * 2)],
                api="openai-responses",
                provider="openai",
                model="gpt-5",
                usage=Usage(input=1500 + i, output=60),
                stop_reason="stop",
            )
        )
        i += 1
    return out[:count]


def median_ms(
    fn: Callable[[], object], rounds: int = 15, clock: Callable[[], float] = time.process_time
) -> float:
    times: list[float] = []
    for _ in range(rounds):
        start = clock()
        fn()
        times.append((clock() - start) * 1000)
    return statistics.median(times)


def bench_state() -> None:
    messages = transcript(MESSAGES)
    last = messages[-1]
    pending = PendingCall("call_x", "delete", {"path": "build"}, "approval")
    state = RunState(messages=messages, paused=[pending])
    llm = [m for m in messages if isinstance(m, UserMessage | AssistantMessage | ToolResultMessage)]
    context = Context(messages=llm)
    assert isinstance(last, AssistantMessage)

    def state_round_trip() -> None:
        RunState.from_json(state.to_json())

    def context_round_trip() -> None:
        from_json(to_json(context))

    size = len(state.to_json())
    for _ in range(3):  # warm up
        state_round_trip()
        context_round_trip()
    tau_ms = median_ms(state_round_trip)
    base_ms = median_ms(context_round_trip)
    wall_ms = median_ms(state_round_trip, clock=time.perf_counter)
    print(f"RunState round trip, {MESSAGES} messages ({size / 1e6:.2f} MB of JSON), CPU ms")
    print(
        f"  RunState to_json + from_json   {tau_ms:8.2f} ms   (target <= 20 ms; wall {wall_ms:.2f})"
    )
    print(f"  Context to_json + from_json    {base_ms:8.2f} ms   (baseline)")
    print(f"  ratio                          {tau_ms / base_ms:8.2f}x")


def script(context: Context, options: Mapping[str, Any]) -> FauxResponse:
    done = sum(1 for m in context.messages if isinstance(m, ToolResultMessage))
    if done >= TURNS - 1:
        return FauxResponse([text("done")], chunk_size=0)
    return FauxResponse([tool_call("bump", {"n": done})], chunk_size=0)


def build_agent() -> Agent:
    @agent_tool
    async def bump(n: int) -> str:
        """Count."""
        return str(n + 1)

    return Agent(model=faux_model(script), tools=[bump], tool_execution="sequential")


async def bench_dbos() -> None:
    try:
        from dbos import DBOS
    except ImportError:
        print("DBOS step cost: skipped (pip install 'tau[durable]')")
        return
    from tau.durable import DurableAgent

    folder = Path(tempfile.mkdtemp())
    durable = DurableAgent(build_agent(), name="bench")
    DBOS(
        config={
            "name": "tau-bench",
            "system_database_url": f"sqlite:///{folder / 'bench.sqlite'}",
            "log_level": "ERROR",
        }
    )
    DBOS.launch()
    try:
        plain_times: list[tuple[float, float]] = []
        durable_times: list[tuple[float, float]] = []
        for round_ in range(6):
            wall, cpu = time.perf_counter(), time.process_time()
            plain = await build_agent().prompt("go")
            plain_time = (time.perf_counter() - wall, time.process_time() - cpu)
            wall, cpu = time.perf_counter(), time.process_time()
            recorded = await durable.prompt("go", workflow_id=f"bench-{round_}")
            durable_time = (time.perf_counter() - wall, time.process_time() - cpu)
            assert plain.text == recorded.text == "done"
            if round_:  # the first round warms up
                plain_times.append(plain_time)
                durable_times.append(durable_time)
    finally:
        DBOS.destroy()
    steps = TURNS + (TURNS - 1)
    print(f"\nDBOS on SQLite: a {TURNS}-turn run ({TURNS} model steps + {TURNS - 1} tool steps)")
    for index, clock in ((0, "wall"), (1, "CPU")):
        plain_ms = statistics.median(t[index] for t in plain_times) * 1000
        durable_ms = statistics.median(t[index] for t in durable_times) * 1000
        per_step = (durable_ms - plain_ms) / steps
        print(f"  {clock}: plain Agent {plain_ms:8.1f} ms, DurableAgent {durable_ms:8.1f} ms")
        print(f"  {clock}: ratio {durable_ms / plain_ms:.1f}x, {per_step:.2f} ms per recorded step")


if __name__ == "__main__":
    bench_state()
    asyncio.run(bench_dbos())
