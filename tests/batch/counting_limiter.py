"""A limiter actor that counts the calls it gets (module-level, so Ray workers can import it)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

from tau.batch import RateLimit
from tau.batch.ray_backend import _LimiterHost


class CountingLimiterHost(_LimiterHost):
    """:class:`_LimiterHost`, counting each method's calls (``calls()`` reads them)."""

    def __init__(self, limits: Mapping[str, RateLimit]) -> None:
        super().__init__(limits)
        self.counts: Counter[str] = Counter()

    def calls(self) -> dict[str, int]:
        return dict(self.counts)

    async def acquire(self, provider: str, prompt_tokens: int, max_output: int | None) -> int:
        self.counts["acquire"] += 1
        return await super().acquire(provider, prompt_tokens, max_output)

    def settle(self, provider: str, estimate: int, total: int, output: int) -> None:
        self.counts["settle"] += 1
        super().settle(provider, estimate, total, output)

    def charge(self, provider: str) -> None:
        self.counts["charge"] += 1
        super().charge(provider)

    async def pause(self, provider: str, seconds: float) -> None:
        self.counts["pause"] += 1
        await super().pause(provider, seconds)

    async def pauses(self, seen: int) -> tuple[int, dict[str, float]]:
        self.counts["pauses"] += 1
        return await super().pauses(seen)
