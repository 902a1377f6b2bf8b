"""One agent run relayed to one client: events in, SSE frames out, with the proxy's rules.

The agent's listener encodes each event into frames and puts them on a bounded queue: while
the client leaves ``max_buffered`` events unread the run waits (it stops reading its model
response, as the proxy does). The response (:class:`tau.proxy.sse.EventStreamResponse`)
drops a client that accepts nothing for its ``send_timeout``; a dropped or disconnected
client aborts the run, which still ends and is saved (``on_done`` runs in every case).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from tau.agent import Agent, AgentEvent, RunResult

__all__ = ["RunStream"]

Frames = Callable[[AgentEvent], list[bytes]]

_GATHER_SECONDS = 0.002


class RunStream:
    """``start()`` runs ``run()`` on ``agent`` with ``encode`` as its listener; ``frames()``
    are what the client reads (``tail`` after the run's own); ``close()`` aborts and waits
    for the run (``on_done(result or None)`` has then run)."""

    def __init__(
        self,
        agent: Agent[Any],
        run: Callable[[], Awaitable[RunResult[Any]]],
        encode: Frames,
        on_done: Callable[[RunResult[Any] | None], Awaitable[None]],
        *,
        failed: Callable[[str], list[bytes]],
        tail: list[bytes],
        max_buffered: int,
    ) -> None:
        self._agent = agent
        self._run = run
        self._encode = encode
        self._on_done = on_done
        self._failed = failed
        self._tail = tail
        self._queue: asyncio.Queue[list[bytes] | None] = asyncio.Queue(max(1, max_buffered))
        self._closed = False
        self._started = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self.error: Exception | None = None
        """What the run raised before its first event (a bad resume: the request's fault)."""

    async def _listen(self, event: AgentEvent) -> None:
        self._started.set()
        if self._closed:
            return
        frames = self._encode(event)
        if frames:
            await self._queue.put(frames)

    async def _main(self) -> None:
        result: RunResult[Any] | None = None
        unsubscribe = self._agent.subscribe(self._listen)
        try:
            result = await self._run()
        except Exception as exc:
            if not self._started.is_set():
                self.error = exc
            elif not self._closed:
                await self._queue.put(self._failed(str(exc) or type(exc).__name__))
        finally:
            unsubscribe()
            self._started.set()
            try:
                await self._on_done(result)
            finally:
                if not self._closed:
                    await self._queue.put(None)

    async def start(self) -> None:
        """Start the run; return at its first event (or when it failed before one)."""
        self._task = asyncio.ensure_future(self._main())
        started = asyncio.ensure_future(self._started.wait())
        await asyncio.wait((self._task, started), return_when=asyncio.FIRST_COMPLETED)
        started.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await started

    async def frames(self) -> AsyncIterator[bytes]:
        """The run's frames, then ``tail``: what is queued goes out in one send (one write
        per event would cost more than the event)."""
        queue = self._queue
        while True:
            batch = await queue.get()
            if batch is None:
                break
            pending = list(batch)
            # Let the run add what it has before the send: one write per event would cost
            # more than the event (a page does not see 2 ms).
            await asyncio.sleep(_GATHER_SECONDS)
            while not queue.empty():
                more = queue.get_nowait()
                if more is None:
                    yield b"".join(pending)
                    yield b"".join(self._tail)
                    return
                pending.extend(more)
            yield b"".join(pending)
        yield b"".join(self._tail)

    async def close(self) -> None:
        """Abort the run if it still goes (the client left) and wait for it to be saved."""
        self._closed = True
        task = self._task
        if task is None:
            return
        if not task.done():
            self._agent.abort("the client went away")
        while not task.done():
            # A listener may wait on a full queue: empty it so that the run can see the abort.
            while not self._queue.empty():
                self._queue.get_nowait()
            await asyncio.wait((task,), timeout=0.05)
        await task
