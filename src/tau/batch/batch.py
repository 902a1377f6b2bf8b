"""``run_batch``: one agent over many inputs, with limits, retries, a crash-safe output and progress.

::

    async for result in run_batch("questions.jsonl", make_agent, output="answers.jsonl"):
        print(result.id, result.status, result.text)

    summary = run_batch_sync("questions.jsonl", make_agent, output="answers.jsonl")

Everything that can be checked is checked when ``run_batch`` is called, before anything
runs: the input (every malformed line, every duplicate id), the options, the output file
(writable, not locked by another batch, and, when resuming, the ids it already holds). The
work starts when the :class:`Batch` is first iterated; results come in the order items
finish, each already written to the output.

Leaving the ``async for`` before its end (``break``, an exception, the iterating task
cancelled) stops the batch at once, as ``aclose()`` does: no new item starts, running items
are cancelled (not written: a resume runs them) and the output is closed, so a resume can
start right away. ``async with run_batch(...) as batch`` is the explicit form; ``stop(grace)``
gives running items time to finish.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import os
import signal
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Literal, Protocol

from tau.ai import Model
from tau.batch.items import BatchItem, load_items
from tau.batch.limits import ProviderLimiter, RateLimit
from tau.batch.output import ResultFile
from tau.batch.progress import ProgressBar, progress_bar
from tau.batch.result import BatchResult, BatchSummary
from tau.batch.runner import AgentFactory, ItemRunner, RunSettings

if TYPE_CHECKING:
    from tau.agent import Agent

__all__ = ["DEFAULT_GRACE", "Backend", "Batch", "ModelAgent", "run_batch", "run_batch_sync"]

DEFAULT_GRACE = 30.0
"""Seconds running items get to finish after a stop (Ctrl-C)."""
RAY_HINT = "pip install 'tau[ray]'"

Inputs = str | os.PathLike[str] | Iterable[Mapping[str, Any] | BatchItem]


class Backend(Protocol):
    """Runs the items and hands each result to ``emit`` (local asyncio, or Ray)."""

    async def run(
        self, items: list[BatchItem], emit: Callable[[BatchResult], Awaitable[None]]
    ) -> None: ...

    def stop(self, grace: float) -> None: ...


class ModelAgent:
    """``make_agent`` for a bare model: ``Agent(model=model)`` (picklable, for Ray)."""

    def __init__(self, model: Model) -> None:
        self.model = model

    def __call__(self) -> Agent:
        from tau.agent import Agent

        return Agent(model=self.model)


_END = object()


class Batch:
    """A batch run: an async iterator of :class:`BatchResult` (see :func:`run_batch`).

    ``summary`` is live; ``stop(grace)`` starts no new item and gives running ones ``grace``
    seconds; ``aclose()`` (or leaving ``async with``, or leaving an ``async for`` over it
    early) stops at once. Either way, everything that finished is in the output.
    """

    def __init__(
        self,
        items: list[BatchItem],
        backend: Backend,
        output: ResultFile | None,
        progress: bool | None,
        description: str,
    ) -> None:
        done = output.done if output is not None else set()
        self.pending = [item for item in items if item.id not in done] if done else items
        self.output = output
        self.summary = BatchSummary(total=len(items), skipped=len(items) - len(self.pending))
        """Counts, tokens and cost so far (final once iteration ends)."""
        self.notes: list[str] = list(output.notes) if output is not None else []
        """What opening the output repaired (for the user)."""
        self._backend = backend
        self._progress_wanted = progress
        self._description = description
        self._progress: ProgressBar | None = None
        self._queue: asyncio.Queue[Any] | None = None
        self._driver: asyncio.Task[None] | None = None
        self._error: BaseException | None = None
        self._started = 0.0
        self._finished = False

    # ----------------------------------------------------------------------- iterating

    def __aiter__(self) -> _Results:
        return _Results(self)

    async def __anext__(self) -> BatchResult:
        if self._finished:
            raise StopAsyncIteration
        if self._driver is None:
            self._start()
        assert self._queue is not None and self._driver is not None
        if self._driver.done() and self._queue.empty():
            result: Any = _END  # the end marker found the queue full and was not put
        else:
            result = await self._queue.get()
        if result is _END:
            self._finished = True
            if self._error is not None:
                error, self._error = self._error, None
                raise error
            raise StopAsyncIteration
        assert isinstance(result, BatchResult)
        return result

    async def __aenter__(self) -> Batch:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    def _start(self) -> None:
        self._started = time.perf_counter()
        self._queue = asyncio.Queue(maxsize=256)
        self._progress = progress_bar(self._progress_wanted, self.summary, self._description)
        self._driver = asyncio.ensure_future(self._drive())

    async def _drive(self) -> None:
        assert self._queue is not None
        try:
            if self.pending:
                await self._backend.run(self.pending, self._emit)
        except asyncio.CancelledError:
            self.summary.interrupted = True
        except BaseException as exc:
            self._error = exc
        finally:
            self._close()
            # A full queue (a slow or departed consumer) needs no marker: __anext__ sees
            # the driver done once it has taken what is queued.
            with contextlib.suppress(asyncio.QueueFull):
                self._queue.put_nowait(_END)

    async def _emit(self, result: BatchResult) -> None:
        # Written and counted before anything else can happen: the file is never behind.
        if self.output is not None:
            self.output.write(result)
        self.summary.add(result)
        if self._progress is not None:
            self._progress.update()
        assert self._queue is not None
        await self._queue.put(result)

    def _close(self) -> None:
        summary = self.summary
        summary.elapsed = time.perf_counter() - self._started
        if summary.remaining:
            summary.interrupted = True
        progress, self._progress = self._progress, None
        output, self.output = self.output, None
        try:
            if progress is not None:
                progress.close()
        finally:
            if output is not None:
                output.close()

    # ----------------------------------------------------------------------- stopping

    def stop(self, grace: float = DEFAULT_GRACE) -> None:
        """Start no new item; running ones get ``grace`` seconds, then are cancelled (an
        unfinished item is not written: a resume runs it)."""
        self.summary.interrupted = True
        if self._driver is not None and not self._driver.done():
            self._backend.stop(grace)

    async def aclose(self) -> None:
        """Stop at once and close the output (finished items are in it)."""
        driver = self._driver
        if driver is None:
            self._finished = True
            if self.output is not None:
                self._started = time.perf_counter()
                self._close()
            return
        if not driver.done():
            self._backend.stop(0)
            driver.cancel()
        await asyncio.gather(driver, return_exceptions=True)
        self._finished = True

    def abandon(self) -> None:
        """Stop at once without waiting: what leaving an ``async for`` early does. No new item
        starts, running ones are cancelled (unwritten) and the output is closed before this
        returns, so the same output can be resumed immediately."""
        driver = self._driver
        if self._finished or driver is None:
            return
        self._finished = True
        self.summary.interrupted = True
        if not driver.done():
            # RuntimeError: no running loop any more (the interpreter is exiting).
            with contextlib.suppress(RuntimeError):
                self._backend.stop(0)
            with contextlib.suppress(RuntimeError):
                driver.cancel()
        self._close()

    def stop_on_interrupt(
        self, grace: float = DEFAULT_GRACE, notify: Callable[[str], None] | None = None
    ) -> Callable[[], None]:
        """Make Ctrl-C (SIGINT) stop the batch: the first stops it with ``grace``, the second
        drops what still runs. ``notify`` gets a line to show the user. Returns the function
        that puts the previous handling back. Call it from the running loop's main thread."""
        loop = asyncio.get_running_loop()
        presses = 0

        def on_interrupt() -> None:
            nonlocal presses
            presses += 1
            if presses == 1:
                if notify is not None:
                    notify(
                        f"stopping: no new items; running ones get {grace:g} s to finish "
                        "(Ctrl-C again to drop them)"
                    )
                self.stop(grace)
            else:
                if notify is not None:
                    notify("dropping the running items (their results are not written)")
                self.stop(0)

        loop.add_signal_handler(signal.SIGINT, on_interrupt)

        def restore() -> None:
            loop.remove_signal_handler(signal.SIGINT)

        return restore


class _Results:
    """One ``async for`` over a :class:`Batch`: when the loop lets go of it before the end
    (``break``, an exception, cancellation), the batch is abandoned at that moment."""

    __slots__ = ("_batch",)

    def __init__(self, batch: Batch) -> None:
        self._batch = batch

    def __aiter__(self) -> _Results:
        return self

    async def __anext__(self) -> BatchResult:
        return await self._batch.__anext__()

    def __del__(self) -> None:
        self._batch.abandon()


def run_batch(
    inputs: Inputs,
    agent: AgentFactory | Model,
    *,
    concurrency: int = 16,
    rate_limits: Mapping[str, RateLimit] | None = None,
    output: str | os.PathLike[str] | None = None,
    resume: bool = True,
    backend: Literal["local", "ray"] = "local",
    max_attempts: int = 3,
    retry_delay: float = 1.0,
    max_retry_delay: float = 60.0,
    transcripts: bool = False,
    progress: bool | None = None,
    fsync: float | None = 1.0,
    ray_address: str | None = None,
    ray_workers: int | None = None,
) -> Batch:
    """Run an agent over ``inputs``; returns a :class:`Batch` to iterate (async) for results.

    * ``inputs``: a JSONL path or an iterable of dicts or :class:`BatchItem`, each
      ``{"id", "prompt"}`` or ``{"id", "context"}`` (see :mod:`tau.batch.items`).
    * ``agent``: ``make_agent()``, called for every attempt of every item (sync or async), or
      a :class:`~tau.ai.Model` (``Agent(model=model)``). Its usage limits and typed output
      apply to each item.
    * ``concurrency``: items in flight at once (with Ray: in each worker).
    * ``rate_limits``: ``{provider: RateLimit(rpm=..., tpm=...)}`` (see :mod:`tau.batch.limits`).
    * ``output``: the JSONL results file (see :mod:`tau.batch.output`); with ``resume`` the
      ids already in it are skipped, without it the file is started afresh.
    * ``max_attempts``, ``retry_delay``, ``max_retry_delay``: retries of transient failures
      (see :mod:`tau.batch.runner`).
    * ``transcripts``: put each item's messages in its result.
    * ``progress``: a progress bar on stderr (None: when stderr is a terminal).
    * ``fsync``: seconds between flushes of the output to disk (0: every line; None: at the end).
    * ``backend="ray"``: run on a Ray cluster (``ray_address``; a local Ray when None and none is
      running), ``ray_workers`` workers (default: one per CPU of the cluster); see
      :mod:`tau.batch.ray_backend`.

    Leaving ``async for result in run_batch(...)`` early (``break``, an exception,
    cancellation) stops the batch at once: no new item starts, running items are cancelled and
    not written, the output is closed (a resume may follow at once). Use ``stop(grace)`` first
    to let running items finish.

    Raises :class:`~tau.batch.BatchInputError` for bad input and
    :class:`~tau.batch.BatchOutputError` for an unusable output, before anything runs.
    """
    if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
        raise ValueError(f"concurrency must be a whole number above 0, got {concurrency!r}")
    if backend not in ("local", "ray"):
        raise ValueError(f"backend must be 'local' or 'ray', not {backend!r}")
    if backend == "ray" and importlib.util.find_spec("ray") is None:
        raise ImportError(f"backend='ray' needs Ray: {RAY_HINT}")
    if isinstance(agent, Model):
        make_agent: AgentFactory = ModelAgent(agent)
    elif callable(agent):
        make_agent = agent
    else:
        raise TypeError(
            f"agent must be a Model or a make_agent function, not {type(agent).__name__}"
        )
    settings = RunSettings(
        max_attempts=max_attempts,
        retry_delay=retry_delay,
        max_retry_delay=max_retry_delay,
        transcripts=transcripts,
    )
    limits = dict(rate_limits or {})
    limiter = ProviderLimiter(limits)  # checks the limits now, for either backend
    if fsync is not None and not (isinstance(fsync, int | float) and fsync >= 0):
        raise ValueError(f"fsync must be seconds >= 0 or None, got {fsync!r}")
    items, source = load_items(inputs)
    chosen: Backend
    if backend == "ray":
        from tau.batch.ray_backend import RayBackend

        chosen = RayBackend(
            make_agent,
            settings,
            limits,
            concurrency=concurrency,
            address=ray_address,
            workers=ray_workers,
        )
    else:
        from tau.batch.local import LocalBackend

        chosen = LocalBackend(ItemRunner(make_agent, limiter, settings), concurrency)
    results = (
        ResultFile(
            output,
            resume=resume,
            fsync=fsync,
            source=inputs if isinstance(inputs, str | os.PathLike) else None,
        )
        if output is not None
        else None
    )
    return Batch(items, chosen, results, progress, os.path.basename(source) or source)


def run_batch_sync(inputs: Inputs, agent: AgentFactory | Model, **options: Any) -> BatchSummary:
    """:func:`run_batch` to the end, from synchronous code; returns the :class:`BatchSummary`
    with this run's results in input order (``summary.results``).

    Takes the same options. Ctrl-C (in the main thread) stops the batch as in ``tau batch``:
    running items get ``grace`` seconds (option, default 30), a second Ctrl-C drops them; then
    KeyboardInterrupt is raised (everything finished is in the output). Not for use inside a
    running event loop: there, iterate :func:`run_batch`.
    """
    grace = float(options.pop("grace", DEFAULT_GRACE))
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass
    else:
        raise RuntimeError("run_batch_sync() cannot run inside an event loop: use run_batch()")
    batch = run_batch(inputs, agent, **options)
    order = {item.id: index for index, item in enumerate(batch.pending)}

    async def drive() -> BatchSummary:
        restore = None
        if threading.current_thread() is threading.main_thread():
            restore = batch.stop_on_interrupt(grace, _to_stderr)
        results: list[BatchResult] = []
        try:
            async with batch:
                async for result in batch:
                    results.append(result)
        finally:
            if restore is not None:
                restore()
        results.sort(key=lambda r: order.get(r.id, 0))
        batch.summary.results = results
        return batch.summary

    summary = asyncio.run(drive())
    if summary.interrupted and summary.remaining:
        raise KeyboardInterrupt
    return summary


def _to_stderr(line: str) -> None:
    print(f"tau.batch: {line}", file=sys.stderr, flush=True)
