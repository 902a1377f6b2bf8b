"""What instrumentation records and where it goes: :class:`InstrumentationSettings`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from opentelemetry import metrics, trace

from tau import __version__
from tau.agent import RunInfo, RunObservation
from tau.ai import AssistantMessageEventStream, Context, Model
from tau.ai.adapters import StartCall
from tau.telemetry import _semconv
from tau.telemetry._agent import AgentRun
from tau.telemetry._chat import observe_call

__all__ = ["InstrumentationSettings"]

_SCOPE = "tau"


class InstrumentationSettings:
    """Where spans and metrics go, and whether message content is recorded.

    It is both a :class:`tau.ai.CallObserver` (a ``chat`` span per LLM call) and a
    :class:`tau.agent.RunObserver` (an ``invoke_agent`` span per run, ``execute_tool`` per
    tool call): pass it as ``Agent(instrument=...)``, or let :func:`tau.telemetry.instrument`
    install it for the whole process.

    ``tracer_provider``/``meter_provider`` default to OpenTelemetry's global ones.
    ``capture_content=True`` records the system prompt, the messages, tool arguments and tool
    results (``gen_ai.system_instructions``, ``gen_ai.input.messages``,
    ``gen_ai.output.messages``, ``gen_ai.tool.call.arguments``, ``gen_ai.tool.call.result``)
    and tool error texts; without it no prompt, completion or tool text is recorded.
    """

    def __init__(
        self,
        *,
        tracer_provider: trace.TracerProvider | None = None,
        meter_provider: metrics.MeterProvider | None = None,
        capture_content: bool = False,
    ) -> None:
        self.capture_content = capture_content
        self.tracer = trace.get_tracer(_SCOPE, __version__, tracer_provider)
        meter = metrics.get_meter(_SCOPE, __version__, meter_provider)
        self.token_usage = meter.create_histogram(
            _semconv.TOKEN_USAGE_METRIC,
            unit="{token}",
            description="Number of input and output tokens used.",
            explicit_bucket_boundaries_advisory=list(_semconv.TOKEN_BUCKETS),
        )
        self.duration = meter.create_histogram(
            _semconv.DURATION_METRIC,
            unit="s",
            description="GenAI operation duration.",
            explicit_bucket_boundaries_advisory=list(_semconv.SECONDS_BUCKETS),
        )
        self.time_to_first_chunk = meter.create_histogram(
            _semconv.TIME_TO_FIRST_CHUNK_METRIC,
            unit="s",
            description="Time from the request to the first chunk of the streamed response.",
            explicit_bucket_boundaries_advisory=list(_semconv.SECONDS_BUCKETS),
        )

    def __call__(
        self,
        start: StartCall,
        model: Model,
        context: Context,
        options: Mapping[str, Any],
    ) -> AssistantMessageEventStream:
        """Observe one LLM call (the :class:`tau.ai.CallObserver` protocol)."""
        stream: AssistantMessageEventStream = observe_call(self, start, model, context, options)
        return stream

    def start_run(self, run: RunInfo) -> RunObservation:
        """Observe one agent run (the :class:`tau.agent.RunObserver` protocol)."""
        return AgentRun(self, run)
