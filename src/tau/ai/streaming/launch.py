"""The task driver: :func:`launch_stream` runs an adapter as a task feeding a new stream.

It guarantees the rest of the stream contract around the
:class:`~tau.ai.streaming.builder.MessageBuilder`: errors and aborts end the stream with an
event (never raised), and the connection is closed on abort, task cancellation or a consumer
leaving early.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from tau.ai.core.abort import AbortedError, AbortSignal
from tau.ai.core.errors import ABORTED_MESSAGE, UNKNOWN_ERROR_MESSAGE, ProviderError, describe_error
from tau.ai.core.types import Model
from tau.ai.streaming.builder import MessageBuilder
from tau.ai.streaming.event_stream import AssistantMessageEventStream
from tau.ai.streaming.output_cap import output_cap

Runner = Callable[[MessageBuilder], Awaitable[None]]
"""An adapter's body: ``async def run(builder)``, translating provider output into builder calls."""


def launch_stream(
    model: Model, options: Mapping[str, Any], run: Runner
) -> AssistantMessageEventStream:
    """Start ``run`` as a task feeding a new stream, and return the stream at once.

    Whatever ``run`` raises becomes an ``error`` event; the ``signal`` option, task
    cancellation and a consumer leaving early all end it with ``aborted``.
    """
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        raise RuntimeError(
            "tau.ai streams need a running asyncio event loop; from synchronous code "
            "use tau.ai.complete_sync() or tau.ai.stream_sync()"
        ) from None
    stream = AssistantMessageEventStream()
    signal: AbortSignal | None = options.get("signal")
    try:
        cap = output_cap(model, options)
    except ProviderError as exc:
        return error_stream(model, str(exc))
    builder = MessageBuilder(model, stream, cap)

    async def drive() -> None:
        remove_callback: Callable[[], None] | None = None
        try:
            if signal is not None:
                if signal.aborted:
                    raise AbortedError(signal.reason or ABORTED_MESSAGE)
                remove_callback = signal.add_callback(lambda: _cancel_threadsafe(loop, task))
            await run(builder)
            builder.done()
        except asyncio.CancelledError:
            reason = signal.reason if signal is not None and signal.aborted else None
            builder.fail(reason or ABORTED_MESSAGE, aborted=True)
        except AbortedError as exc:
            builder.fail(describe_error(exc), aborted=True, cause=exc)
        except Exception as exc:
            aborted = signal is not None and signal.aborted
            builder.fail(describe_error(exc), aborted=aborted, cause=exc)
        finally:
            if remove_callback is not None:
                remove_callback()
            if not builder.finished:
                builder.fail(UNKNOWN_ERROR_MESSAGE)

    task = loop.create_task(drive())
    # The loop keeps only weak references to tasks: hold this one until it finishes.
    _running.add(task)
    task.add_done_callback(_running.discard)
    stream.set_on_close(lambda: _cancel(task))
    return stream


_running: set[asyncio.Task[None]] = set()


def _cancel_threadsafe(loop: asyncio.AbstractEventLoop, task: asyncio.Task[None]) -> None:
    if not loop.is_closed():
        loop.call_soon_threadsafe(_cancel, task)


def _cancel(task: asyncio.Task[None]) -> None:
    if not task.done():
        task.cancel()


def error_stream(model: Model, error_message: str) -> AssistantMessageEventStream:
    """A stream that fails at once with ``error_message`` (for failures before any request)."""

    async def run(builder: MessageBuilder) -> None:
        raise ProviderError(error_message)

    return launch_stream(model, {}, run)
