"""``EventStream``: a producer pushes, a consumer pulls.

A faster producer buffers in a queue; a faster consumer waits, and the next pushed event is
handed straight to it. The terminal event (decided by ``is_complete``) is still delivered, then
everything pushed after it is dropped. ``await stream.result()`` gives the final value.

The same class carries provider events to the agent loop and agent events to a UI.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator, Callable, Generator
from typing import Any, Generic, Self, TypeVar

from tau.ai.core.events import AssistantMessageEvent, DoneEvent, ErrorEvent
from tau.ai.core.types import AssistantMessage

T = TypeVar("T")
R = TypeVar("R")

_END: Any = object()
_NO_RESULT = "the stream ended without a terminal event or a result"


class StreamEndedError(RuntimeError):
    """``result()`` of a stream that was ended without a result."""


class EventStream(Generic[T, R]):
    """An async stream of events of type ``T`` with a final result of type ``R``.

    Several consumers may iterate at once; each event goes to exactly one of them. A consumer
    that stops early (``break``) cancels the producer once no other consumer is left, so an
    abandoned stream never keeps a connection or a task alive. ``break`` takes effect when the
    iterator is collected (at once in CPython); ``async with stream:`` or ``await
    stream.aclose()`` makes it deterministic.
    """

    __slots__ = (
        "_consumers",
        "_done",
        "_extract_result",
        "_is_complete",
        "_on_close",
        "_queue",
        "_result",
        "_waiters",
    )

    def __init__(
        self,
        is_complete: Callable[[T], bool],
        extract_result: Callable[[T], R],
    ) -> None:
        self._is_complete = is_complete
        self._extract_result = extract_result
        self._queue: deque[T] = deque()
        self._waiters: deque[asyncio.Future[T]] = deque()
        self._done = False
        self._result: asyncio.Future[R] | None = None
        self._on_close: Callable[[], None] | None = None
        self._consumers = 0

    # ----------------------------------------------------------------------- producer side

    @property
    def done(self) -> bool:
        """Whether the terminal event was pushed (or the stream was ended)."""
        return self._done

    @property
    def unread(self) -> int:
        """How many pushed events wait for a consumer (what a producer paces itself by)."""
        return len(self._queue)

    def push(self, event: T) -> None:
        """Deliver ``event``; dropped silently once the stream is done."""
        if self._done:
            return
        if self._is_complete(event):
            self._done = True
            self._set_result(self._extract_result(event))
        waiters = self._waiters
        while waiters:
            waiter = waiters.popleft()
            if not waiter.done():
                waiter.set_result(event)
                break
        else:
            self._queue.append(event)
        if self._done:
            self._wake_all()

    def end(self, result: R | None = None) -> None:
        """Mark the stream finished; waiting consumers stop once the queue is drained.

        Ending with neither a terminal event nor ``result`` makes :meth:`result` raise
        :class:`StreamEndedError` instead of waiting forever.
        """
        self._done = True
        if result is not None:
            self._set_result(result)
        elif self._result is not None and not self._result.done():
            self._result.set_exception(StreamEndedError(_NO_RESULT))
        self._wake_all()

    def tap(self, observer: Callable[[T], object]) -> None:
        """Also show every event pushed from now on to ``observer``, as it is pushed.

        For instrumentation: the observer sees the events without consuming them, and a
        stream nobody taps pays nothing for the feature. It runs inside the producer's
        ``push``, so it must be quick and must not raise. The terminal event is the last it
        sees; events pushed after it are dropped before reaching it.
        """
        is_complete = self._is_complete

        def observed(event: T) -> bool:
            # push() asks is_complete exactly once per accepted event: the one place every
            # event passes through, so a tap needs no test in push() itself.
            observer(event)
            return is_complete(event)

        self._is_complete = observed

    def set_on_close(self, callback: Callable[[], None] | None) -> None:
        """Register what to do when every consumer has left before the end (cancel the producer)."""
        self._on_close = callback

    def _set_result(self, value: R) -> None:
        fut = self._result
        if fut is None:
            fut = self._result = _new_future()
        if not fut.done():
            fut.set_result(value)

    def _wake_all(self) -> None:
        waiters = self._waiters
        while waiters:
            waiter = waiters.popleft()
            if not waiter.done():
                waiter.set_result(_END)

    # ----------------------------------------------------------------------- consumer side

    def __aiter__(self) -> AsyncIterator[T]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[T]:
        self._consumers += 1
        try:
            queue = self._queue
            while True:
                if queue:
                    yield queue.popleft()
                    continue
                if self._done:
                    return
                waiter: asyncio.Future[T] = _new_future()
                self._waiters.append(waiter)
                event = await waiter
                if event is _END:
                    return
                yield event
        finally:
            self._consumers -= 1
            if not self._done and self._consumers == 0 and self._on_close is not None:
                self._on_close()

    async def result(self) -> R:
        """The final value, once the terminal event has been pushed.

        Raises :class:`StreamEndedError` if the stream was ended without one.
        """
        if self._result is None:
            if self._done:
                raise StreamEndedError(_NO_RESULT)
            self._result = _new_future()
        return await asyncio.shield(self._result)

    def __await__(self) -> Generator[Any, None, R]:
        return self.result().__await__()

    async def aclose(self) -> None:
        """Stop consuming: cancels the producer if the stream has not finished."""
        if not self._done and self._on_close is not None:
            self._on_close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        # ``break`` in ``async for`` closes the iterator only when it is garbage-collected;
        # ``async with stream:`` makes leaving early cancel the producer deterministically.
        await self.aclose()


def _new_future() -> asyncio.Future[Any]:
    return asyncio.get_running_loop().create_future()


def _is_terminal(event: AssistantMessageEvent) -> bool:
    return event.type == "done" or event.type == "error"


def _final_message(event: AssistantMessageEvent) -> AssistantMessage:
    if isinstance(event, DoneEvent):
        return event.message
    if isinstance(event, ErrorEvent):
        return event.error
    raise TypeError(f"not a terminal event: {event!r}")


class AssistantMessageEventStream(EventStream[AssistantMessageEvent, AssistantMessage]):
    """The stream of one LLM response: ends with ``done`` or ``error``; result is the message."""

    __slots__ = ()

    def __init__(self) -> None:
        super().__init__(_is_terminal, _final_message)
