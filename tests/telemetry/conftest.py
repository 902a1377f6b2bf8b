"""In-memory OpenTelemetry pipelines for the telemetry tests."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import tau.telemetry
from tau.telemetry import InstrumentationSettings


@dataclass
class Otel:
    """One test's tracer and meter providers, and what they recorded."""

    tracer_provider: TracerProvider
    meter_provider: MeterProvider
    exporter: InMemorySpanExporter
    reader: InMemoryMetricReader

    def settings(self, capture_content: bool = False) -> InstrumentationSettings:
        return InstrumentationSettings(
            tracer_provider=self.tracer_provider,
            meter_provider=self.meter_provider,
            capture_content=capture_content,
        )

    def instrument(self, capture_content: bool = False) -> InstrumentationSettings:
        return tau.telemetry.instrument(
            self.tracer_provider, self.meter_provider, capture_content=capture_content
        )

    def spans(self) -> list[ReadableSpan]:
        """Finished spans in start order."""
        return sorted(self.exporter.get_finished_spans(), key=lambda s: s.start_time or 0)

    def span(self, name: str) -> ReadableSpan:
        (found,) = [s for s in self.spans() if s.name == name]
        return found

    def metrics(self) -> dict[str, list[Any]]:
        """Histogram data points by metric name."""
        data = self.reader.get_metrics_data()
        found: dict[str, list[Any]] = {}
        if data is None:
            return found
        for resource in data.resource_metrics:
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    found.setdefault(metric.name, []).extend(metric.data.data_points)
        return found


@pytest.fixture
def otel() -> Iterator[Otel]:
    exporter = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    reader = InMemoryMetricReader()
    meter_provider = MeterProvider(metric_readers=[reader])
    try:
        yield Otel(tracer_provider, meter_provider, exporter, reader)
    finally:
        tau.telemetry.uninstrument()
        tracer_provider.shutdown()
        meter_provider.shutdown()


def tree(spans: list[ReadableSpan]) -> list[tuple[str, str | None]]:
    """``(name, parent name)`` of each span, in start order."""
    by_id = {s.context.span_id: s.name for s in spans if s.context is not None}
    return [(s.name, by_id.get(s.parent.span_id) if s.parent else None) for s in spans]
