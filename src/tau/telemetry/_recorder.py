"""What the span and metric code needs of the settings: :class:`Recorder`.

:class:`~tau.telemetry.InstrumentationSettings` is one. The chat and agent observers type
against this protocol instead of importing the settings module, which imports them (so the
telemetry modules form no loop).
"""

from __future__ import annotations

from typing import Protocol

from opentelemetry import metrics, trace

__all__ = ["Recorder"]


class Recorder(Protocol):
    """Where spans and metrics go, and whether message content is recorded."""

    capture_content: bool
    tracer: trace.Tracer
    token_usage: metrics.Histogram
    duration: metrics.Histogram
    time_to_first_chunk: metrics.Histogram
