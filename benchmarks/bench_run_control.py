"""What run control costs: a stream through ``fallback_stream_fn``, and usage limits per turn.

Run: ``python benchmarks/bench_run_control.py`` (after ``pip install -e .``, or from a
checkout). Every figure is next to its baseline measured in the same run, with the ratio.

* Per event: a faux response of TOKENS text deltas consumed through ``stream_simple`` (the
  baseline), through ``fallback_stream_fn([backup])`` when the model answers (the wrapper
  forwards every event: one more queue hop), and when the model fails first (one failed
  attempt, then the backup's TOKENS deltas). CPU µs per event, median of RUNS.
* Per turn: the agent loop over ``bench_agent.py``'s run (TURNS turns of 3 parallel tool
  calls), without limits (the baseline) and with every limit set high enough
  never to stop the run: the cost of the checks before each request, after each response and
  before each tool call. CPU µs per turn, median of RUNS.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from bench_agent import TURNS, noop_tool, script, window  # noqa: E402

from tau.agent import AgentContext, AgentLoopConfig, UsageLimits, agent_loop  # noqa: E402
from tau.ai import Context, UserMessage, fallback_stream_fn, stream_simple  # noqa: E402
from tau.ai.providers.faux import FauxResponse, faux_model, text  # noqa: E402

TOKENS = 10_000
RUNS = 5
CONTEXT = Context([UserMessage("go")])


def answer() -> FauxResponse:
    return FauxResponse([text("word" * TOKENS)], chunk_size=4)


async def consume(s: Any) -> int:
    count = 0
    async for _ in s:
        count += 1
    return count


async def direct() -> int:
    return await consume(stream_simple(faux_model([answer()]), CONTEXT))


async def wrapped_answering() -> int:
    backup = faux_model([answer()])
    return await consume(fallback_stream_fn([backup])(faux_model([answer()]), CONTEXT))


async def wrapped_after_failure() -> int:
    primary = faux_model([FauxResponse(error="Overloaded", error_status=529)])
    return await consume(fallback_stream_fn([faux_model([answer()])])(primary, CONTEXT))


async def loop_run(limits: UsageLimits | None) -> int:
    config = AgentLoopConfig(
        model=faux_model(script()), transform_context=window, usage_limits=limits
    )
    await consume(agent_loop([UserMessage("go")], AgentContext("", [], [noop_tool()]), config))
    return TURNS


NO_STOP = UsageLimits(
    max_turns=10**9,
    max_tool_calls=10**9,
    max_input_tokens=10**12,
    max_output_tokens=10**12,
    max_total_tokens=10**12,
    max_cost=10.0**9,
)


def cpu_per_unit(makers: list[Callable[[], Awaitable[int]]]) -> list[float]:
    """CPU µs per unit of each maker, median of RUNS; rounds interleave them (load drifts)."""
    samples: list[list[float]] = [[] for _ in makers]
    for _ in range(RUNS):
        for index, make in enumerate(makers):

            async def go(make: Callable[[], Awaitable[int]] = make) -> tuple[float, int]:
                start = time.process_time()
                units = await make()
                return time.process_time() - start, units

            seconds, units = asyncio.run(go())
            samples[index].append(seconds / units * 1e6)
    return [statistics.median(values) for values in samples]


def main() -> None:
    base, answering, failing = cpu_per_unit([direct, wrapped_answering, wrapped_after_failure])
    print(f"CPU µs per event, {TOKENS:,}-delta faux stream, median of {RUNS}")
    print(f"{'':40} {'µs/event':>10} {'ratio':>8}")
    print(f"{'stream_simple (baseline)':40} {base:10.2f} {'1.00x':>8}")
    for label, value in (
        ("fallback_stream_fn, model answers", answering),
        ("fallback_stream_fn, one failed attempt", failing),
    ):
        print(f"{label:40} {value:10.2f} {value / base:7.2f}x")

    plain, limited = cpu_per_unit([lambda: loop_run(None), lambda: loop_run(NO_STOP)])
    print(f"\nCPU µs per agent turn (3 parallel tool calls), {TURNS:,} turns, median of {RUNS}")
    print(f"{'':40} {'µs/turn':>10} {'ratio':>8}")
    print(f"{'agent_loop, no limits (baseline)':40} {plain:10.1f} {'1.00x':>8}")
    print(f"{'agent_loop, every limit set':40} {limited:10.1f} {limited / plain:7.2f}x")


if __name__ == "__main__":
    main()
