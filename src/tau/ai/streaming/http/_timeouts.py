"""The three timeouts of a streamed request, and the watchdog that enforces two of them.

Connecting is limited by ``httpx2`` itself; the first byte and the gaps between chunks are
watched by :class:`Watchdog`, which cancels the task and leaves a note of which limit expired
so that the cancellation can be reported as a timeout.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from tau.ai.core.errors import ProviderError

DEFAULT_TIMEOUTS: dict[str, float] = {"connect": 10.0, "first_byte": 120.0, "idle": 120.0}
"""Seconds: to connect, from sending the request to the first body byte, between two chunks."""

Phases = tuple[float | None, float | None, float | None]
"""``(connect, first_byte, idle)`` in seconds, None for no limit."""

_DEFAULT_PHASES: Phases = (
    DEFAULT_TIMEOUTS["connect"],
    DEFAULT_TIMEOUTS["first_byte"],
    DEFAULT_TIMEOUTS["idle"],
)


def resolve_timeouts(value: object) -> Phases:
    """``(connect, first_byte, idle)`` from the ``timeout`` option (None = no limit).

    A number sets all three; a ``Timeouts`` dict sets some (the others keep their defaults);
    a phase set to None or a non-positive number has no limit.
    """
    if value is None:
        return _DEFAULT_PHASES
    if isinstance(value, int | float) and not isinstance(value, bool):
        phases: Mapping[str, Any] = dict.fromkeys(DEFAULT_TIMEOUTS, float(value))
    elif isinstance(value, Mapping):
        unknown = set(value) - set(DEFAULT_TIMEOUTS)
        if unknown:
            raise ProviderError(
                f"Unknown timeout phase(s) {sorted(unknown)}; use connect, first_byte, idle"
            )
        phases = {**DEFAULT_TIMEOUTS, **value}
    else:
        raise ProviderError(
            f"The timeout option must be seconds or a dict of phases, not {type(value).__name__}"
        )

    def limit(name: str) -> float | None:
        seconds = phases[name]
        if seconds is None:
            return None
        if not isinstance(seconds, int | float) or isinstance(seconds, bool):
            raise ProviderError(f"timeout[{name!r}] must be a number of seconds")
        return float(seconds) if seconds > 0 else None

    return limit("connect"), limit("first_byte"), limit("idle")


class Watchdog:
    """Cancels the task when no data arrived in time; data costs one clock read (``last``).

    One timer handle is kept: when it fires early (data came since) it re-arms for the new
    deadline instead of every chunk rescheduling it.
    """

    __slots__ = (
        "_handle",
        "_loop",
        "_task",
        "clock",
        "expired",
        "first_byte",
        "got_data",
        "idle",
        "last",
    )

    def __init__(
        self, task: asyncio.Task[Any], first_byte: float | None, idle: float | None
    ) -> None:
        self._task = task
        self._loop = asyncio.get_running_loop()
        self.clock = self._loop.time
        self._handle: asyncio.TimerHandle | None = None
        self.first_byte = first_byte
        self.idle = idle
        self.last = 0.0
        self.got_data = False
        self.expired: str | None = None

    def arm(self) -> None:
        """Start the first-byte phase now (a new attempt)."""
        self.cancel()
        self.got_data = False
        self.last = self.clock()
        if self.first_byte is not None:
            self._schedule(self.last + self.first_byte)

    def data(self) -> None:
        """The first data arrived: from now on the idle limit applies."""
        self.got_data = True
        self.last = self.clock()
        if self.idle is None:
            self.cancel()
            return
        deadline = self.last + self.idle
        handle = self._handle
        # A timer due before the idle deadline can stay: when it fires it re-arms for the
        # deadline then due, which saves a reschedule on every request.
        if handle is None or handle.when() > deadline:
            self.cancel()
            self._schedule(deadline)

    def _schedule(self, deadline: float) -> None:
        self._handle = self._loop.call_at(deadline, self._check)

    def _check(self) -> None:
        limit = self.idle if self.got_data else self.first_byte
        if limit is None:
            self._handle = None
            return
        deadline = self.last + limit
        if self.clock() < deadline:
            self._schedule(deadline)
            return
        self._handle = None
        self.expired = "idle" if self.got_data else "first_byte"
        self._task.cancel()

    def cancel(self) -> None:
        """Stop watching."""
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
