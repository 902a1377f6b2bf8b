"""Fallback models: when a model fails before it has streamed anything, the next one answers.

::

    stream_fn = fallback_stream_fn([get_model("openai", "gpt-5-mini")])
    stream = stream_fn(get_model("anthropic", "claude-sonnet-4-5"), context, reasoning="low")

The function :func:`fallback_stream_fn` returns has the shape of :func:`~tau.ai.stream_simple`
(``(model, context, **options) -> stream``). It tries the model it is called with, then each
fallback model in order, and returns one stream whatever happens:

* **When it falls back.** Only when an attempt fails before its first content event (text,
  thinking or a tool call): its ``start`` is held back until then, so a failed attempt sends
  the consumer nothing. Which failures count is ``fall_back_on``: by default connection
  errors, timeouts, 429, 5xx and 529 (overloaded), each after tau's own retries. A failure is
  classified from the exception behind it (:attr:`ErrorEvent.cause`: its type and HTTP
  ``status``), never from its text; only context overflow, which providers report in words
  alone, is recognised by :func:`~tau.ai.is_context_overflow`.
* **After content has streamed** the failure is the stream's error, unless
  ``restart_on_midstream_error`` is set. Then the next model starts over, and its ``start``
  event, arriving after other events, is the marker: **a ``start`` event after the first one
  means "discard everything received so far"**; its ``partial`` is the new message.
* **Failed attempts** are on :attr:`FallbackEventStream.failed_attempts` as they happen (each a
  :class:`FailedAttempt`: model, error message with its usage, kind, the model tried next),
  and go to ``on_fallback`` before the next model starts. They never count as the answer but
  their usage is real: the agent adds it to the run's totals and emits a ``fallback`` event.
* **Who answered.** The final message's ``api``/``provider``/``model`` are those of the model
  that produced it.
* **Options.** Every attempt gets the same options, so ``reasoning`` is mapped by each model's
  own adapter. ``api_key`` belongs to the called model's provider and is never sent to a model
  of another provider: ``get_api_key(provider)`` supplies that one's key (else the adapter
  reads the environment).
* **Abort.** The ``signal`` option reaches every attempt, and an aborted attempt never falls
  back; closing the stream early cancels the attempt in progress.
* **All failing.** When no model answers, the stream ends with one error that names each
  attempt in order (the message is the last attempt's, with its usage).
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Awaitable, Callable, Collection, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias, cast, get_args

from tau.ai.capabilities.overflow import is_context_overflow
from tau.ai.core.errors import (
    ABORTED_MESSAGE,
    UNKNOWN_ERROR_MESSAGE,
    ProviderConnectionError,
    ProviderError,
    ProviderTimeoutError,
    describe_error,
)
from tau.ai.core.events import AssistantMessageEvent, ErrorEvent, StartEvent
from tau.ai.core.types import AssistantMessage, Context, Model
from tau.ai.streaming.event_stream import AssistantMessageEventStream

__all__ = [
    "DEFAULT_FALL_BACK_ON",
    "FailedAttempt",
    "FailureKind",
    "FallBackOn",
    "FallbackEventStream",
    "classify_failure",
    "fallback_stream_fn",
]

_log = logging.getLogger("tau.ai.fallback")

FailureKind: TypeAlias = Literal[
    "connection",
    "timeout",
    "rate_limit",
    "overloaded",
    "server_error",
    "context_overflow",
    "aborted",
    "other",
]
"""What kind of failure ended an attempt (see :func:`classify_failure`)."""

FAILURE_KINDS: frozenset[str] = frozenset(get_args(FailureKind))

DEFAULT_FALL_BACK_ON: frozenset[FailureKind] = frozenset(
    {"connection", "timeout", "rate_limit", "overloaded", "server_error"}
)
"""The failures a fallback answers by default: the provider is unreachable or unwell."""

NO_TERMINAL_MESSAGE = "the stream ended without a done or error event"


@dataclass(frozen=True, slots=True)
class FailedAttempt:
    """One model's attempt that failed, and what happened next."""

    model: Model
    """The model that failed."""
    message: AssistantMessage
    """Its error message: ``error_message``, any partial content, and the usage it cost."""
    kind: FailureKind
    """The failure, classified (see :func:`classify_failure`)."""
    error: BaseException | None = None
    """The exception behind the failure, when it was raised in this process."""
    next_model: Model | None = None
    """The model tried next (None when no model followed)."""
    discarded: bool = False
    """Content had streamed and was discarded (``restart_on_midstream_error``)."""

    def __repr__(self) -> str:
        following = _spec(self.next_model) if self.next_model is not None else None
        return (
            f"FailedAttempt(model={_spec(self.model)!r}, kind={self.kind!r}, "
            f"error_message={self.error_message!r}, next_model={following!r})"
        )

    @property
    def error_message(self) -> str:
        """Why the attempt failed, in words."""
        return self.message.error_message or UNKNOWN_ERROR_MESSAGE

    @property
    def status(self) -> int | None:
        """The HTTP status the provider gave for the failure, if any."""
        return _status(self.error)


FallBackOn: TypeAlias = Collection[FailureKind] | Callable[[FailedAttempt], bool]
"""Which failures fall back: a collection of kinds, or a predicate over the attempt."""


def _causes(error: BaseException | None) -> Iterator[BaseException]:
    # Adapters re-raise an HTTP failure with their own text ``from`` it: the chain keeps it.
    seen: set[int] = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        yield error
        error = error.__cause__


def _status(error: BaseException | None) -> int | None:
    for exc in _causes(error):
        if isinstance(exc, ProviderError) and exc.status is not None:
            return exc.status
    return None


def classify_failure(message: AssistantMessage, error: BaseException | None = None) -> FailureKind:
    """The kind of failure that ended ``message``, from the exception ``error`` behind it.

    ``aborted`` for an aborted message; ``timeout`` and ``connection`` for tau's own
    :class:`~tau.ai.ProviderTimeoutError` / :class:`~tau.ai.ProviderConnectionError`; then by
    the provider's HTTP ``status`` (on the response or in a stream's error event): 429
    ``rate_limit``, 529 ``overloaded``, other 5xx ``server_error``; then
    ``context_overflow`` when :func:`~tau.ai.is_context_overflow` recognises the message;
    else ``other`` (a rejected request, a bad key, a malformed stream…).
    """
    if message.stop_reason == "aborted":
        return "aborted"
    for exc in _causes(error):
        if isinstance(exc, ProviderTimeoutError):
            return "timeout"
        if isinstance(exc, ProviderConnectionError):
            return "connection"
    status = _status(error)
    if status == 429:
        return "rate_limit"
    if status == 529:
        return "overloaded"
    if status is not None and 500 <= status <= 599:
        return "server_error"
    if is_context_overflow(message):
        return "context_overflow"
    return "other"


def _predicate(fall_back_on: FallBackOn) -> Callable[[FailedAttempt], bool]:
    if callable(fall_back_on):
        return fall_back_on
    if isinstance(fall_back_on, str) or not isinstance(fall_back_on, Collection):
        raise TypeError(
            "fall_back_on must be a collection of failure kinds or a function of the "
            f"FailedAttempt, not {type(fall_back_on).__name__}"
        )
    kinds = frozenset(fall_back_on)
    unknown = sorted(str(kind) for kind in kinds - FAILURE_KINDS)
    if unknown:
        raise ValueError(
            f"unknown failure kind(s) {unknown} in fall_back_on; "
            f"the kinds are {sorted(FAILURE_KINDS)}"
        )
    return lambda attempt: attempt.kind in kinds


class FallbackEventStream(AssistantMessageEventStream):
    """The stream of a call with fallbacks: an ordinary stream, plus its failed attempts."""

    __slots__ = ("failed_attempts",)

    def __init__(self) -> None:
        super().__init__()
        self.failed_attempts: list[FailedAttempt] = []
        """Every attempt that failed and was followed by another model, in order."""


StreamFunction: TypeAlias = Callable[
    ..., "AssistantMessageEventStream | Awaitable[AssistantMessageEventStream]"
]
OnFallback: TypeAlias = Callable[[FailedAttempt], "Awaitable[None] | None"]
GetApiKey: TypeAlias = Callable[[str], "str | Awaitable[str | None] | None"]


def fallback_stream_fn(
    models: Sequence[Model],
    stream_fn: StreamFunction | None = None,
    *,
    fall_back_on: FallBackOn = DEFAULT_FALL_BACK_ON,
    restart_on_midstream_error: bool = False,
    on_fallback: OnFallback | None = None,
    get_api_key: GetApiKey | None = None,
) -> Callable[..., FallbackEventStream]:
    """A stream function that falls back to ``models``, in order (see the module docstring).

    ``stream_fn`` makes each attempt (default :func:`~tau.ai.stream_simple`). ``fall_back_on``
    is a collection of :data:`FailureKind` (default :data:`DEFAULT_FALL_BACK_ON`; add
    ``"context_overflow"`` to move to a model with a bigger window) or a predicate over the
    :class:`FailedAttempt`; an abort never falls back. ``on_fallback(attempt)`` (sync or
    async) runs before the next model starts. ``get_api_key(provider)`` gives the key of a
    fallback model whose provider differs from the called model's.
    """
    chain = tuple(models)
    for model in chain:
        if not isinstance(model, Model):
            raise TypeError(f"fallback models must be Model objects, not {type(model).__name__}")
    should_fall_back = _predicate(fall_back_on)
    if stream_fn is None:
        from tau.ai.entry import stream_simple

        stream_fn = stream_simple
    make: StreamFunction = stream_fn

    def stream_with_fallbacks(
        model: Model, context: Context, **options: Any
    ) -> FallbackEventStream:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            raise RuntimeError("tau.ai streams need a running asyncio event loop") from None
        out = FallbackEventStream()
        run = _Run(
            out,
            (model, *chain),
            context,
            options,
            make,
            should_fall_back,
            restart_on_midstream_error,
            on_fallback,
            get_api_key,
        )
        task = loop.create_task(run.drive())
        _running.add(task)
        task.add_done_callback(_running.discard)
        out.set_on_close(lambda: _cancel(task))
        return out

    return stream_with_fallbacks


_running: set[asyncio.Task[None]] = set()


def _cancel(task: asyncio.Task[None]) -> None:
    if not task.done():
        task.cancel()


async def _maybe_await(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


def _spec(model: Model) -> str:
    return f"{model.provider}/{model.id}"


class _Run:
    """One call: the attempts in order, their events forwarded to ``out`` once content comes."""

    def __init__(
        self,
        out: FallbackEventStream,
        models: tuple[Model, ...],
        context: Context,
        options: dict[str, Any],
        stream_fn: StreamFunction,
        should_fall_back: Callable[[FailedAttempt], bool],
        restart: bool,
        on_fallback: OnFallback | None,
        get_api_key: GetApiKey | None,
    ) -> None:
        self.out = out
        self.models = models
        self.context = context
        self.options = options
        self.stream_fn = stream_fn
        self.should_fall_back = should_fall_back
        self.restart = restart
        self.on_fallback = on_fallback
        self.get_api_key = get_api_key
        self.signal = options.get("signal")
        # The partial of the current attempt once the consumer has it, else None.
        self.current: AssistantMessage | None = None
        self.model = models[0]

    async def drive(self) -> None:
        out = self.out
        try:
            for index, model in enumerate(self.models):
                self.model = model
                following = self.models[index + 1] if index + 1 < len(self.models) else None
                if await self.attempt(model, following):
                    return
        except asyncio.CancelledError:
            self.end_aborted()
        except Exception as exc:
            # A hook (predicate, on_fallback, get_api_key) raised: the call fails with it.
            self.end(self.fresh_message(self.model, describe_error(exc)), exc)
        finally:
            if not out.done:
                self.end(self.fresh_message(self.model, NO_TERMINAL_MESSAGE), None)

    async def options_for(self, model: Model) -> dict[str, Any]:
        if model.provider == self.models[0].provider:
            return self.options
        options = dict(self.options)
        options.pop("api_key", None)
        if self.get_api_key is not None:
            key = await _maybe_await(self.get_api_key(model.provider))
            if key:
                options["api_key"] = key
        return options

    async def attempt(self, model: Model, following: Model | None) -> bool:
        """Run one attempt; True when it ended the call (answered, or failed for good)."""
        self.current = None
        options = await self.options_for(model)
        try:
            made = self.stream_fn(model, self.context, **options)
            inner = cast(
                AssistantMessageEventStream,
                made if hasattr(made, "__aiter__") else await made,
            )
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            return await self.failed(
                model, self.fresh_message(model, describe_error(exc)), exc, following, False
            )
        held: StartEvent | None = None
        streamed = False
        terminal: AssistantMessageEvent | None = None
        push = self.out.push
        iterator = inner.__aiter__()
        try:
            async for event in iterator:
                kind = event.type
                if kind == "done" or kind == "error":
                    terminal = event
                    break
                if not streamed:
                    if kind == "start":
                        held = cast(StartEvent, event)
                        continue
                    streamed = True
                    self.send_start(held or StartEvent(cast(Any, event).partial))
                push(event)
        finally:
            await inner.aclose()
            aclose = getattr(iterator, "aclose", None)
            if aclose is not None:
                await aclose()
        if terminal is None:
            partial = held.partial if held is not None else None
            message = partial or self.fresh_message(model, NO_TERMINAL_MESSAGE)
            message.stop_reason = "error"
            message.error_message = NO_TERMINAL_MESSAGE
            return await self.failed(model, message, None, following, streamed)
        if terminal.type == "done":
            if not streamed:
                self.send_start(held or StartEvent(terminal.message))
            push(terminal)
            return True
        error = cast(ErrorEvent, terminal)
        return await self.failed(model, error.error, error.cause, following, streamed)

    async def failed(
        self,
        model: Model,
        message: AssistantMessage,
        cause: BaseException | None,
        following: Model | None,
        streamed: bool,
    ) -> bool:
        """Decide on a failed attempt: fall back to ``following`` (False) or end the call."""
        aborted = message.stop_reason == "aborted" or (
            self.signal is not None and self.signal.aborted
        )
        if aborted:
            message.stop_reason = "aborted"
            self.end(message, cause, streamed=streamed)
            return True
        attempt = FailedAttempt(
            model, message, classify_failure(message, cause), cause, following, streamed
        )
        if (
            following is not None
            and (not streamed or self.restart)
            and self.should_fall_back(attempt)
        ):
            self.out.failed_attempts.append(attempt)
            # The provider's error text is left out: a server may echo the key it was sent.
            _log.debug(
                "fallback: %s failed (%s, status %s); trying %s",
                _spec(model),
                attempt.kind,
                attempt.status,
                _spec(following),
            )
            if self.on_fallback is not None:
                await _maybe_await(self.on_fallback(attempt))
            return False
        if self.out.failed_attempts and not streamed:
            message.error_message = self.summary(attempt)
        self.end(message, cause, streamed=streamed)
        return True

    def summary(self, last: FailedAttempt) -> str:
        attempts = [*self.out.failed_attempts, last]
        parts = "; ".join(f"[{_spec(a.model)}] {a.error_message}" for a in attempts)
        if last.next_model is None:
            return f"All {len(attempts)} models failed: {parts}"
        untried = len(self.models) - len(attempts)
        return (
            f"{len(attempts)} models failed ({untried} not tried: the last failure is not one "
            f"to fall back on): {parts}"
        )

    # ----------------------------------------------------------------------- to the consumer

    def send_start(self, event: StartEvent) -> None:
        # A start after earlier events is the restart marker: the consumer drops its partial.
        self.current = event.partial
        self.out.push(event)

    def end(
        self, message: AssistantMessage, cause: BaseException | None, *, streamed: bool = False
    ) -> None:
        if self.out.done:
            return
        if not streamed:
            self.send_start(StartEvent(message))
        if message.stop_reason != "aborted":
            message.stop_reason = "error"
        message.error_message = message.error_message or UNKNOWN_ERROR_MESSAGE
        reason: Literal["aborted", "error"] = (
            "aborted" if message.stop_reason == "aborted" else "error"
        )
        self.out.push(ErrorEvent(reason, message, cause))

    def end_aborted(self) -> None:
        reason = self.signal.reason if self.signal is not None and self.signal.aborted else None
        text = reason or ABORTED_MESSAGE
        current = self.current
        if current is not None:
            # A copy: the attempt's own task may still be winding down and writing to it.
            message = AssistantMessage(
                content=list(current.content),
                api=current.api,
                provider=current.provider,
                model=current.model,
                usage=current.usage,
                stop_reason="aborted",
                error_message=text,
                timestamp=current.timestamp,
            )
            self.out.push(ErrorEvent("aborted", message))
            return
        message = self.fresh_message(self.model, text)
        message.stop_reason = "aborted"
        self.end(message, None)

    @staticmethod
    def fresh_message(model: Model, error_message: str) -> AssistantMessage:
        return AssistantMessage(
            content=[],
            api=model.api,
            provider=model.provider,
            model=model.id,
            stop_reason="error",
            error_message=error_message,
        )
