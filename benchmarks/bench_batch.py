"""What ``tau.batch`` adds per item: scheduling, result building, writing, against a bare loop.

Run: ``python benchmarks/bench_batch.py`` (after ``pip install -e '.[ray]'``, or from a
checkout). Every figure is next to its baseline measured in the same run, with the ratio.

* Local backend: ITEMS items, each one ``Agent.prompt`` on the faux echo model (a fresh agent
  per item), CONCURRENCY at once. The baseline is the bare loop a user would write:
  ``asyncio.gather`` over the items with an ``asyncio.Semaphore``. Then ``run_batch`` on the
  same items: no output file, then the JSONL output (default fsync policy), then with a rate
  limit that is never reached (the buckets' cost per request). Wall and CPU µs per item,
  median of RUNS, variants interleaved within each round (target: ≤ 1.2× the baseline).
* Ray backend (when Ray is installed): the same items on a local Ray (``num_cpus=2``, two
  workers, CONCURRENCY each), one round after a warm-up batch; the per-item figure is wall
  time, since the work runs in other processes. Its overhead over the local backend is the
  price of a remote call per item (the faux provider has no rate limit, so its requests make
  no round trip to the cluster's rate-limit actor).
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from tau.agent import Agent  # noqa: E402
from tau.ai import get_model  # noqa: E402
from tau.batch import RateLimit, run_batch  # noqa: E402

ITEMS = 10_000
RAY_ITEMS = 2_000
CONCURRENCY = 16
RUNS = 5
MODEL = get_model("faux", "echo")
INPUTS = [{"id": f"item-{n}", "prompt": f"question number {n}"} for n in range(ITEMS)]


def make_agent() -> Agent:
    return Agent(model=MODEL)


async def bare() -> int:
    """What a user writes by hand: a semaphore and gather."""
    gate = asyncio.Semaphore(CONCURRENCY)

    async def one(item: dict[str, str]) -> str:
        async with gate:
            return (await make_agent().prompt(item["prompt"])).text

    return len(await asyncio.gather(*(one(item) for item in INPUTS)))


async def batched(**options: Any) -> int:
    count = 0
    async for _ in run_batch(
        INPUTS, make_agent, concurrency=CONCURRENCY, progress=False, **options
    ):
        count += 1
    return count


async def to_file() -> int:
    with tempfile.TemporaryDirectory() as folder:
        return await batched(output=Path(folder) / "out.jsonl")


async def limited() -> int:
    return await batched(rate_limits={"faux": RateLimit(rpm=1e9, tpm=1e12)})


def measure(variant: Callable[[], Awaitable[int]]) -> tuple[float, float]:
    """(wall µs, CPU µs) per item of one run in a fresh event loop."""
    wall, cpu = time.perf_counter(), time.process_time()
    done = asyncio.run(variant())
    assert done == ITEMS, done
    return (
        (time.perf_counter() - wall) / ITEMS * 1e6,
        (time.process_time() - cpu) / ITEMS * 1e6,
    )


def local() -> None:
    variants: dict[str, Callable[[], Awaitable[int]]] = {
        "gather + semaphore (baseline)": bare,
        "run_batch, no output": batched,
        "run_batch, JSONL output": to_file,
        "run_batch, rate limit never reached": limited,
    }
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in variants}
    measure(bare)  # warm-up: imports, the faux adapter
    for _ in range(RUNS):
        for name, variant in variants.items():
            samples[name].append(measure(variant))
    base_wall = statistics.median(s[0] for s in samples["gather + semaphore (baseline)"])
    base_cpu = statistics.median(s[1] for s in samples["gather + semaphore (baseline)"])
    print(f"Local backend: {ITEMS:,} faux items, concurrency {CONCURRENCY}, median of {RUNS}")
    print(f"{'':38}{'wall µs':>10}{'ratio':>8}{'CPU µs':>10}{'ratio':>8}")
    for name, values in samples.items():
        wall = statistics.median(v[0] for v in values)
        cpu = statistics.median(v[1] for v in values)
        print(f"{name:38}{wall:10.1f}{wall / base_wall:7.2f}x{cpu:10.1f}{cpu / base_cpu:7.2f}x")


async def timed(**options: Any) -> tuple[float, float]:
    """(seconds to the first result, µs per item after it) of a batch of RAY_ITEMS."""
    started = time.perf_counter()
    first = 0.0
    count = 0
    batch = run_batch(
        INPUTS[:RAY_ITEMS], make_agent, concurrency=CONCURRENCY, progress=False, **options
    )
    async for _ in batch:
        count += 1
        if count == 1:
            first = time.perf_counter()
    assert count == RAY_ITEMS, count
    return first - started, (time.perf_counter() - first) / (RAY_ITEMS - 1) * 1e6


def ray_backend() -> None:
    if importlib.util.find_spec("ray") is None:
        print("\nRay backend: not measured (pip install 'tau[ray]')")
        return
    # A single-node Ray on 127.0.0.1 only (read when ray is imported).
    os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    import ray

    path = os.pathsep.join([str(ROOT / "src"), str(ROOT / "benchmarks")])
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        runtime_env={"env_vars": {"PYTHONPATH": path}},
    )
    try:
        on_ray = {"backend": "ray", "ray_workers": 2}
        asyncio.run(timed(**on_ray))  # warm-up: Ray's own first-use costs
        ray_start, ray_item = asyncio.run(timed(**on_ray))
        local_start, local_item = asyncio.run(timed())
    finally:
        ray.shutdown()
    print(f"\nRay backend: {RAY_ITEMS:,} faux items, local Ray (2 CPUs), 2 workers × {CONCURRENCY}")
    print(f"{'':38}{'first result s':>15}{'wall µs/item after':>20}{'ratio':>8}")
    print(f"{'run_batch, local backend':38}{local_start:15.3f}{local_item:20.1f}{1.0:7.2f}x")
    print(
        f"{'run_batch, backend=ray':38}{ray_start:15.3f}{ray_item:20.1f}{ray_item / local_item:7.2f}x"
    )
    print(
        f"Ray's overhead: {ray_item - local_item:,.0f} µs per item once running, "
        f"{ray_start - local_start:.1f} s to start the workers"
    )


def main() -> None:
    local()
    ray_backend()


if __name__ == "__main__":
    main()
