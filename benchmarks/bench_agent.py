"""Agent-loop overhead per turn, next to the bare faux stream cost, in the same run.

Run: ``python benchmarks/bench_agent.py`` (after ``pip install -e .``, or from a checkout).

One run of TURNS turns; each turn the faux model asks for TOOLS parallel calls of a trivial
tool, the last turn answers in text. ``transform_context`` sends only the last WINDOW
messages (as compaction would), so the provider's per-call cost stays constant instead of
growing with the transcript. The baseline replays the very same LLM calls (the same
contexts, the same scripted responses) as bare faux streams, consumed event by event, so the
difference is what the loop adds per turn: context building, ``transform_context`` and
``convert_to_llm``, the agent events, tool preflight (lookup, validation), concurrent
execution, ordered results.
Printed: µs per turn (wall and CPU), median of RUNS.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from collections.abc import Awaitable, Callable, Mapping
from functools import partial
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from tau.agent import (  # noqa: E402
    Agent,
    AgentContext,
    AgentEvent,
    AgentLoopConfig,
    AgentTool,
    agent_loop,
)
from tau.ai import Context, UserMessage, stream  # noqa: E402
from tau.ai.providers.faux import FauxResponse, faux_calls, faux_model, text, tool_call  # noqa: E402

TURNS = 1_000
TOOLS = 3
RUNS = 3
WINDOW = 8


def window(messages: list[Any], signal: Any) -> list[Any]:
    return messages[-WINDOW:]


def script() -> Callable[[Context, Mapping[str, Any]], FauxResponse]:
    count = 0

    def respond(context: Context, options: Mapping[str, Any]) -> FauxResponse:
        nonlocal count
        count += 1
        if count >= TURNS:
            count = 0
            return FauxResponse([text("done")], chunk_size=0)
        return FauxResponse(
            [tool_call("noop", {"i": i}, id=f"c{count}-{i}") for i in range(TOOLS)], chunk_size=0
        )

    return respond


def noop_tool() -> AgentTool:
    return AgentTool(
        "noop",
        "Does nothing",
        {"type": "object", "properties": {"i": {"type": "integer"}}, "required": ["i"]},
        execute=lambda call_id, params, signal, on_update: "ok",
    )


async def run_agent_loop_once() -> list[Context]:
    model = faux_model(script())
    s = agent_loop(
        [UserMessage("go")],
        AgentContext("", [], [noop_tool()]),
        AgentLoopConfig(model=model, transform_context=window),
    )
    async for _ in s:
        pass
    messages = await s.result()
    assert len(messages) == 1 + TURNS + (TURNS - 1) * TOOLS, len(messages)
    return [context for context, _ in faux_calls(model)]


async def run_agent_class_once() -> list[Context]:
    model = faux_model(script())
    agent = Agent(model=model, tools=[noop_tool()], transform_context=window)

    def listener(event: AgentEvent) -> None:
        pass

    agent.subscribe(listener)
    await agent.prompt("go")
    assert len(agent.state.messages) == 1 + TURNS + (TURNS - 1) * TOOLS
    return [context for context, _ in faux_calls(model)]


async def replay_bare(contexts: list[Context]) -> None:
    """The same LLM calls as bare faux streams: the provider's share of a run."""
    model = faux_model(script())
    for context in contexts:
        s = stream(model, context)
        async for _ in s:
            pass
        await s.result()


def measure(make: Callable[[], Awaitable[Any]]) -> tuple[float, float, Any]:
    async def go() -> tuple[float, float, Any]:
        wall, cpu = time.perf_counter(), time.process_time()
        out = await make()
        return time.perf_counter() - wall, time.process_time() - cpu, out

    return asyncio.run(go())


def main() -> None:
    rows: dict[str, tuple[list[float], list[float]]] = {
        "agent_loop": ([], []),
        "Agent": ([], []),
        "bare": ([], []),
    }
    for _ in range(RUNS):
        wall, cpu, contexts = measure(run_agent_loop_once)
        rows["agent_loop"][0].append(wall)
        rows["agent_loop"][1].append(cpu)
        wall, cpu, _ = measure(run_agent_class_once)
        rows["Agent"][0].append(wall)
        rows["Agent"][1].append(cpu)
        wall, cpu, _ = measure(partial(replay_bare, contexts))
        rows["bare"][0].append(wall)
        rows["bare"][1].append(cpu)

    def per_turn(values: list[float]) -> float:
        return statistics.median(values) / TURNS * 1e6

    bare_wall, bare_cpu = per_turn(rows["bare"][0]), per_turn(rows["bare"][1])
    print(f"{TURNS} turns, {TOOLS} parallel tool calls each, median of {RUNS} runs\n")
    print(f"{'':32} {'wall µs/turn':>14} {'CPU µs/turn':>14} {'CPU vs bare':>12}")
    print(f"{'bare faux streams (baseline)':32} {bare_wall:14.1f} {bare_cpu:14.1f} {'1.00x':>12}")
    for name, label in (("agent_loop", "agent_loop (raw stream)"), ("Agent", "Agent + 1 listener")):
        wall, cpu = per_turn(rows[name][0]), per_turn(rows[name][1])
        print(f"{label:32} {wall:14.1f} {cpu:14.1f} {cpu / bare_cpu:11.2f}x")
    for name, label in (("agent_loop", "agent_loop"), ("Agent", "Agent")):
        overhead = per_turn(rows[name][1]) - bare_cpu
        print(f"\nloop overhead per turn, {label}: {overhead:.1f} µs CPU")


if __name__ == "__main__":
    main()
