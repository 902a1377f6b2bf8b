"""The ``chat {model}`` span and the client metrics of one LLM call."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping
from contextvars import ContextVar
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import SpanKind, Status, StatusCode

from tau.ai import AssistantMessage, AssistantMessageEvent, Context, Model, redact_secrets
from tau.ai.adapters import http_observer
from tau.telemetry import _content, _semconv
from tau.telemetry._guard import guarded
from tau.telemetry._recorder import Recorder

Start = Callable[[Model, Context, Mapping[str, Any]], Any]

_observed: ContextVar[bool] = ContextVar("tau_telemetry_observed", default=False)
"""True while an observed call starts: a call it makes through the entry points (an agent's
stream function calling ``stream_simple``) is the same call, not a second span."""

# Models that run in this process: their span is INTERNAL, not CLIENT.
_IN_PROCESS_APIS = frozenset({"llama-cpp", "faux"})


class ChatCall:
    """One call's span, from the request to the terminal event (see :meth:`on_event`).

    It is also the call's :class:`~tau.ai.HttpObserver`: retries become span events.
    """

    __slots__ = (
        "_first_chunk",
        "_metric_attributes",
        "_settings",
        "_started",
        "span",
    )

    def __init__(
        self,
        settings: Recorder,
        model: Model,
        context: Context,
        options: Mapping[str, Any],
    ) -> None:
        self._settings = settings
        common: dict[str, Any] = {
            _semconv.OPERATION: "chat",
            _semconv.PROVIDER: _semconv.provider_name(model),
            _semconv.REQUEST_MODEL: model.id,
            **_semconv.server_attributes(model.base_url),
        }
        self._metric_attributes = common
        attributes: dict[str, Any] = {**common, _semconv.API: model.api}
        attributes[_semconv.REQUEST_STREAM] = True
        for key, name in (
            ("max_tokens", _semconv.REQUEST_MAX_TOKENS),
            ("temperature", _semconv.REQUEST_TEMPERATURE),
            ("session_id", _semconv.CONVERSATION_ID),
        ):
            value = options.get(key)
            if value is not None:
                attributes[name] = value
        if settings.capture_content:
            if context.system_prompt:
                attributes[_semconv.SYSTEM_INSTRUCTIONS] = _content.system_instructions(
                    context.system_prompt
                )
            attributes[_semconv.INPUT_MESSAGES] = _content.input_messages(context.messages)
        kind = SpanKind.INTERNAL if model.api in _IN_PROCESS_APIS else SpanKind.CLIENT
        self.span = settings.tracer.start_span(f"chat {model.id}", kind=kind, attributes=attributes)
        self._started = time.perf_counter()
        self._first_chunk: float | None = None

    # ----------------------------------------------------------------------- starting

    def start(
        self, start: Start, model: Model, context: Context, options: Mapping[str, Any]
    ) -> Any:
        """Start the call with this span current (the call's task inherits it)."""
        tokens = self._enter()
        try:
            made = start(model, context, options)
        except BaseException as exc:
            self.abandon(exc)
            raise
        finally:
            self._leave(tokens)
        if hasattr(made, "__aiter__"):
            self.watch(made)
            return made
        return self._awaited(made)

    async def _awaited(self, made: Awaitable[Any]) -> Any:
        # A stream function may be async: what it awaits runs with the span current too.
        tokens = self._enter()
        try:
            stream = await made
        except BaseException as exc:
            self.abandon(exc)
            raise
        finally:
            self._leave(tokens)
        self.watch(stream)
        return stream

    def _enter(self) -> tuple[object, object, object]:
        return (
            otel_context.attach(trace.set_span_in_context(self.span)),
            _observed.set(True),
            http_observer.set(self),
        )

    def _leave(self, tokens: tuple[Any, Any, Any]) -> None:
        otel_token, observed_token, http_token = tokens
        http_observer.reset(http_token)
        _observed.reset(observed_token)
        otel_context.detach(otel_token)

    def watch(self, stream: object) -> None:
        """See the stream's events; a stream that cannot be tapped ends the span at once."""
        tap = getattr(stream, "tap", None)
        if tap is None:
            with guarded("ending the chat span"):
                self.span.end()
        else:
            tap(self.on_event)

    # ----------------------------------------------------------------------- events

    def on_event(self, event: AssistantMessageEvent) -> None:
        """Every event of the stream, as it is pushed: this is the per-event cost when on."""
        if event.type == "done":
            self._finish_safely(event.message)
        elif event.type == "error":
            self._finish_safely(event.error)
        elif self._first_chunk is None and event.type != "start":
            self._first_chunk = time.perf_counter()

    def _finish_safely(self, message: AssistantMessage) -> None:
        # Runs inside the adapter's push: a failing exporter or meter must not end the stream.
        with guarded("recording the chat span"):
            self.finish(message)

    def request(self, method: str, url: str) -> None:
        """An HTTP attempt: the address a model's URL template left open becomes known."""
        span = self.span
        if span.is_recording() and _semconv.SERVER_ADDRESS not in self._metric_attributes:
            found = _semconv.server_attributes(url)
            if found:
                span.set_attributes(found)
                self._metric_attributes = {**self._metric_attributes, **found}

    def retry(self, attempt: int, delay: float, reason: str, status: int | None) -> None:
        """A retry after a failed attempt: one span event."""
        attributes: dict[str, Any] = {
            _semconv.RESEND_COUNT: attempt,
            _semconv.RETRY_DELAY: delay,
            _semconv.ERROR_TYPE: str(status) if status is not None else "connection",
        }
        if status is not None:
            attributes[_semconv.STATUS_CODE] = status
        self.span.add_event(_semconv.RETRY_EVENT, attributes)

    # ----------------------------------------------------------------------- ending

    def finish(self, message: AssistantMessage) -> None:
        """The terminal event: response attributes, status, metrics, end."""
        ended = time.perf_counter()
        settings = self._settings
        failed = message.stop_reason == "error" or message.stop_reason == "aborted"
        span = self.span
        metric_attributes = {**self._metric_attributes, _semconv.RESPONSE_MODEL: message.model}
        if span.is_recording():
            attributes = {
                _semconv.RESPONSE_MODEL: message.model,
                _semconv.FINISH_REASONS: [_semconv.finish_reason(message.stop_reason)],
                **_semconv.usage_attributes(message),
            }
            response_id = getattr(message, "response_id", None)
            if response_id:
                attributes[_semconv.RESPONSE_ID] = response_id
            if self._first_chunk is not None:
                attributes[_semconv.TIME_TO_FIRST_CHUNK] = self._first_chunk - self._started
            if settings.capture_content:
                attributes[_semconv.OUTPUT_MESSAGES] = _content.output_messages(message)
            if failed:
                attributes[_semconv.ERROR_TYPE] = _semconv.error_type(message)
                span.set_status(Status(StatusCode.ERROR, self._scrub(message.error_message)))
            span.set_attributes(attributes)
        span.end()
        duration_attributes = metric_attributes
        if failed:
            duration_attributes = {
                **metric_attributes,
                _semconv.ERROR_TYPE: _semconv.error_type(message),
            }
        settings.duration.record(ended - self._started, duration_attributes)
        if self._first_chunk is not None:
            settings.time_to_first_chunk.record(
                self._first_chunk - self._started, metric_attributes
            )
        usage = message.usage
        if usage.input or usage.output or usage.cache_read or usage.cache_write:
            input_tokens = usage.input + usage.cache_read + usage.cache_write
            for token_type, count in (("input", input_tokens), ("output", usage.output)):
                settings.token_usage.record(
                    count, {**metric_attributes, _semconv.TOKEN_TYPE: token_type}
                )

    def abandon(self, exc: BaseException) -> None:
        """Starting the call raised (an unknown api, a failing stream function)."""
        span = self.span
        with guarded("ending the chat span"):
            span.set_attribute(_semconv.ERROR_TYPE, type(exc).__qualname__)
            span.set_status(Status(StatusCode.ERROR, self._scrub(str(exc))))
            span.end()

    @staticmethod
    def _scrub(text: str | None) -> str | None:
        return redact_secrets(text) if text else text


def observe_call(
    settings: Recorder,
    start: Start,
    model: Model,
    context: Context,
    options: Mapping[str, Any],
) -> Any:
    """Start the call inside a new ``chat`` span (the span of an enclosing observed call, if
    there is one, already covers it)."""
    if _observed.get():
        return start(model, context, options)
    call: ChatCall | None = None
    with guarded("starting a chat span"):
        call = ChatCall(settings, model, context, options)
    if call is None:
        return start(model, context, options)
    return call.start(start, model, context, options)
