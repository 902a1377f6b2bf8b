"""The token buckets on an injected clock: rates, bursts, the token estimate and its
correction, debts, pauses (the real-time checks are in test_http.py and test_ray.py)."""

from __future__ import annotations

import asyncio

import pytest

from tau.ai import Context, ImageContent, TextContent, Tool, UserMessage
from tau.batch import ProviderLimiter, RateLimit, estimate_prompt_tokens
from tau.batch.limits import IMAGE_TOKENS


class Clock:
    """A clock that only moves when someone sleeps."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.now += seconds
        await asyncio.sleep(0)


def limiter(clock: Clock, **limits: RateLimit) -> ProviderLimiter:
    return ProviderLimiter(limits, clock=clock, sleep=clock.sleep)


async def starts(limits: ProviderLimiter, clock: Clock, count: int, **acquire: int) -> list[float]:
    """When each of ``count`` concurrent requests was let through."""
    times: list[float] = []

    async def one() -> None:
        await limits.acquire("p", **acquire)
        times.append(round(clock.now, 6))

    await asyncio.gather(*(one() for _ in range(count)))
    return times


async def test_requests_per_minute_space_the_requests_evenly() -> None:
    clock = Clock()
    clock.now = 100.0  # the bucket starts filling at its first request, not when it is made
    times = await starts(limiter(clock, p=RateLimit(rpm=60)), clock, 5)
    assert times == [100.0, 101.0, 102.0, 103.0, 104.0]


async def test_the_burst_is_that_many_seconds_of_the_rate() -> None:
    clock = Clock()
    limits = limiter(clock, p=RateLimit(rpm=600, burst=2.0))
    assert await starts(limits, clock, 3) == pytest.approx([0.0, 0.1, 0.2])  # starts empty
    await clock.sleep(10)  # idle: the bucket fills up to two seconds' worth, no more
    times = await starts(limits, clock, 23)
    assert times[:20] == [10.2] * 20
    assert times[20:] == pytest.approx([10.3, 10.4, 10.5])


async def test_an_unlimited_provider_never_waits() -> None:
    clock = Clock()
    times = await starts(limiter(clock, p=RateLimit(rpm=60)), clock, 0)
    other = ProviderLimiter({"p": RateLimit(rpm=60)}, clock=clock, sleep=clock.sleep)
    assert await other.acquire("q", 10_000) == 0
    assert times == [] and clock.now == 0


async def test_tokens_are_estimated_before_and_corrected_after() -> None:
    clock = Clock()
    limits = limiter(clock, p=RateLimit(tpm=6_000))  # 100 tokens a second, 100 at most
    assert limits.counts_tokens("p") and not limits.counts_tokens("q")
    # No response seen yet: the prompt only, once the empty bucket holds it.
    assert await limits.acquire("p", prompt_tokens=50) == 50
    assert clock.now == pytest.approx(0.5)
    # The response used 150 (100 of them output): the bucket pays the difference (0 - 100).
    limits.settle("p", estimate=50, total=150, output=100)
    # Now 50 prompt + the mean output so far (100); from -100 the bucket must reach 100 (full).
    assert await limits.acquire("p", prompt_tokens=50) == 150
    assert clock.now == pytest.approx(2.5)
    # A request's own max_tokens replaces the mean.
    assert await limits.acquire("p", prompt_tokens=10, max_output=20) == 30


async def test_a_request_bigger_than_the_bucket_goes_when_it_is_full_then_pays_its_debt() -> None:
    clock = Clock()
    limits = limiter(clock, p=RateLimit(tpm=6_000))
    assert await limits.acquire("p", prompt_tokens=1_000) == 1_000
    assert clock.now == pytest.approx(1.0)  # the time to fill the bucket
    await limits.acquire("p", prompt_tokens=10)
    assert clock.now == pytest.approx(10.1)  # from -900 up to 10 at 100 a second


async def test_a_pause_stops_every_request_and_the_buckets_restart_empty() -> None:
    clock = Clock()
    limits = limiter(clock, p=RateLimit(rpm=60))
    await limits.acquire("p")
    limits.pause("p", 5)
    assert limits.paused_until("p") == 5
    times = await starts(limits, clock, 2)
    assert times == [6.0, 7.0]  # the pause, then one token at a time from empty
    # A provider without limits is paused too, and goes at once after.
    limits.pause("q", 2)
    await limits.acquire("q")
    assert clock.now == 9.0
    # A shorter pause does not shorten a longer one.
    limits.pause("q", 10)
    limits.pause("q", 1)
    assert limits.paused_until("q") == 19.0


async def test_a_pause_reaches_a_request_already_waiting() -> None:
    clock = Clock()
    limits = limiter(clock, p=RateLimit(rpm=60))
    await limits.acquire("p")
    waiting = asyncio.ensure_future(limits.acquire("p"))
    await asyncio.sleep(0)  # it waits for the next token (this clock jumps when one sleeps)
    limits.pause("p", 3)
    until = limits.paused_until("p")
    await waiting
    assert clock.now == pytest.approx(until + 1.0)  # the pause, then one token from empty


async def test_retries_made_by_the_http_layer_count_as_requests() -> None:
    clock = Clock()
    limits = limiter(clock, p=RateLimit(rpm=60))
    await limits.acquire("p")
    limits.charge("p")
    limits.charge("p")
    await limits.acquire("p")
    assert clock.now == pytest.approx(3.0)  # two retries, then this request: a second each


def test_limits_are_checked() -> None:
    with pytest.raises(ValueError, match="rpm must be a finite number above 0"):
        RateLimit(rpm=0)
    with pytest.raises(ValueError, match="tpm"):
        RateLimit(tpm=float("inf"))
    with pytest.raises(TypeError, match="burst must be a number"):
        RateLimit(rpm=1, burst="1")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"rate_limits\['p'\] must be a RateLimit"):
        ProviderLimiter({"p": {"rpm": 1}})  # type: ignore[dict-item]


def test_the_prompt_estimate_is_characters_over_four() -> None:
    tool = Tool("lookup", "Look it up", {"type": "object"})
    context = Context(
        messages=[
            UserMessage([TextContent("x" * 40), ImageContent("aGk=", "image/png")]),
            UserMessage("y" * 20),
        ],
        system_prompt="z" * 12,
        tools=[tool],
    )
    chars = 40 + 20 + 12 + len("lookup") + len("Look it up") + len('{"type": "object"}')
    assert estimate_prompt_tokens(context) == (chars + 3) // 4 + IMAGE_TOKENS
