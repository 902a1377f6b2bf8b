"""``stream_structured`` and ``complete_structured``: a validated value from one model.

Each attempt is one call of :func:`tau.ai.stream`; a rejected answer goes back to the model
with its validation errors, up to ``max_retries`` more times.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator
from typing import TYPE_CHECKING, Any, Generic, TypeVar, cast, overload

from tau.ai.core.events import AssistantMessageEvent
from tau.ai.core.types import AssistantMessage, Context, Model, ToolCall
from tau.ai.entry import as_context, stream
from tau.ai.lookup.registry import resolve_api_provider
from tau.ai.streaming.event_stream import StreamEndedError
from tau.ai.structured.extract import NOTHING, PartialOutput
from tau.ai.structured.modes import (
    OutputMode,
    ResolvedMode,
    answer_text,
    output_call,
    output_feedback,
    raw_output,
    read_output,
    resolve_mode,
    structured_request,
)
from tau.ai.structured.result import FailureReason, StructuredOutputError, StructuredResult
from tau.ai.structured.spec import OUTPUT_TOOL_NAME, OutputSpec, OutputValidationError

if TYPE_CHECKING:
    from tau.ai.core.settings_types import Settings

T = TypeVar("T")


class StructuredStream(Generic[T]):
    """A structured call as it streams.

    ``async for partial in s`` yields the output as it forms, each value once, the last one
    being the validated output; ``async for event in s.events()`` yields the underlying
    :class:`~tau.ai.AssistantMessageEvent`\\ s of every attempt instead (iterate one of the
    two). ``await s.result()`` runs what is left and returns the :class:`StructuredResult`, or
    raises :class:`StructuredOutputError`. Closing it early (``aclose``, or cancelling the
    task) closes the call in flight.
    """

    def __init__(
        self,
        model: Model,
        context: Context | str,
        output_type: OutputSpec[T] | type[T] | Any,
        *,
        mode: OutputMode = "auto",
        max_retries: int = 1,
        options: dict[str, Any],
        settings: Settings | None = None,
    ) -> None:
        if max_retries < 0:
            raise ValueError(f"max_retries must be 0 or more, got {max_retries}")
        self.spec: OutputSpec[T] = OutputSpec.of(output_type)
        self.mode: ResolvedMode = resolve_mode(model, mode)
        self.model = model
        self.max_retries = max_retries
        self.attempts: list[AssistantMessage] = []
        """The messages received so far, failed attempts included."""
        # With settings, every attempt goes through stream(model, context, settings): the
        # keywords beside them win, as at tau.ai.stream.
        self._simple = settings is not None
        merged = {**settings, **options} if settings is not None else options
        self._context, self._options = structured_request(
            model, as_context(context), self.spec, self.mode, merged
        )
        # A misspelt key is a TypeError here, as at tau.ai.stream, not at the first step.
        resolve_api_provider(model.api).check(self._options, simple=self._simple)
        self._partials = PartialOutput(self.spec)
        self._steps: AsyncGenerator[tuple[AssistantMessageEvent | None, Any], None] | None = None
        self._result: StructuredResult[T] | None = None
        self._error: StructuredOutputError | None = None

    @property
    def partial(self) -> Any:
        """The latest partial output (None before the first)."""
        last = self._partials.last
        return None if last is NOTHING else last

    @property
    def context(self) -> Context:
        """The context of the latest attempt (with the rejected answers and their errors)."""
        return self._context

    def __aiter__(self) -> AsyncIterator[Any]:
        return self._only_partials()

    async def _only_partials(self) -> AsyncIterator[Any]:
        async for _, partial in self._run():
            if partial is not NOTHING:
                yield partial

    async def events(self) -> AsyncIterator[AssistantMessageEvent]:
        """The events of every attempt, as they come."""
        async for event, _ in self._run():
            if event is not None:
                yield event

    async def result(self) -> StructuredResult[T]:
        """The validated output; raises :class:`StructuredOutputError` when there is none."""
        async for _ in self._run():
            pass
        if self._error is not None:
            raise self._error
        if self._result is None:
            raise StreamEndedError("the structured stream was closed before it finished")
        return self._result

    async def aclose(self) -> None:
        """Stop: the call in flight is closed."""
        if self._steps is not None:
            await self._steps.aclose()

    async def __aenter__(self) -> StructuredStream[T]:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def _run(self) -> AsyncIterator[tuple[AssistantMessageEvent | None, Any]]:
        if self._steps is None:
            self._steps = self._attempts()
        elif self._result is not None or self._error is not None:
            return
        try:
            async for step in self._steps:
                yield step
        except GeneratorExit:
            # The consumer stopped iterating (a break): the call goes on for result().
            raise
        except BaseException:
            await self._steps.aclose()
            raise

    async def _attempts(self) -> AsyncGenerator[tuple[AssistantMessageEvent | None, Any], None]:
        spec, mode, partials = self.spec, self.mode, self._partials
        for attempt in range(self.max_retries + 1):
            s = (
                stream(self.model, self._context, cast("Settings", self._options))
                if self._simple
                else stream(self.model, self._context, **self._options)
            )
            partials.restart()
            try:
                async for event in s:
                    partial = NOTHING
                    # The deltas, not the blocks: a block may already hold text that later
                    # events bring.
                    if event.type == "text_delta":
                        if mode != "tool":
                            partial = partials.feed(event.delta)
                    elif event.type == "toolcall_delta" and mode == "tool":
                        block = event.partial.content[event.content_index]
                        if isinstance(block, ToolCall) and block.name == OUTPUT_TOOL_NAME:
                            partial = partials.feed(event.delta)
                    yield event, partial
            finally:
                await s.aclose()
            message = await s.result()
            self.attempts.append(message)
            failure = _failure(message)
            if failure is not None:
                self._error = self._fail(*failure, message, [])
                return
            try:
                value = read_output(spec, message, mode)
            except OutputValidationError as exc:
                if message.stop_reason == "length":
                    text = "the response hit the output limit before the output was complete"
                    self._error = self._fail("length", text, message, exc.errors)
                    return
                if mode == "native" and _declined(message):
                    # The provider held the text to the schema, yet no JSON came: a refusal
                    # (OpenAI's refusal field and part arrive as this text). Asking again
                    # would only repeat it.
                    text = f"the model declined: {answer_text(message)[:500]}"
                    self._error = self._fail("refusal", text, message, exc.errors)
                    return
                if attempt < self.max_retries:
                    self._context.messages.extend(output_feedback(message, exc, mode))
                    continue
                self._error = self._fail("invalid", str(exc), message, exc.errors)
                return
            final = partials.settle(value)
            if final is not NOTHING:
                yield None, final
            self._result = StructuredResult(value, message, list(self.attempts))
            return

    def _fail(
        self,
        reason: FailureReason,
        text: str,
        message: AssistantMessage,
        errors: list[tuple[str, str]],
    ) -> StructuredOutputError:
        tries = len(self.attempts)
        return StructuredOutputError(
            f"No valid {self.spec.name} after {tries} attempt{'s' if tries > 1 else ''} "
            f"({reason}): {text}",
            reason=reason,
            # In tool mode, the output call's arguments exactly as they streamed (a finished
            # call keeps only their parse, a cut one only its prefix).
            raw_text=(self.mode == "tool" and self._partials.text)
            or raw_output(message, self.mode),
            errors=errors,
            attempts=list(self.attempts),
        )


def _declined(message: AssistantMessage) -> bool:
    text = answer_text(message)
    return bool(text.strip()) and "{" not in text and output_call(message) is None


def _failure(message: AssistantMessage) -> tuple[FailureReason, str] | None:
    """Why the message cannot carry an output at all (a failed or refused call), if it can't."""
    if message.stop_reason not in ("error", "aborted"):
        return None
    text = message.error_message or "the call failed"
    if message.stop_reason == "aborted":
        return "aborted", text
    if "(stop reason 'length')" in text:
        return "length", text  # the output call's arguments were cut by the length limit
    if "refusal" in text.lower() or "refused" in text.lower():
        return "refusal", text
    return "error", text


@overload
def stream_structured(
    model: Model,
    context: Context | str,
    output_type: type[T],
    settings: Settings | None = None,
    *,
    mode: OutputMode = ...,
    max_retries: int = ...,
    **options: Any,
) -> StructuredStream[T]: ...
@overload
def stream_structured(
    model: Model,
    context: Context | str,
    output_type: Any,
    settings: Settings | None = None,
    *,
    mode: OutputMode = ...,
    max_retries: int = ...,
    **options: Any,
) -> StructuredStream[Any]: ...
def stream_structured(
    model: Model,
    context: Context | str,
    output_type: Any,
    settings: Settings | None = None,
    *,
    mode: OutputMode = "auto",
    max_retries: int = 1,
    **options: Any,
) -> StructuredStream[Any]:
    """Stream a validated ``output_type`` value (see :class:`StructuredStream`).

    ``output_type`` is a pydantic model, any type a pydantic ``TypeAdapter`` takes, a JSON
    Schema dict (validated with jsonschema-rs), or an :class:`OutputSpec`. ``settings`` (a
    :class:`tau.ai.Settings`) and ``options`` (the adapter's own options) are as for
    :func:`tau.ai.stream`. Raises ``TypeError``/``ValueError``
    at once for an output type that is not one, an unknown mode or an unknown option.
    """
    return StructuredStream(
        model,
        context,
        output_type,
        mode=mode,
        max_retries=max_retries,
        options=options,
        settings=settings,
    )


@overload
async def complete_structured(
    model: Model,
    context: Context | str,
    output_type: type[T],
    settings: Settings | None = None,
    *,
    mode: OutputMode = ...,
    max_retries: int = ...,
    **options: Any,
) -> StructuredResult[T]: ...
@overload
async def complete_structured(
    model: Model,
    context: Context | str,
    output_type: Any,
    settings: Settings | None = None,
    *,
    mode: OutputMode = ...,
    max_retries: int = ...,
    **options: Any,
) -> StructuredResult[Any]: ...
async def complete_structured(
    model: Model,
    context: Context | str,
    output_type: Any,
    settings: Settings | None = None,
    *,
    mode: OutputMode = "auto",
    max_retries: int = 1,
    **options: Any,
) -> StructuredResult[Any]:
    """A validated ``output_type`` value from ``model``: a :class:`StructuredResult`.

    A rejected answer is sent back with its validation errors up to ``max_retries`` more
    times (``max_retries=2``: at most 3 calls). Raises :class:`StructuredOutputError` when no
    answer validates, or on a refusal, a length stop before the output was complete, a
    provider error or an abort; its ``attempts`` hold every message.
    """
    s = stream_structured(
        model, context, output_type, settings, mode=mode, max_retries=max_retries, **options
    )
    try:
        return await s.result()
    finally:
        await s.aclose()
