"""An agent's listeners: called with every event in subscription order, sync or async.

A synchronous listener (the usual case) costs a plain call per event: no coroutine is made
unless a listener returns an awaitable, which is then awaited before the next listener runs.
Every listener sees the event even if one before it failed; the first failure is raised once
all have run.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Any, TypeAlias

from tau.agent.events import AgentEvent

__all__ = ["AgentListener", "Listeners"]

AgentListener: TypeAlias = Callable[[AgentEvent], Any]
"""``(event) -> None`` or an awaitable, which the agent awaits."""


class Listeners:
    """The listeners of one agent, in subscription order."""

    __slots__ = ("_listeners", "_snapshot")

    def __init__(self) -> None:
        self._listeners: dict[AgentListener, None] = {}
        # Delivery iterates a snapshot: a listener may subscribe or unsubscribe during it.
        self._snapshot: tuple[AgentListener, ...] = ()

    def subscribe(self, listener: AgentListener) -> Callable[[], None]:
        """Call ``listener`` with every event from now on; returns the unsubscribe function."""
        self._listeners[listener] = None
        self._snapshot = tuple(self._listeners)

        def unsubscribe() -> None:
            if self._listeners.pop(listener, 0) is None:
                self._snapshot = tuple(self._listeners)

        return unsubscribe

    def deliver(self, event: AgentEvent) -> Awaitable[None] | None:
        """Call every listener with ``event``; an awaitable if one of them returned one (await
        it: the rest run after it), else None. Raises the first listener's failure."""
        failure: Exception | None = None
        listeners = self._snapshot
        for index, listener in enumerate(listeners):
            try:
                result = listener(event)
            except Exception as exc:
                if failure is None:
                    failure = exc
                continue
            if result is not None and inspect.isawaitable(result):
                return self._deliver_async(event, result, listeners[index + 1 :], failure)
        if failure is not None:
            raise failure
        return None

    @staticmethod
    async def _deliver_async(
        event: AgentEvent,
        pending: Awaitable[Any],
        rest: tuple[AgentListener, ...],
        failure: Exception | None,
    ) -> None:
        try:
            await pending
        except Exception as exc:
            failure = failure or exc
        for listener in rest:
            try:
                result = listener(event)
                if result is not None and inspect.isawaitable(result):
                    await result
            except Exception as exc:
                if failure is None:
                    failure = exc
        if failure is not None:
            raise failure
