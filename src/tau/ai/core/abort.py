"""Cancellation that works from any thread: ``AbortController`` and its ``AbortSignal``.

A signal passed as ``signal=`` to a stream ends it with an ``error`` event (reason
``aborted``) carrying what had arrived so far, and closes the connection. ``abort()`` may be
called from a signal handler, another thread or another task.
"""

from __future__ import annotations

import threading
from collections.abc import Callable


class AbortSignal:
    """Read side of an :class:`AbortController`."""

    __slots__ = ("_callbacks", "_lock", "_reason", "aborted")

    def __init__(self) -> None:
        self.aborted = False
        self._reason: str | None = None
        self._callbacks: list[Callable[[], None]] = []
        # Re-entrant: a signal handler calling abort() runs in the main thread, possibly while
        # that thread is inside one of these locked sections; a plain Lock would deadlock.
        self._lock = threading.RLock()

    @property
    def reason(self) -> str | None:
        """The reason given to ``abort()``, if any."""
        return self._reason

    def add_callback(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Call ``callback`` (once) on abort, at once if already aborted; returns a remover.

        The callback runs in the thread that calls ``abort()``: it must be thread-safe
        (typically ``loop.call_soon_threadsafe(...)``).
        """
        with self._lock:
            self._callbacks.append(callback)
        # Checked after the append: an abort() that ran before it (even one from a signal
        # handler that interrupted this very thread) finds the callback here, never loses it.
        if self.aborted:
            self._drain()
        return lambda: self._remove(callback)

    def _remove(self, callback: Callable[[], None]) -> None:
        with self._lock:
            if callback in self._callbacks:
                self._callbacks.remove(callback)

    def _drain(self) -> None:
        # One callback at a time, each taken under the lock: whoever takes it runs it, once.
        while True:
            with self._lock:
                if not self._callbacks:
                    return
                callback = self._callbacks.pop(0)
            callback()

    def _abort(self, reason: str | None) -> None:
        with self._lock:
            if self.aborted:
                return
            self.aborted = True
            self._reason = reason
        self._drain()

    def throw_if_aborted(self) -> None:
        """Raise :class:`AbortedError` if the signal has fired."""
        if self.aborted:
            raise AbortedError(self._reason or "Request was aborted")


class AbortController:
    """Owns an :class:`AbortSignal` and fires it."""

    __slots__ = ("signal",)

    def __init__(self) -> None:
        self.signal = AbortSignal()

    def abort(self, reason: str | None = None) -> None:
        """Fire the signal; later calls do nothing."""
        self.signal._abort(reason)


class AbortedError(Exception):
    """Raised inside tools and callbacks that check a fired signal."""
