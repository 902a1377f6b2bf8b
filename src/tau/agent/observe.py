"""The observer interface: how an observer (``tau.telemetry``, or an application's own) watches
agent runs. The agent defines it and never imports an observer: observers plug in.

A :class:`RunObserver` is chosen per run from :attr:`AgentLoopConfig.instrument
<tau.agent.AgentLoopConfig.instrument>` (None: the process-wide one installed with
:func:`set_run_observer`; False: none; an observer: that one; True: the default observer of
the installed plugin, see :func:`default_run_observer`). When there is none, a run costs one
``is None`` test at its start and one per tool call; nothing is wrapped. When there is one,
it gets a :class:`RunObservation` for the run, and the loop

* sends every event through :meth:`RunObservation.sink` (it wraps the run's sink),
* calls the model through :meth:`RunObservation.stream_fn` (it wraps the stream function),
* awaits each tool's execution through :meth:`RunObservation.execute_tool`, in the tool's task,
* and runs the whole run inside :meth:`RunObservation.run`, in the run's task,

so an observer can make its own context (a span) current around the run and each tool.

Plugins: a distribution offers a default observer under the ``tau.run_observers`` entry point
group, naming a function that returns the observer to use now (tau's own ``[otel]`` extra
registers ``otel = "tau.telemetry:default_settings"``). ``instrument=True`` uses it.
"""

from __future__ import annotations

from collections.abc import Callable

from tau.agent.types import RunInfo, RunObservation, RunObserver

__all__ = [
    "RunInfo",
    "RunObservation",
    "RunObserver",
    "default_run_observer",
    "get_run_observer",
    "resolve_run_observer",
    "set_run_observer",
]

_run_observer: RunObserver | None = None


def set_run_observer(observer: RunObserver | None) -> RunObserver | None:
    """Watch every run whose ``instrument`` is None (None removes it); returns the previous one."""
    global _run_observer
    previous, _run_observer = _run_observer, observer
    return previous


def get_run_observer() -> RunObserver | None:
    """The process-wide run observer, or None."""
    return _run_observer


OBSERVER_ENTRY_POINTS = "tau.run_observers"
"""The entry point group of default run observers (see the module docstring)."""

_default_factory: Callable[[], RunObserver] | None = None


def default_run_observer() -> RunObserver:
    """The observer ``instrument=True`` gets: the one the installed plugin's factory returns
    now (tau's ``[otel]`` extra: :func:`tau.telemetry.default_settings`).

    The plugin is loaded once, on first use. Raises :class:`ImportError` when none is
    installed, or when the plugin cannot be imported (its message says what to install).
    """
    global _default_factory
    if _default_factory is None:
        from importlib.metadata import entry_points

        found = sorted(entry_points(group=OBSERVER_ENTRY_POINTS), key=lambda e: e.name)
        if not found:
            raise ImportError(
                "instrument=True needs a run observer plugin: pip install 'tau[otel]' "
                "(tau.telemetry), or pass an observer as instrument="
            )
        _default_factory = found[0].load()
    assert _default_factory is not None
    return _default_factory()


def resolve_run_observer(instrument: RunObserver | bool | None) -> RunObserver | None:
    """The observer a run with this ``instrument`` setting gets.

    None: the process-wide one (or none); False: none; True: :func:`default_run_observer`
    (loaded on demand, so ``tau.agent`` imports no observer otherwise); an observer: itself.
    """
    if instrument is None:
        return _run_observer
    if instrument is False:
        return None
    if instrument is True:
        return default_run_observer()
    return instrument
