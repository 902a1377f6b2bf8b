"""The ``invoke_agent {name}`` span of a run and the ``execute_tool {name}`` span of each call.

The run's span is current for the whole run, so its ``chat`` spans (through the wrapped stream
function) and ``execute_tool`` spans are its children, in run order. A tool span opens when
the call is announced (``tool_execution_start``: preparation and ``before_tool_call`` count)
and closes when the tool's execution ends, with the span current while the tool runs; a call
that never runs (unknown tool, invalid arguments, blocked, skipped, aborted) closes when its
result is delivered. Turn boundaries are events on the run's span.

A run that pauses (tool calls waiting for approval) writes its span into the
``agent_paused`` event, hence into the ``RunState``; the run that resumes it, in any process,
gets its own ``invoke_agent`` span with a link to that one.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import (
    Link,
    Span,
    SpanContext,
    SpanKind,
    Status,
    StatusCode,
    TraceFlags,
)

from tau.agent import (
    AgentEvent,
    AgentEventSink,
    RunInfo,
    StreamFn,
    ToolExecutionEndEvent,
    ToolExecutionStartEvent,
    TurnEndEvent,
    as_tool_result,
)
from tau.ai import AssistantMessage, Context, Model, TextContent, ToolCall, redact_secrets
from tau.telemetry import _content, _semconv
from tau.telemetry._chat import observe_call
from tau.telemetry._guard import guarded
from tau.telemetry._recorder import Recorder

T = TypeVar("T")


def _resumed_link(link: dict[str, str] | None) -> list[Link]:
    """A link to the span of the run a resumed run continues (none if it was not traced)."""
    if link is None:
        return []
    try:
        context = SpanContext(
            int(link["traceId"], 16),
            int(link["spanId"], 16),
            is_remote=True,
            trace_flags=TraceFlags(TraceFlags.SAMPLED),
        )
    except (KeyError, ValueError):
        return []
    if not context.is_valid:
        return []
    return [Link(context, {"tau.run.resumed": True})]


class AgentRun:
    """One observed run (a :class:`tau.agent.RunObservation`)."""

    def __init__(self, settings: Recorder, info: RunInfo) -> None:
        self._settings = settings
        self._info = info
        config = info.config
        model = config.model
        self._common: dict[str, Any] = {
            _semconv.PROVIDER: _semconv.provider_name(model),
            _semconv.REQUEST_MODEL: model.id,
            **_semconv.server_attributes(model.base_url),
        }
        self._span: Span = trace.INVALID_SPAN
        self._parent = otel_context.get_current()
        # Tool spans by call id, waiting for their execution (a list: ids may repeat).
        self._tools: dict[str, list[Span]] = {}
        self._turn = 0
        self._input_tokens = 0
        self._output_tokens = 0
        self._cost = 0.0
        self._last: AssistantMessage | None = None

    # ----------------------------------------------------------------------- the run

    async def run(self, body: Callable[[], Awaitable[T]]) -> T:
        """Run ``body`` with the run's span current."""
        info = self._info
        config = info.config
        attributes: dict[str, Any] = {
            _semconv.OPERATION: "invoke_agent",
            _semconv.AGENT_NAME: info.name,
            **self._common,
        }
        for key, name in (
            ("max_tokens", _semconv.REQUEST_MAX_TOKENS),
            ("temperature", _semconv.REQUEST_TEMPERATURE),
        ):
            value = config.stream_options.get(key)
            if value is not None:
                attributes[name] = value
        if config.session_id:
            attributes[_semconv.CONVERSATION_ID] = config.session_id
        if self._settings.capture_content:
            if info.context.system_prompt:
                attributes[_semconv.SYSTEM_INSTRUCTIONS] = _content.system_instructions(
                    info.context.system_prompt
                )
            attributes[_semconv.INPUT_MESSAGES] = _content.input_messages(info.prompts)
        with guarded("starting the agent span"):
            self._span = self._settings.tracer.start_span(
                f"invoke_agent {info.name}",
                kind=SpanKind.INTERNAL,
                attributes=attributes,
                links=_resumed_link(config.resume_from.trace_link if config.resume_from else None),
            )
        span = self._span
        self._parent = trace.set_span_in_context(span)
        token = otel_context.attach(self._parent)
        try:
            return await body()
        except BaseException as exc:
            with guarded("recording the agent span"):
                span.set_attribute(_semconv.ERROR_TYPE, _exception_type(exc))
                span.set_status(Status(StatusCode.ERROR, type(exc).__qualname__))
            raise
        finally:
            otel_context.detach(token)
            for waiting in self._tools.values():
                for tool_span in waiting:
                    _end_tool(tool_span, "aborted", None)
            self._tools.clear()
            with guarded("ending the agent span"):
                self._finish()

    def _finish(self) -> None:
        span = self._span
        if span.is_recording():
            attributes: dict[str, Any] = {
                _semconv.INPUT_TOKENS: self._input_tokens,
                _semconv.OUTPUT_TOKENS: self._output_tokens,
                _semconv.COST: self._cost,
            }
            last = self._last
            if last is not None:
                attributes[_semconv.FINISH_REASONS] = [_semconv.finish_reason(last.stop_reason)]
                if self._settings.capture_content:
                    attributes[_semconv.OUTPUT_MESSAGES] = _content.output_messages(last)
                if last.stop_reason == "error" or last.stop_reason == "aborted":
                    attributes[_semconv.ERROR_TYPE] = _semconv.error_type(last)
                    span.set_status(
                        Status(StatusCode.ERROR, redact_secrets(last.error_message or ""))
                    )
            span.set_attributes(attributes)
        span.end()

    # ----------------------------------------------------------------------- events

    def sink(self, sink: AgentEventSink) -> AgentEventSink:
        """Watch the run's events on their way to ``sink``."""
        observe = self._on_event

        def observed(event: AgentEvent) -> Awaitable[None] | None:
            if event.type != "message_update":  # one per token: not looked at
                observe(event)
            return sink(event)

        return observed

    def _on_event(self, event: AgentEvent) -> None:
        # A failing exporter must not become a failing sink, which would end the run.
        with guarded(f"recording the agent event {event.type!r}"):
            self._record(event)

    def _record(self, event: AgentEvent) -> None:
        if event.type == "turn_start":
            self._turn += 1
            self._span.add_event(_semconv.TURN_START_EVENT, {_semconv.TURN: self._turn})
        elif event.type == "tool_execution_start":
            self._start_tool(event)
        elif event.type == "tool_execution_end":
            self._end_unrun_tool(event)
        elif event.type == "turn_end":
            self._end_turn(event)
        elif event.type == "agent_paused":
            context = self._span.get_span_context()
            if context.is_valid:
                event.trace_link = {
                    "traceId": trace.format_trace_id(context.trace_id),
                    "spanId": trace.format_span_id(context.span_id),
                }
            # A call left waiting is not a failure: its span ends marked paused; the resumed
            # run gives the call a span of its own.
            for entry in event.paused:
                for span in self._tools.pop(entry.id, ()):
                    span.set_attribute("tau.tool.paused", True)
                    span.end()

    def _end_turn(self, event: TurnEndEvent) -> None:
        message = event.message
        attributes: dict[str, Any] = {
            _semconv.TURN: self._turn,
            _semconv.TURN_TOOL_CALLS: len(event.tool_results),
        }
        if isinstance(message, AssistantMessage):
            self._last = message
            usage = message.usage
            self._input_tokens += usage.input + usage.cache_read + usage.cache_write
            self._output_tokens += usage.output
            self._cost += usage.cost.total
            attributes[_semconv.FINISH_REASONS] = [_semconv.finish_reason(message.stop_reason)]
        self._span.add_event(_semconv.TURN_END_EVENT, attributes)

    # ----------------------------------------------------------------------- tools

    def _start_tool(self, event: ToolExecutionStartEvent) -> None:
        attributes: dict[str, Any] = {
            _semconv.OPERATION: "execute_tool",
            _semconv.TOOL_NAME: event.tool_name,
            _semconv.TOOL_CALL_ID: event.tool_call_id,
            _semconv.TOOL_TYPE: "function",
        }
        # The run's tools as of this turn (tool sources such as MCP servers change them).
        tools = self._info.context.tools or ()
        description = next((t.description for t in tools if t.name == event.tool_name), None)
        if description:
            attributes[_semconv.TOOL_DESCRIPTION] = description
        if self._settings.capture_content:
            attributes[_semconv.TOOL_ARGUMENTS] = _content.to_json(event.args)
        span = self._settings.tracer.start_span(
            f"execute_tool {event.tool_name}",
            context=self._parent,
            kind=SpanKind.INTERNAL,
            attributes=attributes,
        )
        self._tools.setdefault(event.tool_call_id, []).append(span)

    def _take_tool(self, call_id: str) -> Span | None:
        waiting = self._tools.get(call_id)
        if not waiting:
            return None
        span = waiting.pop(0)
        if not waiting:
            del self._tools[call_id]
        return span

    def _end_unrun_tool(self, event: ToolExecutionEndEvent) -> None:
        span = self._take_tool(event.tool_call_id)
        if span is None:  # it ran: its execution ended the span
            return
        text = _text(event.result.content) if self._settings.capture_content else None
        if event.is_error:
            _end_tool(span, "_OTHER", text)
            return
        with guarded("ending a tool span"):
            if text is not None:
                span.set_attribute(_semconv.TOOL_RESULT, text)
            span.end()

    async def execute_tool(self, call: ToolCall, work: Awaitable[T]) -> T:
        """Run the tool with its span current; its outcome sets the span's status."""
        span = self._take_tool(call.id)
        if span is None:  # announced by no event: a run driven in some other way
            with guarded("starting a tool span"):
                span = self._start_unannounced_tool(call)
        if span is None:
            return await work
        token = otel_context.attach(trace.set_span_in_context(span))
        try:
            value = await work
        except asyncio.CancelledError:
            _end_tool(span, "aborted", None)
            raise
        except BaseException as exc:
            text = str(exc) if self._settings.capture_content else None
            _end_tool(span, type(exc).__qualname__, text)
            raise
        finally:
            otel_context.detach(token)
        if self._settings.capture_content:
            # A value the loop cannot use is reported by the loop; the span just ends.
            with contextlib.suppress(Exception):
                result = _content.result_value(as_tool_result(value).content)
                span.set_attribute(_semconv.TOOL_RESULT, _content.to_json(result))
        with guarded("ending a tool span"):
            span.end()
        return value

    def _start_unannounced_tool(self, call: ToolCall) -> Span:
        return self._settings.tracer.start_span(
            f"execute_tool {call.name}",
            context=self._parent,
            kind=SpanKind.INTERNAL,
            attributes={
                _semconv.OPERATION: "execute_tool",
                _semconv.TOOL_NAME: call.name,
                _semconv.TOOL_CALL_ID: call.id,
            },
        )

    # ----------------------------------------------------------------------- model calls

    def stream_fn(self, stream_fn: StreamFn) -> StreamFn:
        """Each call of ``stream_fn`` inside a ``chat`` span, a child of the run's span."""
        settings = self._settings

        def start(model: Model, context: Context, options: Any) -> Any:
            return stream_fn(model, context, **options)

        def call(model: Model, context: Context, **options: Any) -> Any:
            return observe_call(settings, start, model, context, options)

        return call


def _exception_type(exc: BaseException) -> str:
    return "aborted" if isinstance(exc, asyncio.CancelledError) else type(exc).__qualname__


def _text(content: list[Any]) -> str:
    return "".join(block.text for block in content if isinstance(block, TextContent))


def _end_tool(span: Span, error_type: str, description: str | None) -> None:
    """End a tool span as failed; ``description`` (the error text) only with content capture."""
    with guarded("ending a tool span"):
        span.set_attribute(_semconv.ERROR_TYPE, error_type)
        span.set_status(
            Status(StatusCode.ERROR, redact_secrets(description) if description else None)
        )
        span.end()
