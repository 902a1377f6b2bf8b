"""Seams for instrumentation: how an observer (``tau.telemetry``) watches agent runs.

A :class:`RunObserver` is chosen per run from :attr:`AgentLoopConfig.instrument
<tau.agent.AgentLoopConfig.instrument>` (None: the process-wide one installed with
:func:`set_run_observer`; False: none; True: ``tau.telemetry``'s; or an observer). When there
is none, a run costs one ``is None`` test at its start and one per tool call; nothing is
wrapped. When there is one, it gets a :class:`RunObservation` for the run, and the loop

* sends every event through :meth:`RunObservation.sink` (it wraps the run's sink),
* calls the model through :meth:`RunObservation.stream_fn` (it wraps the stream function),
* awaits each tool's execution through :meth:`RunObservation.execute_tool`, in the tool's task,
* and runs the whole run inside :meth:`RunObservation.run`, in the run's task,

so an observer can make its own context (a span) current around the run and each tool.
"""

from __future__ import annotations

import importlib
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from tau.ai import ToolCall

if TYPE_CHECKING:
    from tau.agent.messages import AgentMessage
    from tau.agent.types import AgentContext, AgentEventSink, AgentLoopConfig, StreamFn

__all__ = [
    "RunInfo",
    "RunObservation",
    "RunObserver",
    "get_run_observer",
    "resolve_run_observer",
    "set_run_observer",
]

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class RunInfo:
    """What a run starts from, as an observer sees it."""

    name: str
    """The agent's name (``AgentLoopConfig.name``)."""
    config: AgentLoopConfig
    context: AgentContext
    """System prompt, transcript (the new input included) and tools."""
    prompts: Sequence[AgentMessage]
    """The run's new input; empty when it continues from the transcript."""


class RunObservation(Protocol):
    """One observed run; see the module docstring for where the loop calls each method."""

    def sink(self, sink: AgentEventSink) -> AgentEventSink:
        """The sink the run emits to: it must pass every event on to ``sink`` and return what
        ``sink`` returns."""
        ...

    def stream_fn(self, stream_fn: StreamFn) -> StreamFn:
        """The stream function the run calls: it must call ``stream_fn`` once per call."""
        ...

    def execute_tool(self, call: ToolCall, work: Awaitable[T]) -> Awaitable[T]:
        """Await ``work`` (the tool running) and return or raise what it does."""
        ...

    def run(self, body: Callable[[], Awaitable[T]]) -> Awaitable[T]:
        """Await ``body()`` (the whole run) and return or raise what it does."""
        ...


class RunObserver(Protocol):
    """Watches agent runs: makes a :class:`RunObservation` for each."""

    def start_run(self, run: RunInfo) -> RunObservation:
        """Called when a run is set up, before its first event."""
        ...


_run_observer: RunObserver | None = None


def set_run_observer(observer: RunObserver | None) -> RunObserver | None:
    """Watch every run whose ``instrument`` is None (None removes it); returns the previous one."""
    global _run_observer
    previous, _run_observer = _run_observer, observer
    return previous


def get_run_observer() -> RunObserver | None:
    """The process-wide run observer, or None."""
    return _run_observer


def resolve_run_observer(instrument: RunObserver | bool | None) -> RunObserver | None:
    """The observer a run with this ``instrument`` setting gets.

    None: the process-wide one (or none); False: none; True: ``tau.telemetry``'s default
    (the process-wide instrumentation's settings, else the global OpenTelemetry providers),
    loaded on demand like an adapter, so ``tau.agent`` never imports it otherwise.
    """
    if instrument is None:
        return _run_observer
    if instrument is False:
        return None
    if instrument is True:
        telemetry: Any = importlib.import_module("tau.telemetry")
        observer: RunObserver = telemetry.default_settings()
        return observer
    return instrument
