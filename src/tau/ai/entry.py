"""The entry points: ``(model, context, settings) -> stream of events``.

Every entry point takes ``settings=`` (:class:`tau.ai.Settings`: the common keys and each
provider's own under its prefix), checked at the call and resolved once per request into the
provider's options. Without it, ``stream``/``complete`` take the adapter's own options as
keywords, and ``stream_simple``/``complete_simple`` take settings keys as keywords (one
``reasoning`` level that each provider maps). The ``*_sync`` variants serve scripts and
notebooks: they run the call on a background event loop.

Every entry point takes a :class:`~tau.ai.core.types.Context` or a plain ``str``, which is one user
message (``complete_sync(model, "hi")``); anything else raises ``TypeError`` at the call.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine, Iterator, Mapping
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any, TypeVar, Unpack, cast

from tau.ai.core.events import AssistantMessageEvent
from tau.ai.core.options import SimpleStreamOptions
from tau.ai.core.types import AssistantMessage, Context, Model, UserMessage
from tau.ai.lookup.registry import ApiProvider, resolve_api_provider
from tau.ai.streaming import observe
from tau.ai.streaming.event_stream import AssistantMessageEventStream
from tau.ai.streaming.observe import StartCall

if TYPE_CHECKING:
    from tau.ai.core.settings_types import Settings
    from tau.ai.lookup.provider_options import ProviderStreamOptions

T = TypeVar("T")


def as_context(context: Context | str) -> Context:
    """``context`` itself, or a one-user-message context for a ``str``; else ``TypeError``."""
    if isinstance(context, Context):
        return context
    if isinstance(context, str):
        return Context([UserMessage(context)])
    raise TypeError(
        f"context must be a Context or a str (one user message), got {type(context).__name__}"
    )


def stream(
    model: Model,
    context: Context | str,
    settings: Settings | None = None,
    **options: Unpack[ProviderStreamOptions],
) -> AssistantMessageEventStream:
    """Stream one response: with ``settings`` (and keywords of settings keys beside them,
    which win), or with the adapter's own options as keywords.

    Raises :class:`~tau.ai.lookup.registry.UnknownApiError` if no adapter serves ``model.api``,
    and ``TypeError`` for a key no provider reads or an option the adapter does not take (a
    misspelt key is never silently ignored); everything after that (HTTP, network, provider
    errors, aborts) arrives as an ``error`` event.
    """
    provider = resolve_api_provider(model.api)
    if settings is not None:
        return _simple(provider, model, context, _merged(settings, options))
    provider.check(options)
    return _call(provider.stream, model, as_context(context), options)


def _merged(settings: Mapping[str, Any], options: Mapping[str, Any]) -> Mapping[str, Any]:
    # The caller's object is only read (the provider's resolution copies it); keywords given
    # beside it make one merged copy.
    if not isinstance(settings, Mapping):
        raise TypeError(f"settings must be a dict (tau.ai.Settings), not {type(settings).__name__}")
    return {**settings, **options} if options else settings


def _simple(
    provider: ApiProvider, model: Model, context: Context | str, settings: Mapping[str, Any]
) -> AssistantMessageEventStream:
    provider.check(settings, simple=True)
    return _call(provider.stream_simple, model, as_context(context), settings)


def _call(
    start: StartCall, model: Model, context: Context, options: Mapping[str, Any]
) -> AssistantMessageEventStream:
    # The keys of this call are redacted wherever its error message is written later. Imported
    # here so that `import tau.ai` loads no capability (a module lookup per call, not an import).
    from tau.ai.capabilities.secrets import remember_options_secrets

    remember_options_secrets(options, model.headers)
    # What is off costs nothing: one test per call when no observer (tracing) is installed.
    observer = observe.call_observer
    if observer is None:
        return start(model, context, options)
    return observer(start, model, context, options)


async def _final_message(s: AssistantMessageEventStream) -> AssistantMessage:
    try:
        return await s.result()
    except asyncio.CancelledError:
        # Nobody else holds this stream: a cancelled caller must not leave the request running.
        await s.aclose()
        raise


async def complete(
    model: Model,
    context: Context | str,
    settings: Settings | None = None,
    **options: Unpack[ProviderStreamOptions],
) -> AssistantMessage:
    """The final message of :func:`stream` (check ``stop_reason`` for errors).

    Cancelling the awaiting task cancels the call and closes its connection.
    """
    return await _final_message(stream(model, context, settings, **options))


def stream_simple(
    model: Model,
    context: Context | str,
    settings: Settings | None = None,
    **options: Unpack[SimpleStreamOptions],
) -> AssistantMessageEventStream:
    """Stream one response from settings: ``settings``, and settings keys as keywords (which
    win; the adapter's own keys by their own names are taken too), the unified ``reasoning``
    level mapped per provider.

    Raises :class:`~tau.ai.lookup.registry.UnknownApiError` for an api no adapter serves, and
    ``TypeError`` for a key no provider reads (naming the close matches).
    """
    provider = resolve_api_provider(model.api)
    merged = options if settings is None else _merged(settings, options)
    return _simple(provider, model, context, merged)


async def complete_simple(
    model: Model,
    context: Context | str,
    settings: Settings | None = None,
    **options: Unpack[SimpleStreamOptions],
) -> AssistantMessage:
    """The final message of :func:`stream_simple` (cancelling it cancels the call)."""
    return await _final_message(stream_simple(model, context, settings, **options))


# --------------------------------------------------------------------------- sync conveniences

_loop: asyncio.AbstractEventLoop | None = None
_loop_thread: threading.Thread | None = None
_loop_lock = threading.Lock()


def _background_loop() -> asyncio.AbstractEventLoop:
    # One long-lived loop thread, so sync calls share a pooled HTTP client like async ones.
    global _loop, _loop_thread
    with _loop_lock:
        if _loop is None:
            loop = asyncio.new_event_loop()
            thread = threading.Thread(target=loop.run_forever, name="tau-sync-loop", daemon=True)
            thread.start()
            _loop, _loop_thread = loop, thread
        if threading.current_thread() is _loop_thread:
            # Blocking the loop thread on work scheduled on that same loop never returns.
            raise RuntimeError(
                "complete_sync()/stream_sync() called from code that a sync call is running "
                "(a hook or callback): use the async API there"
            )
        return _loop


# The caller's context variables (an active trace span, for one) reach the background loop:
# run_coroutine_threadsafe schedules through call_soon_threadsafe, whose callback runs in a
# copy of the calling thread's context, and the task it creates copies that context in turn.
# tests/telemetry/test_content_and_context.py holds this in place.


def _run(coro: Coroutine[Any, Any, T]) -> T:
    try:
        loop = _background_loop()
    except RuntimeError:
        coro.close()
        raise
    future: Future[T] = asyncio.run_coroutine_threadsafe(coro, loop)
    try:
        return future.result()
    except KeyboardInterrupt:
        future.cancel()
        raise


def complete_sync(
    model: Model,
    context: Context | str,
    settings: Settings | None = None,
    **options: Unpack[SimpleStreamOptions],
) -> AssistantMessage:
    """:func:`complete_simple` for synchronous code (works inside a running loop too).

    The settings are checked here, in the caller's thread: a misspelt key raises at the call.
    """
    merged = options if settings is None else _merged(settings, options)
    resolve_api_provider(model.api).check(merged, simple=True)
    return _run(complete_simple(model, as_context(context), cast("Settings", merged)))


def stream_sync(
    model: Model,
    context: Context | str,
    settings: Settings | None = None,
    **options: Unpack[SimpleStreamOptions],
) -> Iterator[AssistantMessageEvent]:
    """Iterate :func:`stream_simple`'s events from synchronous code.

    Leaving the loop early (``break``, an exception) aborts the call and closes its connection.
    """
    # Checked here, not in the generator, so that a wrong context or key fails at the call.
    merged = options if settings is None else _merged(settings, options)
    resolve_api_provider(model.api).check(merged, simple=True)
    return _sync_events(model, as_context(context), merged)


def _sync_events(
    model: Model, context: Context, options: Mapping[str, Any]
) -> Iterator[AssistantMessageEvent]:
    # Imported here: only the sync helpers need it, not ``import tau.ai``.
    import queue

    events: queue.SimpleQueue[AssistantMessageEvent | Exception | None] = queue.SimpleQueue()

    async def pump() -> None:
        try:
            s = stream_simple(model, context, cast("Settings", options))
            try:
                async for event in s:
                    events.put(event)
            finally:
                await s.aclose()
        except Exception as exc:
            # Raised before the stream existed (an unknown api): re-raised in the caller's
            # thread, which would otherwise wait forever for an end that never comes.
            events.put(exc)
        finally:
            events.put(None)

    loop = _background_loop()
    future = asyncio.run_coroutine_threadsafe(pump(), loop)
    try:
        while (item := events.get()) is not None:
            if isinstance(item, Exception):
                raise item
            yield item
    finally:
        future.cancel()
