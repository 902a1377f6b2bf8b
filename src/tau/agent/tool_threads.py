"""The worker threads synchronous tools run in: started on demand, reused, never a limit.

Starting a thread per tool call cost about 230 µs a call (the new thread must be scheduled
before ``Thread.start`` returns), ten times a trivial tool's whole turn. These workers stay
alive between calls instead: a call is handed to an idle worker through a queue, and a new
worker starts only when every worker is busy. So there is no cap: a tool that blocks for good
holds its own worker and never delays another call (a bounded pool such as
:class:`concurrent.futures.ThreadPoolExecutor` would queue the next calls behind it). Workers
are daemons, so a stuck tool never keeps the process from exiting, and a worker idle for
:data:`IDLE_SECONDS` ends.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import contextvars
import os
import queue
import threading
import weakref
from collections.abc import Callable
from typing import Any

__all__ = ["ESCALATE_SECONDS", "HANDOFF_SECONDS", "IDLE_SECONDS", "run_in_thread"]

IDLE_SECONDS = 30.0
"""How long an idle worker waits for the next call before it ends."""

Job = Callable[[], None]
"""What a worker runs: it never raises."""


class _Workers:
    """Daemon worker threads sharing one job queue.

    ``idle`` counts the workers waiting for a job that no submitted job has claimed yet: a
    submission claims one (and queues the job) or starts a new worker with the job in hand.
    """

    def __init__(self) -> None:
        self.jobs: queue.SimpleQueue[Job] = queue.SimpleQueue()
        self.idle = 0
        self.lock = threading.Lock()

    def submit(self, job: Job) -> None:
        with self.lock:
            claimed = self.idle > 0
            if claimed:
                self.idle -= 1
        if claimed:
            self.jobs.put(job)
        else:
            threading.Thread(target=self.serve, args=(job,), name="tau-tool", daemon=True).start()

    def serve(self, job: Job) -> None:
        get = self.jobs.get
        while True:
            job()  # never raises: a job delivers its own exceptions
            del job  # nothing of a finished call stays alive in an idle worker
            with self.lock:
                self.idle += 1
            while True:
                try:
                    job = get(timeout=IDLE_SECONDS)
                    break
                except queue.Empty:
                    with self.lock:
                        if self.idle > 0:  # nobody counts on this worker: end it
                            self.idle -= 1
                            return
                    # Every idle worker is claimed: a job for this one is on its way.


_workers = _Workers()


def _after_fork() -> None:
    # A forked child has none of its parent's threads: start from no workers.
    global _workers
    _workers = _Workers()


os.register_at_fork(after_in_child=_after_fork)


ESCALATE_SECONDS = 0.001
"""How long the calls of one batch wait behind a call still running before another worker
takes them."""

HANDOFF_SECONDS = 0.0002
"""How long the loop's thread waits for a batch it handed out before going back to the loop.

Most tools are quick: their results are then taken at once, without the round trip through
the loop's self-pipe and the thread switches it costs (measured in ``bench_agent.py``). A
slower call delays the loop by at most this, then is awaited as usual."""

Call = Callable[["_Batch"], None]
"""One tool call as a worker runs it: it reports its own outcome, and never raises."""

_Result = tuple[asyncio.Future[Any], Any, "BaseException | None", "_Batch"]


class _Batch:
    """The calls handed out in one pass of the event loop (a parallel turn's tools).

    One worker takes them one after another, so a turn of quick tools wakes one thread, not
    one per call. So that a slow call never holds up the others for long, every
    :data:`ESCALATE_SECONDS` while calls are still waiting, one more worker joins in.
    """

    __slots__ = ("finished", "jobs", "timer")

    def __init__(self, jobs: list[Call]) -> None:
        self.jobs = collections.deque(jobs)
        self.timer: asyncio.TimerHandle | None = None
        # Held until a worker has run out of calls: what the loop's short hand-off wait waits
        # on. Only one worker serves a batch during that wait (escalation is a loop callback).
        self.finished = threading.Lock()
        self.finished.acquire()

    def work(self) -> None:
        # Runs in a worker; deque.popleft is atomic, so workers sharing the batch never take
        # the same call.
        jobs = self.jobs
        while True:
            try:
                job = jobs.popleft()
            except IndexError:
                break
            job(self)
            del job
        # An escalated worker that finishes too finds it released already.
        with contextlib.suppress(RuntimeError):
            self.finished.release()


class _LoopLink:
    """One event loop's traffic with the workers: calls out in batches, results back in one
    wake-up for all that arrive together.

    It refers to its loop weakly: the links are kept per loop in a weak-keyed mapping, and a
    strong reference from the value would keep every loop that ever ran a tool alive.
    """

    __slots__ = ("handing_off", "lock", "loop_ref", "outgoing", "results", "waking")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop_ref = weakref.ref(loop)
        self.outgoing: list[Call] = []
        self.results: collections.deque[_Result] = collections.deque()
        self.waking = False
        # True while the loop's thread waits for a batch: results then need no wake-up. The
        # lock orders that flag with a worker's append, so no result is left without one.
        self.handing_off = False
        self.lock = threading.Lock()

    # ------------------------------------------------------------------ on the loop's thread

    def loop(self) -> asyncio.AbstractEventLoop:
        """The loop (alive: this runs on it)."""
        loop = self.loop_ref()
        assert loop is not None
        return loop

    def send(self, call: Call) -> None:
        """Queue ``call``: it goes to a worker with the others sent in this pass of the loop."""
        self.outgoing.append(call)
        if len(self.outgoing) == 1:
            self.loop().call_soon(self.flush)

    def flush(self) -> None:
        batch = _Batch(self.outgoing)
        self.outgoing = []
        self.handing_off = True
        _workers.submit(batch.work)
        finished = batch.finished.acquire(timeout=HANDOFF_SECONDS)
        with self.lock:
            self.handing_off = False
        if self.results:
            self.deliver()
        if not finished and batch.jobs:  # calls wait behind a slow one
            batch.timer = self.loop().call_later(ESCALATE_SECONDS, self.escalate, batch)

    def escalate(self, batch: _Batch) -> None:
        batch.timer = None
        if batch.jobs:  # calls still wait behind a slow one: one more worker
            _workers.submit(batch.work)
            batch.timer = self.loop().call_later(ESCALATE_SECONDS, self.escalate, batch)

    def deliver(self) -> None:
        self.waking = False
        results = self.results
        while results:
            future, value, error, batch = results.popleft()
            if batch.timer is not None and not batch.jobs:
                batch.timer.cancel()
                batch.timer = None
            if future.done():  # the awaiting task was cancelled
                continue
            if error is not None:
                future.set_exception(error)
            else:
                future.set_result(value)

    # ------------------------------------------------------------------ in a worker

    def post(self, result: _Result) -> None:
        # deque.append and the flag are atomic under the GIL; a result appended while
        # deliver() runs is either taken by it or wakes the loop again.
        loop = self.loop_ref()
        if loop is None or loop.is_closed():
            # Nobody is waiting; a result kept here would keep its future's loop alive.
            self.results.clear()
            return
        with self.lock:
            self.results.append(result)
            if self.handing_off:  # the loop's thread is waiting and takes it itself
                return
        if not self.waking:
            self.waking = True
            try:
                loop.call_soon_threadsafe(self.deliver)
            except RuntimeError:  # the loop closed meanwhile
                self.results.clear()


_links: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _LoopLink] = (
    weakref.WeakKeyDictionary()
)


def _describe_callable(fn: Callable[..., Any]) -> str:
    return str(getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or fn)


async def run_in_thread(fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)`` in a worker thread, awaited without blocking the loop.

    The workers are reused daemons with no cap: unlike :func:`asyncio.to_thread` (the loop's
    default executor, bounded, which ``asyncio.run`` joins at exit), a call that never returns
    holds only its own worker, and does not keep the program alive once nobody awaits it.
    Every exception, ``BaseException`` included, is raised to the awaiting coroutine; the call
    runs in a copy of the caller's context variables.
    """
    loop = asyncio.get_running_loop()
    link = _links.get(loop)
    if link is None:
        link = _links[loop] = _LoopLink(loop)
    future: asyncio.Future[Any] = loop.create_future()
    context = contextvars.copy_context()

    def work(batch: _Batch) -> None:
        value: Any = None
        error: BaseException | None = None
        try:
            value = context.run(fn, *args, **kwargs)
        except StopIteration as exc:  # a future cannot carry StopIteration
            error = RuntimeError(f"{_describe_callable(fn)} raised StopIteration")
            error.__cause__ = exc
        except BaseException as exc:
            error = exc
        link.post((future, value, error, batch))

    link.send(work)
    return await future
