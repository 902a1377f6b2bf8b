"""Core figures of tau.ai: cold import time, and CPU cost per streamed event.

Run: ``python benchmarks/bench_core.py`` (after ``pip install -e .``, or from a checkout).
Each figure is printed next to a baseline measured in the same run, with the ratio.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from tau.ai import Context, UserMessage, stream  # noqa: E402
from tau.ai.adapters import EventStream  # noqa: E402
from tau.ai.providers.faux import FauxResponse, faux_model, text  # noqa: E402

IMPORT_RUNS = 7
STREAM_RUNS = 5
TOKENS = 10_000
CHARS_PER_TOKEN = 4


# --------------------------------------------------------------------------- cold import

_IMPORT_PROBE = (
    "import time; t = time.perf_counter(); import {module}; print(time.perf_counter() - t)"
)


def cold_import_ms(module: str) -> float:
    """Median wall time of ``import module`` in a fresh interpreter, in milliseconds."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "PYTHONDONTWRITEBYTECODE": ""}
    samples = []
    for _ in range(IMPORT_RUNS):
        out = subprocess.run(
            [sys.executable, "-c", _IMPORT_PROBE.format(module=module)],
            check=True,
            capture_output=True,
            text=True,
            env=env,
        ).stdout
        samples.append(float(out) * 1000)
    return statistics.median(samples)


# --------------------------------------------------------------------------- per-event CPU


async def faux_stream() -> int:
    """Consume a faux response of TOKENS text deltas; returns the number of events."""
    body = "word" * TOKENS
    model = faux_model([FauxResponse([text(body)], chunk_size=CHARS_PER_TOKEN)])
    count = 0
    async for _ in stream(model, Context([UserMessage("go")])):
        count += 1
    return count


async def event_stream_pump() -> int:
    """tau's EventStream alone: a producer task pushing TOKENS tiny objects, yielding each time."""
    s: EventStream[object, int] = EventStream(lambda e: e is None, lambda e: 0)

    async def produce() -> None:
        item = object()
        for _ in range(TOKENS):
            await asyncio.sleep(0)
            s.push(item)
        s.push(None)

    task = asyncio.create_task(produce())
    count = 0
    async for _ in s:
        count += 1
    await task
    return count


async def queue_pump() -> int:
    """Baseline: the same pump over a bare asyncio.Queue."""
    q: asyncio.Queue[object | None] = asyncio.Queue()

    async def produce() -> None:
        item = object()
        for _ in range(TOKENS):
            await asyncio.sleep(0)
            q.put_nowait(item)
        q.put_nowait(None)

    task = asyncio.create_task(produce())
    count = 0
    while (await q.get()) is not None:
        count += 1
    await task
    return count + 1


def cpu_us_per_event(run: Callable[[], Coroutine[Any, Any, int]]) -> float:
    """Median CPU microseconds per consumed event, measured inside the event loop."""

    async def timed() -> float:
        start = time.process_time()
        events = await run()
        return (time.process_time() - start) * 1e6 / events

    asyncio.run(timed())  # warm-up: imports, first-use caches
    return statistics.median(asyncio.run(timed()) for _ in range(STREAM_RUNS))


def main() -> None:
    """Print every figure with its baseline and ratio."""
    print(f"python {sys.version.split()[0]} on {sys.platform}")
    print()
    tau_ms = cold_import_ms("tau.ai")
    asyncio_ms = cold_import_ms("asyncio")
    print(f"cold import (median of {IMPORT_RUNS} fresh interpreters)")
    print(f"  import tau.ai           {tau_ms:8.1f} ms")
    print(f"  import asyncio          {asyncio_ms:8.1f} ms   (baseline)")
    print(f"  ratio                   {tau_ms / asyncio_ms:8.2f} x")
    print(f"  tau's own share         {tau_ms - asyncio_ms:8.1f} ms")
    print()
    faux = cpu_us_per_event(faux_stream)
    pump = cpu_us_per_event(event_stream_pump)
    base = cpu_us_per_event(queue_pump)
    print(f"CPU per event, {TOKENS:,}-token stream (median of {STREAM_RUNS}, time.process_time)")
    print(f"  faux provider stream    {faux:8.2f} us/event")
    print(f"  EventStream pump        {pump:8.2f} us/event")
    print(f"  asyncio.Queue pump      {base:8.2f} us/event   (baseline)")
    print(f"  ratio faux / baseline   {faux / base:8.2f} x")
    print(f"  ratio pump / baseline   {pump / base:8.2f} x")


if __name__ == "__main__":
    main()
