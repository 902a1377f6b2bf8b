"""tau.telemetry: OpenTelemetry traces and metrics for tau, following the GenAI conventions.

::

    import tau.telemetry
    tau.telemetry.instrument()                        # every call and agent run, process-wide
    agent = Agent(model=model, instrument=True)       # or one agent

Spans: ``chat {model}`` for every LLM call, ``invoke_agent {name}`` for an agent run, and
``execute_tool {name}`` for each tool call, the last two being the run's children in run
order. Metrics: ``gen_ai.client.token.usage``, ``gen_ai.client.operation.duration`` and
``gen_ai.client.operation.time_to_first_chunk``. Spans follow the current OpenTelemetry
context, so a span the application opened contains tau's.

``error.type`` is ``aborted``, an HTTP status (``"429"``), ``timeout``, or ``_OTHER`` for a
failed call; a tool's exception class name (``ValueError``) or ``aborted`` for a tool.

This package needs ``opentelemetry-api`` (``pip install 'tau[otel]'``); nothing else in tau
imports it, and nothing is observed until it is switched on.
"""

from __future__ import annotations

try:
    from opentelemetry import metrics, trace
except ImportError as exc:  # the [otel] extra is not installed
    raise ImportError(
        f"tau.telemetry needs the OpenTelemetry API ({exc}): pip install 'tau[otel]'"
    ) from exc

from tau.agent import get_run_observer, set_run_observer
from tau.ai.adapters import get_call_observer, set_call_observer
from tau.telemetry._settings import InstrumentationSettings

__all__ = ["InstrumentationSettings", "default_settings", "instrument", "uninstrument"]

_installed: InstrumentationSettings | None = None


def instrument(
    tracer_provider: trace.TracerProvider | None = None,
    meter_provider: metrics.MeterProvider | None = None,
    capture_content: bool = False,
) -> InstrumentationSettings:
    """Trace every LLM call and every agent run of this process from now on.

    Agents with ``instrument=False`` are left out; agents given their own
    :class:`InstrumentationSettings` use those. Calling it again replaces the settings.
    Returns the settings installed.
    """
    global _installed
    settings = InstrumentationSettings(
        tracer_provider=tracer_provider,
        meter_provider=meter_provider,
        capture_content=capture_content,
    )
    set_call_observer(settings)
    set_run_observer(settings)
    _installed = settings
    return settings


def uninstrument() -> None:
    """Stop what :func:`instrument` started (calls and runs already started finish traced)."""
    global _installed
    if get_call_observer() is _installed:
        set_call_observer(None)
    if get_run_observer() is _installed:
        set_run_observer(None)
    _installed = None


def default_settings() -> InstrumentationSettings:
    """What ``Agent(instrument=True)`` uses: the settings :func:`instrument` installed, else
    settings for OpenTelemetry's global providers, without content capture."""
    global _default
    if _installed is not None:
        return _installed
    if _default is None:
        _default = InstrumentationSettings()
    return _default


_default: InstrumentationSettings | None = None
