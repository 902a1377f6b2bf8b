"""The local backend: ``concurrency`` asyncio tasks taking items in turn, in this process.

A Ray worker runs its items the same way; both stop through :class:`RunningItems`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator, Sequence

from tau.batch.items import BatchItem
from tau.batch.result import BatchResult
from tau.batch.runner import ItemDropped, ItemRunner, ItemState

__all__ = ["Emit", "LocalBackend", "RunningItems"]

Emit = Callable[[BatchResult], Awaitable[None]]
"""Takes a finished item's result (writes it, counts it, hands it on)."""


class RunningItems:
    """The tasks running items, and how a stop treats them.

    ``stop(grace)``: items that have not started (no LLM request let through yet, or waiting
    to retry) are dropped at once; the others get ``grace`` seconds to finish, then are
    cancelled. A dropped or cancelled item has no result and is not written.
    """

    def __init__(self) -> None:
        self.states: dict[asyncio.Task[object], ItemState] = {}
        self.stopping = False
        self.dropped: set[asyncio.Task[object]] = set()
        self._timer: asyncio.TimerHandle | None = None

    async def run(self, runner: ItemRunner, item: BatchItem) -> BatchResult | None:
        """``runner.run(item)`` in the current task; None if the stop dropped it."""
        task = asyncio.current_task()
        assert task is not None
        state = ItemState()
        state.stopping = self.stopping
        self.states[task] = state
        try:
            return await runner.run(item, state)
        except ItemDropped:
            return None
        except asyncio.CancelledError:
            if task in self.dropped:
                self.dropped.discard(task)
                task.uncancel()
                return None
            raise
        finally:
            del self.states[task]

    def stop(self, grace: float) -> None:
        """Start no new item; drop unstarted ones now and cancel the rest after ``grace`` s."""
        self.stopping = True
        for task, state in list(self.states.items()):
            state.stopping = True
            if not state.started or grace <= 0:
                self._drop(task)
        if grace > 0 and self.states:
            if self._timer is not None:
                self._timer.cancel()
            self._timer = asyncio.get_running_loop().call_later(grace, self._drop_all)

    def _drop_all(self) -> None:
        for task in list(self.states):
            self._drop(task)

    def _drop(self, task: asyncio.Task[object]) -> None:
        if task not in self.dropped and not task.done():
            self.dropped.add(task)
            task.cancel()

    def close(self) -> None:
        """Forget the grace timer."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None


class LocalBackend:
    """Runs the items in this process's event loop."""

    def __init__(self, runner: ItemRunner, concurrency: int) -> None:
        self.runner = runner
        self.concurrency = concurrency
        self.running = RunningItems()

    async def run(self, items: Sequence[BatchItem], emit: Emit) -> None:
        """Run every item (until stopped), handing each result to ``emit`` as it finishes."""
        queue = iter(items)
        count = min(self.concurrency, len(items))
        workers = [asyncio.ensure_future(self._work(queue, emit)) for _ in range(count)]
        try:
            await asyncio.gather(*workers)
        except BaseException:
            for worker in workers:
                worker.cancel()
            await asyncio.gather(*workers, return_exceptions=True)
            raise
        finally:
            self.running.close()

    async def _work(self, queue: Iterator[BatchItem], emit: Emit) -> None:
        running, runner = self.running, self.runner
        for item in queue:
            if running.stopping:
                return
            result = await running.run(runner, item)
            if result is not None:
                await emit(result)

    def stop(self, grace: float) -> None:
        """See :meth:`RunningItems.stop`."""
        self.running.stop(grace)
