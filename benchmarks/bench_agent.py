"""Agent-loop overhead per turn, next to the bare faux streams of the same calls, in one run.

Run: ``python benchmarks/bench_agent.py`` (after ``pip install -e .``; with ``PYTHONPATH=<other
checkout>/src`` it measures that checkout instead, which is how a change is compared with the
commit before it). ``--profile`` adds where a turn's CPU goes, and what the features that are
off (usage limits, typed output, tool sources, observers and telemetry) cost per turn.

One run is an :class:`~tau.agent.Agent` with one listener and TURNS turns; each turn the faux
model asks for TOOLS parallel calls of a trivial tool, the last turn answers in text.
``transform_context`` sends only the last WINDOW messages (as compaction would), so the
provider's per-call cost stays constant instead of growing with the transcript. Three tools:

* ``sync``: a synchronous ``execute`` (the default: it runs in a worker thread),
* ``async``: a coroutine ``execute`` (it runs on the event loop),
* ``threaded=False``: the synchronous ``execute`` called on the event loop.

The baseline replays the very same LLM calls (the same contexts, the same scripted
responses) as bare faux streams, consumed event by event, so the difference is what the loop
adds per turn: context building, ``transform_context`` and ``convert_to_llm``, the agent
events, tool preflight (lookup, validation), running the tools, ordered results.

Each measurement is CPU time (``time.process_time``: every thread of the process, so a worker
thread's work counts) of a fresh run on a fresh event loop, with garbage collection off during
it and collected before it; nothing of one measurement stays alive into the next (the replayed
contexts are kept pickled). Best of ROUNDS, the variants interleaved within each round.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import os
import pickle
import pstats
import sys
import time
from collections.abc import Callable, Coroutine, Mapping
from functools import partial
from pathlib import Path
from typing import Any

try:
    import tau  # noqa: F401
except ImportError:  # a plain checkout: measure its sources
    sys.path.append(str(Path(__file__).resolve().parents[1] / "src"))

from tau.agent import Agent, AgentEvent, AgentTool
from tau.ai import Context, stream
from tau.ai.providers.faux import FauxResponse, faux_calls, faux_model, text, tool_call

TURNS = 500
TOOLS = 3
ROUNDS = 7
WINDOW = 8
PARAMETERS = {"type": "object", "properties": {"i": {"type": "integer"}}, "required": ["i"]}


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


def sync_execute(call_id: str, params: Any, signal: Any, on_update: Any) -> str:
    return "ok"


async def async_execute(call_id: str, params: Any, signal: Any, on_update: Any) -> str:
    return "ok"


TOOL_KINDS: dict[str, Callable[[], AgentTool]] = {
    "sync": lambda: AgentTool("noop", "Does nothing", PARAMETERS, execute=sync_execute),
    "async": lambda: AgentTool("noop", "Does nothing", PARAMETERS, execute=async_execute),
    "threaded=False": lambda: AgentTool(
        "noop", "Does nothing", PARAMETERS, execute=sync_execute, threaded=False
    ),
}


def listener(event: AgentEvent) -> None:
    pass


def agent_run(kind: str) -> tuple[Callable[[], Coroutine[Any, Any, None]], Any]:
    """A run of the ``kind`` tool, ready to start; and its model (to read its calls)."""
    model = faux_model(script())
    agent = Agent(model=model, tools=[TOOL_KINDS[kind]()], transform_context=window)
    agent.subscribe(listener)

    async def run() -> None:
        await agent.prompt("go")
        assert len(agent.state.messages) == 1 + TURNS + (TURNS - 1) * TOOLS

    return run, model


def agent_body(kind: str) -> Callable[[], Coroutine[Any, Any, None]]:
    return agent_run(kind)[0]


def bare_run(contexts_blob: bytes) -> Callable[[], Coroutine[Any, Any, None]]:
    """The same LLM calls as bare faux streams: the provider's share of a run."""
    model = faux_model(script())
    contexts: list[Context] = pickle.loads(contexts_blob)

    async def run() -> None:
        for context in contexts:
            s = stream(model, context)
            async for _ in s:
                pass
            await s.result()

    return run


def cpu_of(make: Callable[[], Callable[[], Coroutine[Any, Any, None]]]) -> float:
    """CPU seconds of one run, made by ``make`` (untimed) on a fresh loop, gc off."""

    async def go() -> float:
        run = make()
        gc.collect()
        gc.disable()
        try:
            start = time.process_time()
            await run()
            return time.process_time() - start
        finally:
            gc.enable()

    return asyncio.run(go())


def record_contexts() -> bytes:
    run, model = agent_run("sync")
    asyncio.run(run())
    return pickle.dumps([context for context, _ in faux_calls(model)])


def measure() -> None:
    contexts = record_contexts()
    names = ["bare", *TOOL_KINDS]
    best = dict.fromkeys(names, float("inf"))
    for _ in range(ROUNDS):
        for name in names:
            make = partial(bare_run, contexts) if name == "bare" else partial(agent_body, name)
            seconds = cpu_of(make)
            best[name] = min(best[name], seconds)
            gc.collect()
    bare = best["bare"] / TURNS * 1e6
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(
        f"{TURNS} turns x {TOOLS} parallel tool calls, Agent + 1 listener; CPU, best of "
        f"{ROUNDS}, interleaved, gc off; load average {load}\n"
    )
    print(f"{'':28} {'CPU µs/turn':>12} {'÷ bare':>8} {'loop overhead µs/turn':>22}")
    print(f"{'bare faux streams':28} {bare:12.1f} {'1.00x':>8} {'':>22}")
    for name in TOOL_KINDS:
        cpu = best[name] / TURNS * 1e6
        print(f"{'Agent, ' + name + ' tool':28} {cpu:12.1f} {cpu / bare:7.2f}x {cpu - bare:22.1f}")


FEATURES = {
    "usage limits": ("tau/agent/usage.py",),
    "typed output": ("tau/agent/output.py",),
    "tool sources": ("tau/agent/tool_sources.py",),
    "observers, telemetry": ("tau/agent/observe.py", "tau/ai/observe.py", "tau/telemetry/"),
}


def profile() -> None:
    """Where an Agent turn's CPU goes (sync tool), and what each feature that is off costs."""
    run, _ = agent_run("sync")
    profiler = cProfile.Profile()

    async def go() -> None:
        gc.disable()
        profiler.enable()
        await run()
        profiler.disable()
        gc.enable()

    asyncio.run(go())
    stats = pstats.Stats(profiler)
    raw: dict[Any, Any] = stats.stats  # type: ignore[attr-defined]
    print("\nfeatures that are off: calls and own CPU per turn in their modules (profiled)")
    for feature, paths in FEATURES.items():
        calls = 0
        own = 0.0
        for (filename, _, _), (_, ncalls, tottime, _, _) in raw.items():
            if any(path in filename.replace(os.sep, "/") for path in paths):
                calls += ncalls
                own += tottime
        print(f"  {feature:22} {calls / TURNS:6.2f} calls  {own / TURNS * 1e6:7.2f} µs")
    print("\nthe 25 functions with the most own time (profiled, so slower than above):")
    stats.sort_stats("tottime").print_stats(25)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", action="store_true", help="also profile a turn")
    args = parser.parse_args()
    measure()
    if args.profile:
        profile()


if __name__ == "__main__":
    main()
