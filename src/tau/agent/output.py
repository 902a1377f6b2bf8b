"""Typed output of an agent run: with ``output_type``, a run ends on a validated value.

::

    class City(BaseModel):
        name: str
        country: str

    agent = Agent(model=model, tools=[search], output_type=City)

    @agent.output_validator
    def in_europe(city: City) -> City:
        if city.country not in EUROPE:
            raise ModelRetry(f"{city.country} is not in Europe: pick a European city")
        return city

    result = await agent.prompt("Which city hosted the 1992 Olympics?")
    result.output            # City(name='Barcelona', country='Spain'), also agent.state.output

The model may call tools first; the run ends when it delivers an output that validates
against ``output_type`` and passes every output validator. How the output is asked for is the
``output_mode`` (as in :func:`tau.ai.complete_structured`):

``tool``
    an output tool (``final_result``) sits beside the run's tools; the model calls it with the
    output as its arguments. Other tool calls of the same response still run (their results
    are in the transcript), then the run ends. A text answer is read as JSON if it holds an
    object, else the model is told to call the tool.
``native``
    the ``output_schema`` option asks the provider for structured output; the final answer
    (a response without tool calls) is the JSON. Fallback models get the same option.
``prompted``
    the schema goes in the system prompt; the JSON is picked out of the final answer.
``auto`` (the default)
    ``native`` where :func:`tau.ai.supports_native_output` says the model has it, else
    ``tool``; an :class:`~tau.agent.Agent` with ``fallback_models`` picks ``native`` only when
    every one of its models has it (a loop given a fallback ``stream_fn`` directly cannot see
    them: pass the mode).

A rejected output (invalid, or an output validator raising :class:`ModelRetry`) goes back to
the model with the reason, as the output call's error result in ``tool`` mode and as a user
message otherwise, up to ``output_retries`` more times. After that, or on a response cut at the
length limit before its output was complete, or an output validator raising anything else, the
run ends with an assistant message whose ``stop_reason`` is ``error`` and whose
``error_message`` says why (``No valid output (City) after 2 attempts: …``). A run never ends
"successfully" without its output.

While the output streams, ``output_update`` events carry its partial value (validated with
pydantic's partial validation, see :class:`tau.ai.PartialOutput`), each value once, the last
one being the output. A valid output ends the run without polling follow-up messages (they
stay queued); steering messages that arrived during the output's turn are delivered, and the
run then needs a new output.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any, TypeAlias

from tau.agent.messages import AgentMessage
from tau.agent.tools import AgentTool
from tau.ai import (
    AssistantMessage,
    AssistantMessageEvent,
    Context,
    Model,
    TextContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from tau.ai.structured import (
    NOTHING,
    OUTPUT_TOOL_NAME,
    OutputMode,
    OutputSpec,
    OutputValidationError,
    PartialOutput,
    output_feedback,
    read_output,
    resolve_mode,
    structured_request,
)

__all__ = [
    "ACCEPTED_MESSAGE",
    "ModelRetry",
    "OutputFailedError",
    "OutputRun",
    "OutputTool",
    "OutputValidator",
]

ACCEPTED_MESSAGE = "The final output was accepted."
"""The result of an output call that was accepted."""

OutputValidator: TypeAlias = Callable[[Any], Any]
"""``(output) -> output``, sync or async: checks (and may change) a validated output.

It returns the output to keep (``None`` keeps the one it was given) and raises
:class:`ModelRetry` to reject it with a message for the model. Any other exception ends the
run with an error.
"""


class ModelRetry(Exception):
    """Raised by an output validator: the message goes to the model, which tries again.

    Each rejection counts against ``output_retries``.
    """

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class OutputFailedError(Exception):
    """No valid output: the run ends with this message as its error."""


class OutputTool(AgentTool):
    """The output tool of ``tool`` mode. It validates its arguments itself (against the output
    type, then the output validators), so the loop passes it the model's raw arguments."""

    __slots__ = ("run",)

    def __init__(self, run: OutputRun) -> None:
        tool = run.spec.tool
        super().__init__(tool.name, tool.description, tool.json_schema, threaded=False)
        self.run = run

    async def execute(self, tool_call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
        await self.run.accept_call(tool_call_id, params)
        return ACCEPTED_MESSAGE


class OutputRun:
    """The output side of one run: how the output is asked for, checked and retried."""

    __slots__ = (
        "_accepted",
        "_nothing",
        "_partials",
        "done",
        "failures",
        "mode",
        "retries",
        "spec",
        "tool",
        "validators",
        "value",
    )

    def __init__(
        self,
        model: Model,
        output_type: Any,
        mode: OutputMode,
        retries: int,
        validators: Sequence[OutputValidator],
    ) -> None:
        if retries < 0:
            raise ValueError(f"output_retries must be 0 or more, got {retries}")
        self.spec: OutputSpec[Any] = OutputSpec.of(output_type)
        self.mode = resolve_mode(model, mode)
        self.retries = retries
        self.validators = list(validators)
        self.failures = 0
        self.value: Any = None
        """The last accepted output."""
        self.done = False
        """Whether the run has its output (a steering message after it reopens the run)."""
        self.tool = OutputTool(self) if self.mode == "tool" else None
        self._accepted: dict[str, Any] = {}
        self._partials = PartialOutput(self.spec)

    # ----------------------------------------------------------------------- the request

    def request(
        self, model: Model, system_prompt: str, options: dict[str, Any]
    ) -> tuple[str, dict[str, Any]]:
        """The system prompt and options of every LLM call (``tool`` mode adds a tool
        instead, without forcing it: tools may come first)."""
        if self.mode == "tool":
            return system_prompt, options
        context, options = structured_request(
            model, Context([], system_prompt or None, None), self.spec, self.mode, options
        )
        return context.system_prompt or "", options

    # ----------------------------------------------------------------------- streaming

    def restart(self) -> None:
        """A new response begins."""
        self._partials.restart()

    def partial(self, event: AssistantMessageEvent) -> tuple[bool, Any]:
        """``(True, value)`` when ``event`` made a new partial output, else ``(False, None)``."""
        value: Any = NOTHING
        if event.type == "text_delta":
            if self.mode != "tool":
                value = self._partials.feed(event.delta)
        elif event.type == "toolcall_delta" and self.mode == "tool":
            block = event.partial.content[event.content_index]
            if isinstance(block, ToolCall) and block.name == OUTPUT_TOOL_NAME:
                value = self._partials.feed(event.delta)
        return (False, None) if value is NOTHING else (True, value)

    def settle(self) -> tuple[bool, Any]:
        """``(True, output)`` when the output differs from the last partial given, so that
        the last value given is always the output; else ``(False, None)``."""
        value = self._partials.settle(self.value)
        return (False, None) if value is NOTHING else (True, value)

    # ----------------------------------------------------------------------- checking

    async def check(self, value: Any) -> Any:
        """``value`` through the output validators; raises :class:`ModelRetry` or the
        validator's own exception."""
        for validator in self.validators:
            result = validator(value)
            if inspect.isawaitable(result):
                result = await result
            if result is not None:
                value = result
        return value

    async def accept_call(self, call_id: str, arguments: Any) -> None:
        """Validate an output call's arguments; raises with the message for the model."""
        try:
            value = self.spec.validate_object(arguments)
            self._accepted[call_id] = await self.check(value)
        except OutputValidationError as exc:
            raise _Rejected(
                f"{exc}\n\nFix these errors and call {OUTPUT_TOOL_NAME} again."
            ) from None
        except ModelRetry as exc:
            raise _Rejected(f"{exc.message}\n\nCall {OUTPUT_TOOL_NAME} again.") from None
        except Exception as exc:
            # Not a rejection: the loop ends the run with this failure.
            self._accepted[call_id] = _Broken(exc)
            raise

    async def after_turn(
        self, message: AssistantMessage, results: list[ToolResultMessage]
    ) -> list[AgentMessage]:
        """Decide the output after a turn: sets :attr:`done`, or returns the messages that
        ask for a new answer (none when the run simply goes on), or raises
        :class:`OutputFailedError`."""
        if self.mode == "tool" and message.tool_calls:
            return self._after_output_calls(message, results)
        if message.tool_calls:
            return []  # tools first: the final answer comes later
        try:
            value = read_output(self.spec, message, self.mode)
        except OutputValidationError as exc:
            if message.stop_reason == "length":
                raise OutputFailedError(
                    self._failed("the response hit the output limit before the output was complete")
                ) from None
            return self._reject(message, exc)
        try:
            value = await self.check(value)
        except ModelRetry as exc:
            return self._reject(message, OutputValidationError(exc.message, [], value))
        except Exception as exc:
            raise OutputFailedError(self._failed(f"an output validator failed: {exc}")) from exc
        self._set(value)
        return []

    def _after_output_calls(
        self, message: AssistantMessage, results: list[ToolResultMessage]
    ) -> list[AgentMessage]:
        outputs = [r for r in results if r.tool_name == OUTPUT_TOOL_NAME]
        for result in outputs:
            accepted = self._accepted.pop(result.tool_call_id, _MISSING)
            if isinstance(accepted, _Broken):
                failure = accepted.exc
                raise OutputFailedError(
                    self._failed(f"an output validator failed: {failure}")
                ) from failure
            if accepted is not _MISSING and not result.is_error:
                self._set(accepted)
                return []
        if outputs:
            last = outputs[-1]
            self._count("".join(b.text for b in last.content if isinstance(b, TextContent)))
        return []

    def _reject(
        self, message: AssistantMessage, error: OutputValidationError
    ) -> list[AgentMessage]:
        self._count(str(error))
        # The answer is already in the transcript; only the feedback after it is new.
        return [m for m in output_feedback(message, error, self.mode) if isinstance(m, UserMessage)]

    def _count(self, reason: str) -> None:
        self.failures += 1
        if self.failures > self.retries:
            raise OutputFailedError(self._failed(reason))

    def _failed(self, reason: str) -> str:
        tries = self.failures
        attempts = f" after {tries} attempt{'s' if tries != 1 else ''}" if tries else ""
        return f"No valid output ({self.spec.name}){attempts}: {reason}"

    def _set(self, value: Any) -> None:
        self.value = value
        self.done = True


_MISSING: Any = object()


class _Broken:
    __slots__ = ("exc",)

    def __init__(self, exc: Exception) -> None:
        self.exc = exc


class _Rejected(Exception):
    """An output call that was rejected: its message is the call's error result."""
