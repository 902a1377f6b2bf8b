"""One item, start to finish: a fresh agent per attempt, rate limits around each LLM request,
retries with backoff, and the :class:`~tau.batch.BatchResult`.

**What is retried.** A run that failed because its last LLM request failed for a passing reason
(:data:`TRANSIENT`: connection, timeout, rate limit, overloaded, server error, each after
tau.ai's own HTTP retries) is run again with a fresh agent, up to ``max_attempts`` in all,
after ``retry_delay`` seconds doubling each time (up to ``max_retry_delay``, with jitter), or
after the provider's ``Retry-After`` when it named a longer one. Anything else (a rejected
request, a context overflow, a failing tool or listener) is recorded at once. A usage limit
(``UsageLimits``) is the ``limited`` status, not a failure.

**What stops the batch.** A provider refusing the credentials (401, 403) would refuse every
item, and a ``make_agent`` that raises would fail every item: both raise
:class:`BatchFatalError` instead of filling the output with the same error (and marking every
item done for a later resume).

**How it sees the requests.** The agent's ``stream_fn`` is wrapped (inside its fallbacks, so
every attempt of every model counts for that model's provider): the wrapper waits for the
provider's buckets, then starts the call with an :class:`~tau.ai.HttpObserver` current, which
hears each HTTP attempt and each retry tau.ai's HTTP layer makes (a 429's delay pauses the
provider), and taps the stream for the final usage (to correct the token estimate) and the
failure's cause (to classify it). An observer already current (tracing) is still told.
"""

from __future__ import annotations

import asyncio
import inspect
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from tau.ai import (
    AssistantMessage,
    AssistantMessageEvent,
    AssistantMessageEventStream,
    Context,
    DoneEvent,
    ErrorEvent,
    Model,
    ProviderError,
    classify_failure,
)
from tau.ai.adapters import HttpObserver, http_observer
from tau.batch.items import BatchItem
from tau.batch.limits import estimate_prompt_tokens
from tau.batch.result import BatchResult

if TYPE_CHECKING:
    from tau.agent import Agent, RunResult

__all__ = [
    "FATAL_STATUSES",
    "SLOW_DOWN_STATUSES",
    "TRANSIENT",
    "AgentFactory",
    "BatchFatalError",
    "ItemDropped",
    "ItemRunner",
    "ItemState",
    "Limiter",
    "RunSettings",
]

TRANSIENT = frozenset({"connection", "timeout", "rate_limit", "overloaded", "server_error"})
"""Failure kinds retried with a fresh agent (see :func:`tau.ai.classify_failure`)."""
FATAL_STATUSES = frozenset({401, 403})
"""HTTP statuses that stop the batch: the credentials are refused, for every item alike."""
SLOW_DOWN_STATUSES = frozenset({429, 503, 529})
"""Statuses whose retry delay pauses the whole provider."""

AgentFactory = Callable[[], "Agent | Awaitable[Agent]"]
"""Makes the agent of one attempt (sync or async); for Ray it must pickle (a module-level
function, or an instance of a module-level class)."""


class BatchFatalError(RuntimeError):
    """Every item would fail the same way (the key is refused, ``make_agent`` fails): the batch
    stops. What finished before is in the output."""


class Limiter(Protocol):
    """The rate limits as an item runner uses them (local buckets, or the cluster's actor)."""

    def counts_tokens(self, provider: str) -> bool: ...

    async def acquire(
        self, provider: str, prompt_tokens: int = 0, max_output: int | None = None
    ) -> int: ...

    def settle(self, provider: str, estimate: int, total: int, output: int) -> None: ...

    def charge(self, provider: str) -> None: ...

    def pause(self, provider: str, seconds: float) -> None: ...


@dataclass(frozen=True, slots=True)
class RunSettings:
    """How items run (picklable: Ray workers get a copy)."""

    max_attempts: int = 3
    retry_delay: float = 1.0
    max_retry_delay: float = 60.0
    transcripts: bool = False

    def __post_init__(self) -> None:
        if isinstance(self.max_attempts, bool) or not isinstance(self.max_attempts, int):
            raise TypeError("max_attempts must be a whole number")
        if self.max_attempts < 1:
            raise ValueError(f"max_attempts must be at least 1, got {self.max_attempts}")
        for name in ("retry_delay", "max_retry_delay"):
            value = getattr(self, name)
            if not (isinstance(value, int | float) and 0 <= value < float("inf")):
                raise ValueError(f"{name} must be a number of seconds >= 0, got {value!r}")


class ItemState:
    """Where an item is: ``started`` once its first LLM request was let through (a batch that
    stops lets started items finish and drops the others); ``stopping`` once the batch stops
    (an item that would start another attempt is then dropped)."""

    __slots__ = ("started", "stopping")

    def __init__(self) -> None:
        self.started = False
        self.stopping = False


class ItemDropped(Exception):
    """The batch is stopping and the item has no result: it is not written (a resume runs it)."""


@dataclass(slots=True)
class _Attempt:
    result: BatchResult
    retry: bool
    retry_after: float | None


class ItemRunner:
    """Runs items with agents from ``make_agent`` under ``limiter`` (see the module docstring)."""

    def __init__(self, make_agent: AgentFactory, limiter: Limiter, settings: RunSettings) -> None:
        self.make_agent = make_agent
        self.limiter = limiter
        self.settings = settings

    async def run(self, item: BatchItem, state: ItemState | None = None) -> BatchResult:
        """Run ``item`` to its result (retrying what is transient)."""
        state = state if state is not None else ItemState()
        settings = self.settings
        started = time.time()
        clock = time.perf_counter()
        usage = None
        rate_wait = 0.0
        attempt = 0
        while True:
            attempt += 1
            outcome = await self._attempt(item, state)
            result = outcome.result
            usage = result.usage if usage is None else usage + result.usage
            rate_wait += result.rate_wait
            if not outcome.retry or attempt >= settings.max_attempts:
                break
            delay = min(settings.max_retry_delay, settings.retry_delay * 2 ** (attempt - 1))
            delay *= random.uniform(0.5, 1.0)
            if outcome.retry_after is not None:
                delay = max(delay, outcome.retry_after)
            if state.stopping:
                raise ItemDropped(item.id)
            state.started = False  # waiting to start again: a stopping batch drops it here
            await asyncio.sleep(delay)
        result.usage = usage
        result.attempts = attempt
        result.started = started
        result.elapsed = time.perf_counter() - clock
        result.rate_wait = rate_wait
        return result

    async def _attempt(self, item: BatchItem, state: ItemState) -> _Attempt:
        agent = await self._agent()
        watch = _CallWatch(self.limiter, agent.stream_fn, state)
        agent.stream_fn = watch
        try:
            if item.prompt is not None:
                run = await agent.prompt(item.prompt)
            else:
                context = item.context
                assert context is not None
                if context.system_prompt is not None:
                    agent.set_system_prompt(context.system_prompt)
                agent.replace_messages(context.messages)
                run = await agent.continue_()
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            # prompt() reports model and tool failures in the result: this is a usage error
            # (a busy or model-less agent), the same for every item.
            raise BatchFatalError(
                f"the agent from make_agent cannot run: {_describe(exc)}"
            ) from exc
        return self._outcome(item, agent, run, watch)

    async def _agent(self) -> Agent:
        from tau.agent import Agent

        try:
            made: Any = self.make_agent()
            if inspect.isawaitable(made):
                made = await made
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            raise BatchFatalError(f"make_agent failed: {_describe(exc)}") from exc
        if not isinstance(made, Agent):
            raise BatchFatalError(f"make_agent must return an Agent, not {type(made).__name__}")
        return made

    def _outcome(
        self, item: BatchItem, agent: Agent, run: RunResult, watch: _CallWatch
    ) -> _Attempt:
        from tau.agent import LIMIT_REACHED, dump_agent_message

        final = run.final_message
        result = BatchResult(
            id=item.id,
            status="ok",
            text=run.text,
            output=run.output,
            has_output=run.has_output,
            model=f"{final.provider}/{final.model}" if final is not None else None,
            usage=agent.state.usage.copy(),
            rate_wait=watch.rate_wait,
        )
        if self.settings.transcripts:
            result.transcript = [dump_agent_message(m) for m in agent.state.messages]
        retry, retry_after = False, None
        error = run.error
        if error is None and run.stop_reason != "error":
            return _Attempt(result, retry, retry_after)
        result.error = error or "the run failed"
        if error is not None and error.startswith(LIMIT_REACHED):
            result.status = "limited"
            return _Attempt(result, retry, retry_after)
        result.status = "error"
        failed = watch.failure
        kind = "other"
        if (
            failed is not None
            and final is not None
            and final.error_message == failed.error.error_message
        ):
            message, cause = failed.error, failed.cause
            kind = classify_failure(message, cause)
            status = _cause_attribute(cause, "status")
            if status in FATAL_STATUSES:
                raise BatchFatalError(
                    f"{final.provider} refused the request ({message.error_message}): "
                    "every item would fail the same way"
                )
            retry_after = _cause_attribute(cause, "retry_after")
            if retry_after is not None:
                self.limiter.pause(failed.provider, retry_after)
        elif run.aborted:
            kind = "aborted"
        result.error_kind = kind
        return _Attempt(result, kind in TRANSIENT, retry_after)


def _cause_attribute(error: BaseException | None, name: str) -> Any:
    # Adapters re-raise an HTTP failure with their own text ``from`` it: the chain keeps it.
    seen: set[int] = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        if isinstance(error, ProviderError):
            value = getattr(error, name, None)
            if value is not None:
                return value
        error = error.__cause__
    return None


def _describe(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class _Failure:
    __slots__ = ("cause", "error", "provider")

    def __init__(self, error: AssistantMessage, cause: BaseException | None, provider: str) -> None:
        self.error = error
        self.cause = cause
        self.provider = provider


class _CallWatch:
    """The agent's stream function, wrapped (see the module docstring)."""

    __slots__ = ("failure", "inner", "limiter", "rate_wait", "state")

    def __init__(self, limiter: Limiter, inner: Any, state: ItemState) -> None:
        if inner is None:
            from tau.ai import stream_simple

            inner = stream_simple
        self.inner = inner
        self.limiter = limiter
        self.state = state
        self.rate_wait = 0.0
        self.failure: _Failure | None = None
        """The failure of the last call, if the last call failed."""

    async def __call__(
        self, model: Model, context: Context, **options: Any
    ) -> AssistantMessageEventStream:
        limiter = self.limiter
        provider = model.provider
        prompt = estimate_prompt_tokens(context) if limiter.counts_tokens(provider) else 0
        began = time.perf_counter()
        estimate = await limiter.acquire(provider, prompt, options.get("max_tokens"))
        self.rate_wait += time.perf_counter() - began
        self.state.started = True
        token = http_observer.set(_HttpWatch(limiter, provider, http_observer.get()))
        try:
            made = self.inner(model, context, **options)
            stream: AssistantMessageEventStream = made if hasattr(made, "__aiter__") else await made
        finally:
            http_observer.reset(token)
        stream.tap(_Terminal(self, provider, estimate))
        return stream


class _Terminal:
    """Sees a call's events; acts on the terminal one."""

    __slots__ = ("estimate", "provider", "watch")

    def __init__(self, watch: _CallWatch, provider: str, estimate: int) -> None:
        self.watch = watch
        self.provider = provider
        self.estimate = estimate

    def __call__(self, event: AssistantMessageEvent) -> None:
        match event:
            case DoneEvent(message=message):
                self.watch.failure = None
            case ErrorEvent(error=message, cause=cause):
                self.watch.failure = _Failure(message, cause, self.provider)
            case _:
                return
        usage = message.usage
        total = usage.input + usage.output + usage.cache_read + usage.cache_write
        if total:
            self.watch.limiter.settle(self.provider, self.estimate, total, usage.output)


class _HttpWatch:
    """One call's HTTP attempts and retries (an :class:`~tau.ai.HttpObserver`)."""

    __slots__ = ("limiter", "previous", "provider", "sent")

    def __init__(self, limiter: Limiter, provider: str, previous: HttpObserver | None) -> None:
        self.limiter = limiter
        self.provider = provider
        self.previous = previous
        self.sent = 0

    def request(self, method: str, url: str) -> None:
        self.sent += 1
        if self.sent > 1:
            self.limiter.charge(self.provider)
        if self.previous is not None:
            self.previous.request(method, url)

    def retry(self, attempt: int, delay: float, reason: str, status: int | None) -> None:
        if status in SLOW_DOWN_STATUSES:
            self.limiter.pause(self.provider, delay)
        if self.previous is not None:
            self.previous.retry(attempt, delay, reason, status)
