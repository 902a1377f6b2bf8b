"""The Ray backend on a local Ray started here (``ray.init(num_cpus=2)``, once for the module):
items spread over two workers, the rate limit held for the whole cluster, a 429 pausing every
worker, no limiter round trip for providers without a limit, `tau batch --ray ADDRESS` joining
it, a killed worker."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tau.batch import RateLimit, read_results, run_batch
from tests.cli.conftest import clean_env
from tests.conftest import REPO

from .agents import HttpAgent, pid_agent, slow_agent
from .fake_llm import FakeLLM
from .test_cli import output_ids, write_input
from .test_http import first_refusal, most_in_a_window, prompts
from .test_local import collect, items

# Ray puts a single-node cluster on the machine's network address unless clusters are off,
# which makes it bind and talk on 127.0.0.1 only; read when ray is imported, so set first.
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
ray = pytest.importorskip("ray")

from ray.exceptions import RayActorError  # noqa: E402

from tau.batch.ray_backend import RemoteLimiter  # noqa: E402

from .counting_limiter import CountingLimiterHost  # noqa: E402


@pytest.fixture(scope="module", autouse=True)
def local_ray() -> Iterator[None]:
    # The workers import the test factories (tests.batch.agents) and this checkout's tau.
    path = os.pathsep.join([str(REPO / "src"), str(REPO)])
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        runtime_env={"env_vars": {"PYTHONPATH": path}},
    )
    assert ray.util.get_node_ip_address() == "127.0.0.1"
    yield
    ray.shutdown()


async def test_200_items_over_two_workers_are_each_written_once(tmp_path: Path) -> None:
    output = tmp_path / "out.jsonl"
    batch = run_batch(
        items(200), pid_agent, backend="ray", ray_workers=2, concurrency=8, output=output
    )
    results = await collect(batch)
    written = [r.id for r in read_results(output)]
    assert len(written) == 200 and set(written) == {f"item-{n}" for n in range(200)}
    assert sorted(r.id for r in results) == sorted(written)
    assert all(r.status == "ok" for r in results)
    pids = {int(r.text.split(" ", 1)[0]) for r in results}
    assert len(pids) == 2 and os.getpid() not in pids
    assert batch.summary.counts["ok"] == 200


async def test_the_rate_limit_holds_for_the_whole_cluster() -> None:
    with FakeLLM() as llm:
        limits = {"fake": RateLimit(rpm=600)}  # 10 a second, a burst of 10
        batch = run_batch(
            prompts(30),
            HttpAgent(llm.model()),
            backend="ray",
            ray_workers=2,
            concurrency=15,
            rate_limits=limits,
        )
        results = await collect(batch)
    assert [r.status for r in results] == ["ok"] * 30
    times = sorted(s.at for s in llm.seen)
    assert len(times) == 30
    for window in (0.5, 1.0, 2.0):
        # Two buckets of their own would let twice as much through.
        assert most_in_a_window(times, [1] * 30, window) <= 10 * window + 10 + 1


async def test_a_429_on_one_worker_pauses_every_worker_for_a_provider_without_limits() -> None:
    # No rate limit at all: the workers ask the limiter nothing per request, yet the pause
    # one of them reports reaches the other.
    refused_item = {"id": "refused", "prompt": "refused [status=429] [retry=1] [times=1]"}
    items = prompts(60, "[delay=0.03]")
    items.insert(10, refused_item)
    with FakeLLM() as llm:
        batch = run_batch(
            items,
            HttpAgent(llm.model()),
            backend="ray",
            ray_workers=2,
            concurrency=3,
            retry_delay=0.01,
        )
        results = await collect(batch)
    assert {r.status for r in results} == {"ok"}
    assert next(r for r in results if r.id == "refused").attempts == 2
    at = first_refusal(llm.seen)
    # Each worker had 3 items running when the 429 came (the driver keeps them full), and
    # 30 ms requests: without the pause the quiet second would hold dozens of requests.
    assert len([s for s in llm.seen if s.at < at]) >= 5
    assert [s for s in llm.seen if at + 0.1 < s.at < at + 0.9] == []
    assert len([s for s in llm.seen if s.at > at + 0.9]) >= 40


async def test_requests_without_a_limit_make_no_limiter_calls() -> None:
    limits = {"limited": RateLimit(rpm=60_000, tpm=1_000_000)}
    host = ray.remote(CountingLimiterHost).remote(limits)
    limiter, other = RemoteLimiter(host, limits), RemoteLimiter(host, limits)
    for _ in range(50):
        assert await limiter.acquire("free", 10, 100) == 0
        limiter.settle("free", 0, 110, 100)
        limiter.charge("free")
    calls = await host.calls.remote()
    assert calls.keys() == {"pauses"} and calls["pauses"] <= 2  # the watch, asking again
    assert await limiter.acquire("limited", 10, 100) == 110
    limiter.settle("limited", 110, 50, 40)
    limiter.charge("limited")
    reported = dict.fromkeys(("acquire", "settle", "charge"), 1)
    for _ in range(200):  # the reports are not waited for: until they have arrived
        calls = await host.calls.remote()
        if {k: calls.get(k) for k in reported} == reported:
            break
        await asyncio.sleep(0.01)
    assert {k: calls.get(k) for k in reported} == reported
    # A pause reported by one worker holds the other's requests to a provider without a limit
    # (it learns of it from its watch; the one reporting it, at once).
    await other.acquire("free")
    paused_at = time.monotonic()
    limiter.pause("free", 2.0)
    for _ in range(200):
        # Each watch: its first answer, a call waiting for the pause, the call after it.
        if (await host.calls.remote())["pauses"] >= 6:
            break
        await asyncio.sleep(0.01)

    async def ends() -> float:
        await other.acquire("free")
        return time.monotonic()

    assert min(await asyncio.gather(ends(), ends())) >= paused_at + 1.9
    ray.kill(host)
    # A limiter gone is an error on the next request, not pauses silently lost.
    with pytest.raises(RayActorError):
        for _ in range(100):
            await other.acquire("free")
            await asyncio.sleep(0.1)


async def wait_until_gone(prefix: str) -> None:
    """Until no actor named ``prefix…`` is alive (Ray's kill is asynchronous: give its control
    store a moment to list them dead)."""
    for _ in range(100):
        if not [n for n in ray.util.list_named_actors() if n.startswith(prefix)]:
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"actors {prefix}… still alive: {ray.util.list_named_actors()}")


async def test_tau_batch_joins_a_running_cluster(tmp_path: Path) -> None:
    # `tau batch --ray ADDRESS` is a second driver on the cluster: its workers and limiter
    # leave with it, the cluster stays.
    source, output = write_input(tmp_path / "in.jsonl", 30), tmp_path / "out.jsonl"
    address = ray.get_runtime_context().gcs_address
    args = ["batch", str(source), "-o", str(output), "-m", "faux/echo", "--ray", address]
    # A driver joining a cluster needs the cluster's token, which ray.init wrote in this
    # process's home (the user's tau runs with a home of its own).
    token = Path.home() / ".ray" / "auth_token"
    env = clean_env(tmp_path, **({"RAY_AUTH_TOKEN_PATH": str(token)} if token.exists() else {}))
    done = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-m", "tau.cli", *args, "--concurrency", "4"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr
    assert "30 of 30 items done this run (30 ok, 0 error, 0 limited)" in done.stdout
    assert sorted(output_ids(output)) == sorted(f"r{n}" for n in range(30))
    await wait_until_gone("tau-batch-")
    assert ray.cluster_resources().get("CPU") == 2  # the cluster is still up


async def test_a_killed_worker_loses_no_items(tmp_path: Path) -> None:
    output = tmp_path / "out.jsonl"
    batch = run_batch(
        items(40), slow_agent, backend="ray", ray_workers=2, concurrency=4, output=output
    )
    results = []
    killed = ""
    async for result in batch:
        results.append(result)
        if len(results) == 4:
            names = [n for n in ray.util.list_named_actors() if "-worker-" in n]
            killed = sorted(names)[0]
            ray.kill(ray.get_actor(killed))
    assert killed
    written = [r.id for r in read_results(output)]
    assert len(written) == 40 and set(written) == {f"item-{n}" for n in range(40)}
    assert all(r.status == "ok" for r in results)
    await wait_until_gone(killed.rsplit("-", 2)[0])  # the workers, replacement, limiter
