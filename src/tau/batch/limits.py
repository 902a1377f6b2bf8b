"""Per-provider rate limits: requests and tokens per minute, as token buckets.

Each provider named in ``rate_limits`` gets a bucket for requests (``rpm``) and one for tokens
(``tpm``). A bucket holds ``burst`` seconds' worth of its rate and refills continuously, so in
any stretch of T seconds a batch starts at most ``rpm / 60 × (T + burst)`` requests: the rate
holds over every window, not only per minute (providers enforce theirs over short windows too).
The buckets start empty at the batch's first request (the first request itself goes at once):
a batch resumed right after a crash does not burst on top of what the provider still counts,
and the slow first requests of a fresh process do not pile up behind a full bucket.

**Tokens** are known only after the response, so each request is charged an estimate first and
corrected after:

* before the request: the prompt's characters / 4 (system prompt, messages, tool schemas; an
  image counts :data:`IMAGE_TOKENS`), plus the request's ``max_tokens`` when it sets one, else
  the mean output of the provider's earlier responses in this batch (0 before the first);
* after the response: the estimate is given back and the real total (input + output + cache
  read + cache write, from the response's usage) is taken instead. A bucket may go below zero
  this way; the next requests then wait until it has refilled. A response that reports no
  usage keeps its estimate.

A request waits until the bucket holds its charge, or is full (a request bigger than the whole
bucket still goes, then pays off its debt), so nothing waits forever.

**Slowing down.** When a provider answers 429 (or 503/529) and tau's HTTP layer waits before
retrying, or a request fails naming a ``Retry-After``, :meth:`ProviderLimiter.pause` stops every
request to that provider for that long, and its buckets start again empty: the whole batch
slows, not only the item that was refused. A provider with no configured limit is paused too.
A retry the HTTP layer makes on its own counts as one more request in the ``rpm`` bucket.

Waiting requests are served in arrival order (an :class:`asyncio.Lock` is fair).
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from tau.ai import Context, ImageContent, context_chars

__all__ = ["IMAGE_TOKENS", "ProviderLimiter", "RateLimit", "estimate_prompt_tokens"]

IMAGE_TOKENS = 1_000
"""What one image counts for in a token estimate."""
_SLIVER = 1e-6


def _check_rate(name: str, value: float | None) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"{name} must be a number or None, not {type(value).__name__}")
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be a finite number above 0, got {value}")


@dataclass(frozen=True, slots=True)
class RateLimit:
    """A provider's limits: ``rpm`` requests and ``tpm`` tokens per minute (None: no limit).

    ``burst`` is how many seconds' worth of each rate may go at once (the bucket's size).
    """

    rpm: float | None = None
    tpm: float | None = None
    burst: float = 1.0

    def __post_init__(self) -> None:
        _check_rate("rpm", self.rpm)
        _check_rate("tpm", self.tpm)
        _check_rate("burst", self.burst)


class TokenBucket:
    """``rate`` units per second, up to ``capacity``; the level may go below zero (a debt).

    It holds ``initial`` when it is first used, and fills from then on.
    """

    __slots__ = ("capacity", "level", "rate", "stamp")

    def __init__(self, per_minute: float, burst: float, initial: float = 0.0) -> None:
        self.rate = per_minute / 60.0
        self.capacity = max(1.0, self.rate * burst)
        self.level = min(initial, self.capacity)
        self.stamp: float | None = None

    def refill(self, now: float) -> None:
        if self.stamp is None:
            self.stamp = now
        elif now > self.stamp:
            self.level = min(self.capacity, self.level + (now - self.stamp) * self.rate)
            self.stamp = now

    def wait(self, amount: float, now: float) -> float:
        """Seconds until ``amount`` may be taken (0: now)."""
        self.refill(now)
        need = min(amount, self.capacity) - self.level
        # Rounding can leave a sliver that a clock cannot even add up to: count it as there.
        return need / self.rate if need > _SLIVER else 0.0

    def empty_until(self, moment: float) -> None:
        """Start again from empty at ``moment``."""
        self.level = min(self.level, 0.0)
        self.stamp = moment if self.stamp is None else max(self.stamp, moment)


class _Provider:
    __slots__ = ("lock", "outputs", "paused_until", "requests", "responses", "tokens")

    def __init__(self, limit: RateLimit | None) -> None:
        burst = limit.burst if limit is not None else 1.0
        # Empty at the first request (one request may go at once): a batch started right after
        # another (a resume) must not burst on top of what the provider still counts, and a
        # process's slow first requests must not pile up behind a full bucket.
        self.requests = (
            TokenBucket(limit.rpm, burst, 1.0) if limit is not None and limit.rpm else None
        )
        self.tokens = TokenBucket(limit.tpm, burst) if limit is not None and limit.tpm else None
        self.paused_until = 0.0
        self.lock = asyncio.Lock()
        self.outputs = 0
        self.responses = 0


class ProviderLimiter:
    """The buckets of every provider (see the module docstring); one per batch, or per cluster.

    ``clock`` and ``sleep`` are injectable for tests (a fake clock and a sleep that advances it).
    """

    def __init__(
        self,
        limits: Mapping[str, RateLimit] | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
    ) -> None:
        self._clock = clock
        self._sleep = sleep
        self._limits = dict(limits or {})
        for provider, limit in self._limits.items():
            if not isinstance(limit, RateLimit):
                raise TypeError(
                    f"rate_limits[{provider!r}] must be a RateLimit, not {type(limit).__name__}"
                )
        self._providers = {name: _Provider(limit) for name, limit in self._limits.items()}

    def counts_tokens(self, provider: str) -> bool:
        """Whether ``provider`` has a ``tpm`` limit (else no estimate is needed)."""
        state = self._providers.get(provider)
        return state is not None and state.tokens is not None

    async def acquire(
        self, provider: str, prompt_tokens: int = 0, max_output: int | None = None
    ) -> int:
        """Wait until a request to ``provider`` may start; returns the tokens charged for it."""
        state = self._providers.get(provider)
        if state is None:
            return 0
        estimate = 0
        if state.tokens is not None:
            expected = max_output
            if expected is None:
                expected = state.outputs // state.responses if state.responses else 0
            estimate = max(0, prompt_tokens) + max(0, expected)
        async with state.lock:
            while True:
                now = self._clock()
                wait = state.paused_until - now
                if state.requests is not None:
                    wait = max(wait, state.requests.wait(1, now))
                if state.tokens is not None:
                    wait = max(wait, state.tokens.wait(estimate, now))
                if wait <= 0:
                    break
                await self._sleep(wait)
            if state.requests is not None:
                state.requests.level -= 1
            if state.tokens is not None:
                state.tokens.level -= estimate
        return estimate

    def settle(self, provider: str, estimate: int, total: int, output: int) -> None:
        """A response to ``provider`` used ``total`` tokens (``output`` of them generated)."""
        state = self._providers.get(provider)
        if state is None or state.tokens is None:
            return
        state.tokens.level += estimate - total
        state.outputs += output
        state.responses += 1

    def charge(self, provider: str) -> None:
        """One more request went out without asking (an HTTP retry): take it from ``rpm``."""
        state = self._providers.get(provider)
        if state is not None and state.requests is not None:
            state.requests.refill(self._clock())
            state.requests.level -= 1

    def pause(self, provider: str, seconds: float) -> None:
        """Start no request to ``provider`` for ``seconds``; its buckets then start empty."""
        if not (seconds > 0 and math.isfinite(seconds)):
            return
        now = self._clock()
        state = self._providers.get(provider)
        if state is None:
            state = self._providers[provider] = _Provider(None)
        until = now + seconds
        if until <= state.paused_until:
            return
        state.paused_until = until
        for bucket in (state.requests, state.tokens):
            if bucket is not None:
                bucket.refill(now)
                bucket.empty_until(until)

    def paused_until(self, provider: str) -> float:
        """When the current pause of ``provider`` ends, on the limiter's clock (0: none)."""
        state = self._providers.get(provider)
        return state.paused_until if state is not None else 0.0


def estimate_prompt_tokens(context: Context) -> int:
    """The prompt's size in tokens, estimated as characters / 4 (see the module docstring)."""
    images = sum(
        isinstance(block, ImageContent)
        for message in context.messages
        if not isinstance(message.content, str)
        for block in message.content
    )
    return (context_chars(context, tools=True) + 3) // 4 + images * IMAGE_TOKENS
