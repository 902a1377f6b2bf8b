"""The Ray backend: the items spread over the workers of a Ray cluster (``pip install 'tau[ray]'``).

* **Cluster.** ``ray_address`` is passed to ``ray.init`` (None: the cluster in ``RAY_ADDRESS``,
  else a local Ray started for the batch and shut down after it). A Ray already initialised in
  this process is used as it is.
* **Workers.** ``ray_workers`` actors (default: one per CPU of the cluster), each holding one
  CPU and running up to ``concurrency`` items at once in its own asyncio loop, exactly as the
  local backend does. The driver keeps each worker ``concurrency`` items busy and hands out the
  next item as one finishes, so a fast worker takes more.
* **Rate limits.** One more actor (no CPU) holds every provider's buckets
  (:class:`~tau.batch.ProviderLimiter`): each LLM request of every worker to a provider with a
  limit asks it first, so the limits hold for the cluster. A request to a provider without one
  makes no round trip; 429s reported by any worker still pause every provider for all workers
  (see :class:`RemoteLimiter`).
* **Output.** Results travel back to the driver, which alone writes the output file.
* **Failures.** A worker that dies (killed, out of memory, its node lost) fails its running
  items; the driver puts them back in the queue for the other workers and starts a
  replacement. An item whose worker dies ``max_attempts`` times is recorded as an error.
* **Pickling.** ``make_agent`` goes to the workers by pickle: use a module-level function (or
  an instance of a module-level class, like :class:`~tau.batch.ModelAgent`) from a module the
  workers can import; a lambda or a closure over unpicklable state fails at start.
"""

from __future__ import annotations

import asyncio
import itertools
import math
import os
import time
import uuid
from collections import deque
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import ray
from ray.exceptions import RayActorError, RayTaskError

from tau.batch.items import BatchItem
from tau.batch.limits import ProviderLimiter, RateLimit
from tau.batch.local import RunningItems
from tau.batch.result import BatchResult
from tau.batch.runner import AgentFactory, BatchFatalError, ItemRunner, RunSettings

__all__ = ["RayBackend", "RemoteLimiter"]

NAME_PREFIX = "tau-batch-"
"""Actors are named ``tau-batch-<run>-limits`` and ``tau-batch-<run>-worker-<n>``."""
STOP_MARGIN = 10.0
"""Seconds after a stop's grace before the driver kills workers that did not let go."""


class _LimiterHost:
    """The actor holding the cluster's buckets, and telling the workers of every pause."""

    def __init__(self, limits: Mapping[str, RateLimit]) -> None:
        self.limiter = ProviderLimiter(limits)
        self._paused: set[str] = set()
        self._pauses = 0
        self._paused_again = asyncio.Event()

    async def acquire(self, provider: str, prompt_tokens: int, max_output: int | None) -> int:
        return await self.limiter.acquire(provider, prompt_tokens, max_output)

    def settle(self, provider: str, estimate: int, total: int, output: int) -> None:
        self.limiter.settle(provider, estimate, total, output)

    def charge(self, provider: str) -> None:
        self.limiter.charge(provider)

    async def pause(self, provider: str, seconds: float) -> None:
        before = self.limiter.paused_until(provider)
        self.limiter.pause(provider, seconds)
        if self.limiter.paused_until(provider) > before:
            self._paused.add(provider)
            self._pauses += 1
            self._paused_again.set()
            self._paused_again = asyncio.Event()

    async def pauses(self, seen: int) -> tuple[int, dict[str, float]]:
        """Once more than ``seen`` pauses have begun: their count, and the seconds each paused
        provider has left (seconds, not moments: the workers' clocks are not this one)."""
        while self._pauses <= seen:
            await self._paused_again.wait()
        now = time.monotonic()
        left = {p: self.limiter.paused_until(p) - now for p in self._paused}
        return self._pauses, {p: seconds for p, seconds in left.items() if seconds > 0}


class RemoteLimiter:
    """A worker's view of the limiter actor (the :class:`~tau.batch.runner.Limiter` protocol).

    A request to a provider with a limit waits for the actor's ``acquire``. One to a provider
    without a limit makes no round trip: it waits only for the provider's pause as this worker
    knows it. The worker learns of a pause at once when it reports it itself, and otherwise
    from a long-poll on the actor (``pauses``), answered as soon as any worker reports one. The
    staleness is bounded by two Ray messages (the report to the actor, its answer to the
    worker; milliseconds on a healthy cluster), with no polling interval: only requests that
    start within that window still go out, as do those between the 429 and its report. The
    first request to such a provider waits for the first answer, so a worker started during a
    pause (a replacement) holds it too. The reports after a request (``settle``,
    ``charge``) are sent only for providers whose buckets use them, and are not waited for.
    """

    def __init__(self, handle: Any, limits: Mapping[str, RateLimit]) -> None:
        self.handle = handle
        self._counted = frozenset(p for p, limit in limits.items() if limit.tpm)
        self._charged = frozenset(p for p, limit in limits.items() if limit.rpm)
        self._limited = self._counted | self._charged
        self._paused_until: dict[str, float] = {}
        self._watcher: asyncio.Task[None] | None = None
        self._first_answer: asyncio.Future[None] | None = None
        self._failure: Exception | None = None

    def counts_tokens(self, provider: str) -> bool:
        return provider in self._counted

    async def acquire(
        self, provider: str, prompt_tokens: int = 0, max_output: int | None = None
    ) -> int:
        if provider in self._limited:
            granted: int = await self.handle.acquire.remote(provider, prompt_tokens, max_output)
            return granted
        if self._first_answer is None:
            self._first_answer = asyncio.get_running_loop().create_future()
            self._watcher = asyncio.create_task(self._watch(self._first_answer))
        await self._first_answer
        if self._failure is not None:  # the limiter is gone: pauses could be missed
            raise self._failure
        while True:
            wait = self._paused_until.get(provider, 0.0) - time.monotonic()
            if wait <= 0:
                return 0
            await asyncio.sleep(wait)  # then again: the pause may have grown meanwhile

    async def _watch(self, first_answer: asyncio.Future[None]) -> None:
        seen = -1
        try:
            while True:
                seen, pauses = await self.handle.pauses.remote(seen)
                now = time.monotonic()
                for provider, seconds in pauses.items():
                    self._hold(provider, now + seconds)
                if not first_answer.done():
                    first_answer.set_result(None)
        except Exception as exc:  # kept for the next request, which raises it
            self._failure = exc
            if not first_answer.done():
                first_answer.set_result(None)

    def _hold(self, provider: str, until: float) -> None:
        self._paused_until[provider] = max(until, self._paused_until.get(provider, 0.0))

    def settle(self, provider: str, estimate: int, total: int, output: int) -> None:
        if provider in self._counted:
            self.handle.settle.remote(provider, estimate, total, output)

    def charge(self, provider: str) -> None:
        if provider in self._charged:
            self.handle.charge.remote(provider)

    def pause(self, provider: str, seconds: float) -> None:
        if seconds > 0 and math.isfinite(seconds):
            self._hold(provider, time.monotonic() + seconds)
        self.handle.pause.remote(provider, seconds)


class _WorkerHost:
    """A worker actor: runs the items it is given, ``concurrency`` at once."""

    def __init__(
        self,
        make_agent: AgentFactory,
        settings: RunSettings,
        limiter: Any,
        limits: Mapping[str, RateLimit],
    ) -> None:
        self.runner = ItemRunner(make_agent, RemoteLimiter(limiter, limits), settings)
        self.running = RunningItems()

    async def run(self, item: BatchItem) -> BatchResult | None:
        return await self.running.run(self.runner, item)

    def stop(self, grace: float) -> None:
        self.running.stop(grace)

    def pid(self) -> int:
        return os.getpid()


class RayBackend:
    """Runs the items on Ray (see the module docstring)."""

    def __init__(
        self,
        make_agent: AgentFactory,
        settings: RunSettings,
        limits: Mapping[str, RateLimit],
        *,
        concurrency: int,
        address: str | None = None,
        workers: int | None = None,
    ) -> None:
        if workers is not None and (
            isinstance(workers, bool) or not isinstance(workers, int) or workers < 1
        ):
            raise ValueError(f"ray_workers must be a whole number above 0, got {workers!r}")
        self.make_agent = make_agent
        self.settings = settings
        self.limits = dict(limits)
        self.concurrency = concurrency
        self.address = address
        self.worker_count = workers
        self.name = f"{NAME_PREFIX}{uuid.uuid4().hex[:8]}"
        self.stopping = False
        self._workers: list[Any] = []
        self._kill_timer: asyncio.TimerHandle | None = None
        self._numbers = itertools.count()

    async def run(
        self, items: list[BatchItem], emit: Callable[[BatchResult], Awaitable[None]]
    ) -> None:
        started_ray = not ray.is_initialized()
        if started_ray:
            ray.init(address=self.address, log_to_driver=False)
        limiter = (
            ray.remote(_LimiterHost)
            .options(name=f"{self.name}-limits", num_cpus=0, max_concurrency=100_000)
            .remote(self.limits)
        )
        try:
            resources: dict[str, float] = ray.cluster_resources()  # type: ignore[no-untyped-call]
            count = self.worker_count or max(1, int(resources.get("CPU", 1)))
            workers = [self._start_worker(limiter) for _ in range(count)]
            await self._dispatch(deque(items), workers, limiter, emit)
        finally:
            if self._kill_timer is not None:
                self._kill_timer.cancel()
            for actor in [*self._workers, limiter]:
                ray.kill(actor)
            self._workers = []
            if started_ray:
                ray.shutdown()

    def _start_worker(self, limiter: Any) -> Any:
        actor = (
            ray.remote(_WorkerHost)
            .options(
                name=f"{self.name}-worker-{next(self._numbers)}",
                num_cpus=1,
                max_concurrency=self.concurrency + 8,  # room for stop() beside the items
            )
            .remote(self.make_agent, self.settings, limiter, self.limits)
        )
        self._workers.append(actor)
        return actor

    async def _dispatch(
        self,
        queue: deque[BatchItem],
        workers: list[Any],
        limiter: Any,
        emit: Callable[[BatchResult], Awaitable[None]],
    ) -> None:
        load = {id(worker): 0 for worker in workers}
        inflight: dict[asyncio.Future[Any], tuple[BatchItem, Any]] = {}
        try:
            await self._loop(queue, workers, limiter, emit, load, inflight)
        finally:
            for future in inflight:
                future.cancel()
            if inflight:
                await asyncio.gather(*inflight, return_exceptions=True)

    async def _loop(
        self,
        queue: deque[BatchItem],
        workers: list[Any],
        limiter: Any,
        emit: Callable[[BatchResult], Awaitable[None]],
        load: dict[int, int],
        inflight: dict[asyncio.Future[Any], tuple[BatchItem, Any]],
    ) -> None:
        deaths: dict[str, int] = {}
        while inflight or (queue and not self.stopping):
            if not self.stopping:
                for worker in workers:
                    while queue and load[id(worker)] < self.concurrency:
                        item = queue.popleft()
                        inflight[asyncio.ensure_future(_result(worker.run.remote(item)))] = (
                            item,
                            worker,
                        )
                        load[id(worker)] += 1
            if not inflight:
                break
            finished, _ = await asyncio.wait(inflight, return_when=asyncio.FIRST_COMPLETED)
            for future in finished:
                item, worker = inflight.pop(future)
                load[id(worker)] -= 1
                try:
                    result = future.result()
                except RayActorError:
                    if worker in workers:  # the first of its items to report the death
                        workers.remove(worker)
                        if not self.stopping:
                            replacement = self._start_worker(limiter)
                            workers.append(replacement)
                            load[id(replacement)] = 0
                    if self.stopping:
                        continue  # dropped: a resume runs it
                    deaths[item.id] = deaths.get(item.id, 0) + 1
                    if deaths[item.id] < self.settings.max_attempts:
                        queue.appendleft(item)
                        continue
                    result = BatchResult(
                        id=item.id,
                        status="error",
                        error=f"the Ray worker running it died {deaths[item.id]} times",
                        error_kind="worker_died",
                        attempts=deaths[item.id],
                    )
                except RayTaskError as exc:
                    cause = getattr(exc, "cause", None)
                    if isinstance(cause, BatchFatalError):
                        raise BatchFatalError(str(cause)) from None
                    raise
                if result is not None:
                    await emit(result)

    def stop(self, grace: float) -> None:
        """Start no new item; each worker drops its unstarted items and gives the others
        ``grace`` seconds; workers still busy well after that are killed."""
        self.stopping = True
        for worker in self._workers:
            worker.stop.remote(grace)
        if self._kill_timer is None:
            loop = asyncio.get_running_loop()
            self._kill_timer = loop.call_later(grace + STOP_MARGIN, self._kill_workers)

    def _kill_workers(self) -> None:
        for worker in self._workers:
            ray.kill(worker)


async def _result(ref: Any) -> Any:
    return await ref
