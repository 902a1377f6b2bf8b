"""One agent run: its state, and the double loop that drives it from ``agent_start`` to
``agent_end``.

The double loop of the seed design. The inner loop runs turns (one LLM response plus its tool
calls) while the model calls tools or steering messages are pending; when it would stop, the
outer loop asks for follow-up messages and, if there are any, runs more turns. Every LLM call
goes through ``transform_context`` and then ``convert_to_llm``, after the config's
``tool_sources`` (MCP servers) were asked for their current tools.

The tool calls of a turn are run by the run's :class:`~tau.agent.tool_batch.ToolBatch`; the
run and its batch hold each other. :mod:`tau.agent.loop` has the entry points.

Where this departs from pi-agent-core 0.58.3 (deliberately):

* A failure never leaves the stream hanging. An exception in ``transform_context``,
  ``convert_to_llm``, ``get_api_key`` or ``stream_fn``, or a provider stream that ends without a
  terminal event, ends the turn with an assistant message whose ``stop_reason`` is ``error``
  (``aborted`` if the signal fired) and whose ``error_message`` says what happened, delivered
  with ``message_start``/``message_end``/``turn_end``, then ``agent_end``. The same happens for
  a failing steering/follow-up callback or sink, after the tool batch in progress has given
  every call a result.
* ``after_tool_call`` raising, or returning something that is not an ``AfterToolCallResult``,
  gives that call an error result (pi kills the run); ``before_tool_call`` and
  ``prepare_arguments`` do the same. A tool (or hook) raising any ``BaseException`` but
  cancellation (``GeneratorExit``, ``SystemExit``…) gets an error result too: nothing a tool
  raises escapes the run.
* A synchronous tool runs in a worker thread (:func:`~tau.agent.tools.run_tool`), so abort
  and the grace period apply to it like to any other.
* Parallel mode emits ``tool_execution_end`` and the tool-result messages strictly in the
  assistant's call order, including calls that failed before running (unknown tool, invalid
  arguments, blocked); pi emits those first, out of order.
* Abort is honoured by the loop itself, not only by the provider: no LLM call starts once the
  signal has fired, no turn starts after the turn in which it fired (the run ends with
  ``agent_end`` and the queues keep their messages), tool calls not yet started get the result
  ``Operation aborted``, and a running tool that ignores the signal is cancelled after
  ``tool_abort_grace`` seconds.
* ``tool_execution_update`` calls arriving after the tool finished are ignored, and every
  update is delivered before the call's ``tool_execution_end``.
* :func:`run_agent_loop_continue` works on a copy of the caller's message list (pi appends to
  the caller's list).

Run control (not in pi): ``usage_limits`` are checked before each request, after each response
and before tools run (:mod:`tau.agent.usage`), and a stream that falls back to other models
(:class:`~tau.ai.FallbackEventStream`) has each failed attempt reported as a ``fallback``
event and counted in the run's usage.

Typed output (not in pi): with ``output_type`` the run ends once the model has delivered a
valid output (:mod:`tau.agent.output`), which ``agent_end`` carries.
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import threading
from collections.abc import Sequence
from typing import Any, cast

from tau.agent.approval import current_approver
from tau.agent.events import (
    AgentEndEvent,
    AgentEvent,
    AgentPausedEvent,
    AgentStartEvent,
    FallbackEvent,
    MessageEndEvent,
    MessageStartEvent,
    MessageUpdateEvent,
    OutputUpdateEvent,
    TurnEndEvent,
    TurnStartEvent,
)
from tau.agent.messages import AgentMessage
from tau.agent.observe import RunInfo, RunObservation, resolve_run_observer
from tau.agent.output import OutputRun
from tau.agent.tool_batch import SinkError, ToolBatch, invoke
from tau.agent.tool_sources import gather_tools
from tau.agent.types import (
    AgentContext,
    AgentEventSink,
    AgentLoopConfig,
    GetMessages,
    StreamFn,
)
from tau.agent.usage import UsageGuard, current_guard
from tau.ai import (
    AbortController,
    AbortedError,
    AbortSignal,
    AssistantMessage,
    AssistantMessageEventStream,
    Context,
    DoneEvent,
    ErrorEvent,
    FailedAttempt,
    FallbackEventStream,
    ProviderError,
    StopReason,
    ToolResultMessage,
)
from tau.ai.adapters import ABORTED_MESSAGE, describe_error
from tau.ai.structured import OUTPUT_TOOL_NAME

__all__ = ["NO_TERMINAL_MESSAGE", "AgentRun", "default_stream_fn"]

NO_TERMINAL_MESSAGE = "the stream function's stream ended without a done or error event"


def default_stream_fn(model: Any, context: Context, **options: Any) -> Any:
    """The LLM call of a run without a ``stream_fn``: :func:`tau.ai.stream_simple`."""
    from tau.ai import Settings, stream_simple

    # The run's options are its settings: handed on as they are, not unpacked into a copy.
    return stream_simple(model, context, cast(Settings, options))


class AgentRun:
    """One run's state; :meth:`run` drives it from ``agent_start`` to ``agent_end``.

    It holds its :class:`~tau.agent.tool_batch.ToolBatch` (``tools``), which holds it back as
    a :class:`~tau.agent.tool_batch.ToolRun`.
    """

    def __init__(
        self,
        context: AgentContext,
        prompts: Sequence[AgentMessage] | None,
        config: AgentLoopConfig,
        sink: AgentEventSink,
        signal: AbortSignal | None,
        stream_fn: StreamFn | None,
    ) -> None:
        self.config = config
        self.sink = sink
        self.signal = signal if signal is not None else AbortController().signal
        self.stream_fn: StreamFn = stream_fn or config.stream_fn or default_stream_fn
        self.prompts = list(prompts) if prompts is not None else None
        self.context = AgentContext(
            context.system_prompt, [*context.messages, *(self.prompts or ())], context.tools
        )
        self.fixed_tools = context.tools or []
        self.new_messages: list[AgentMessage] = list(self.prompts or ())
        self.in_turn = False
        self.open_message: AgentMessage | None = None
        self.deferred: BaseException | None = None
        self.loop = asyncio.get_running_loop()
        self.loop_thread = threading.get_ident()
        self.abort_timer: asyncio.TimerHandle | None = None
        options: dict[str, Any] = dict(config.stream_options)
        for key, value in (
            ("reasoning", config.reasoning),
            ("thinking_budgets", config.thinking_budgets),
            ("session_id", config.session_id),
        ):
            if value is not None:
                options[key] = value
        options["signal"] = self.signal
        self.system_prompt = context.system_prompt
        self.output: OutputRun | None = None
        if config.output_type is not None:
            self.output = output = OutputRun(
                config.model,
                config.output_type,
                config.output_mode,
                config.output_retries,
                config.output_validators,
            )
            self.system_prompt, options = output.request(config.model, self.system_prompt, options)
            if output.tool is not None:
                self.fixed_tools = [*self.fixed_tools, output.tool]
                self.context.tools = self.fixed_tools
        self.options = options
        self.guard = UsageGuard(config.usage_limits, config.usage)
        self.tools = ToolBatch(self)
        observer = resolve_run_observer(config.instrument)
        self.observation: RunObservation | None = None
        if observer is not None:
            info = RunInfo(config.name, config, self.context, self.prompts or ())
            self.observation = observation = observer.start_run(info)
            self.sink = observation.sink(self.sink)
            self.stream_fn = observation.stream_fn(self.stream_fn)

    # ----------------------------------------------------------------------- emitting

    async def emit(self, event: AgentEvent) -> None:
        """Deliver ``event`` to the sink; raises :class:`SinkError` if the sink fails."""
        if event.type == "message_start":
            self.open_message = event.message
        elif event.type == "message_end":
            self.open_message = None
        try:
            result = self.sink(event)
            if result is not None and inspect.isawaitable(result):
                await result
        except Exception as exc:
            raise SinkError(describe_error(exc)) from exc

    def defer(self, exc: BaseException) -> None:
        """Remember the first failure that must end the run after the current turn."""
        if self.deferred is None:
            self.deferred = exc

    def agent_end(self) -> AgentEndEvent:
        output = self.output
        done = output is not None and output.done
        value = output.value if output is not None and done else None
        return AgentEndEvent(self.new_messages, self.guard.usage.copy(), value, has_output=done)

    async def report_fallbacks(self, failed: Sequence[FailedAttempt], reported: int) -> int:
        # Failed attempts of a fallback stream: counted, and announced before the answer.
        for attempt in failed[reported:]:
            self.guard.add_failed_attempt(attempt.message)
            await self.emit(FallbackEvent(attempt))
        return len(failed)

    # ----------------------------------------------------------------------- the run

    async def run(self) -> list[AgentMessage]:
        """Drive the run to ``agent_end``; returns the messages it added."""
        if self.observation is not None:
            return await self.observation.run(self._run)
        return await self._run()

    async def _run(self) -> list[AgentMessage]:
        remove_abort = self.signal.add_callback(self._on_abort_threadsafe)
        # Current while the run runs: the tasks of its tools (sub-agents) see it.
        guard_token = current_guard.set(self.guard)
        approver_token = current_approver.set(self.config.approver)
        try:
            try:
                await self.emit(AgentStartEvent())
                await self.emit(TurnStartEvent())
                self.in_turn = True
                for message in self.prompts or ():
                    await self.emit(MessageStartEvent(message))
                    await self.emit(MessageEndEvent(message))
                await self.run_loop()
            except Exception as exc:
                await self.fail(exc)
        finally:
            current_approver.reset(approver_token)
            current_guard.reset(guard_token)
            remove_abort()
            if self.abort_timer is not None:
                self.abort_timer.cancel()
            self.tools.cancel()
        return self.new_messages

    async def poll(self, callback: GetMessages | None) -> list[AgentMessage]:
        """The messages ``callback`` returns now (none without a callback)."""
        if callback is None:
            return []
        messages = await invoke(callback)
        return list(messages) if messages else []

    async def run_loop(self) -> None:
        config = self.config
        if self.output is not None and any(
            t.name == OUTPUT_TOOL_NAME
            for t in self.context.tools or ()
            if t is not self.output.tool
        ):
            raise ValueError(
                f"a tool is named {OUTPUT_TOOL_NAME!r}, the name of the output tool of a run "
                "with an output_type: rename the tool"
            )
        first_turn = True
        resumption = config.resume_from
        # A resumed run finishes its paused calls first: steering comes after their results.
        pending = [] if resumption else await self.poll(config.get_steering_messages)
        while True:
            has_more_tool_calls = True
            steering_after_tools: list[AgentMessage] | None = None
            while has_more_tool_calls or pending:
                if first_turn:
                    first_turn = False
                else:
                    await self.emit(TurnStartEvent())
                    self.in_turn = True
                for message in pending:
                    await self.emit(MessageStartEvent(message))
                    await self.emit(MessageEndEvent(message))
                    self.context.messages.append(message)
                    self.new_messages.append(message)
                pending = []

                earlier: list[ToolResultMessage] = []
                if resumption is not None:
                    message, tool_calls = resumption.message, resumption.calls
                    earlier, resumption = resumption.earlier_results, None
                    if config.tool_sources:
                        # The paused calls may be a source's tools (an MCP server's).
                        self.context.tools = await gather_tools(
                            self.fixed_tools, config.tool_sources
                        )
                else:
                    message = await self.stream_assistant_response()
                    self.new_messages.append(message)
                    if message.stop_reason == "error" or message.stop_reason == "aborted":
                        await self.end_turn(message, [])
                        await self.emit(self.agent_end())
                        return
                    tool_calls = message.tool_calls
                has_more_tool_calls = bool(tool_calls)
                results: list[ToolResultMessage] = []
                if has_more_tool_calls:
                    results, steering_after_tools = await self.tools.execute(message, tool_calls)
                    self.context.messages.extend(results)
                    self.new_messages.extend(results)
                results = [*earlier, *results]
                await self.end_turn(message, results)
                if self.deferred is not None:
                    raise self.deferred
                if self.tools.paused:
                    await self.emit(AgentPausedEvent(self.tools.paused, steering_after_tools))
                    await self.emit(self.agent_end())
                    return
                if self.signal.aborted:
                    await self.emit(self.agent_end())
                    return
                retry: list[AgentMessage] = []
                output = self.output
                if output is not None:
                    retry = await output.after_turn(message, results)
                    if output.done:
                        if not steering_after_tools:
                            await self.end_with_output(output)
                            return
                        output.done = False  # redirected after the output: a new one is due
                if steering_after_tools:
                    pending = steering_after_tools
                    steering_after_tools = None
                else:
                    pending = await self.poll(config.get_steering_messages)
                pending = [*retry, *pending]
            follow_ups = await self.poll(config.get_follow_up_messages)
            if follow_ups:
                pending = follow_ups
                continue
            break
        await self.emit(self.agent_end())

    async def end_with_output(self, output: OutputRun) -> None:
        changed, value = output.settle()
        if changed:
            await self.emit(OutputUpdateEvent(value))
        await self.emit(self.agent_end())

    async def end_turn(self, message: AssistantMessage, results: list[ToolResultMessage]) -> None:
        self.in_turn = False
        await self.emit(TurnEndEvent(message, results))

    async def fail(self, exc: BaseException) -> None:
        """End the run after an unexpected failure, with a well-formed event sequence."""
        cause = exc.__cause__ if isinstance(exc, SinkError) else exc
        model = self.config.model
        message = AssistantMessage(
            content=[],
            api=model.api,
            provider=model.provider,
            model=model.id,
            stop_reason="aborted" if self.signal.aborted else "error",
            error_message=describe_error(cause if cause is not None else exc),
        )
        self.context.messages.append(message)
        self.new_messages.append(message)
        sink_failure: BaseException | None = None
        events: list[AgentEvent] = []
        if self.open_message is not None:
            # The sink failed between a message's start and end: close it first.
            events.append(MessageEndEvent(self.open_message))
        if not self.in_turn:
            events.append(TurnStartEvent())
        events += [
            MessageStartEvent(message),
            MessageEndEvent(message),
            TurnEndEvent(message, []),
            self.agent_end(),
        ]
        self.in_turn = False
        for event in events:
            try:
                await self.emit(event)
            except SinkError as err:
                sink_failure = sink_failure or err.__cause__ or err
        if sink_failure is not None:
            # The sink keeps failing: there is nobody left to tell but the caller.
            raise sink_failure

    # ----------------------------------------------------------------------- one LLM call

    async def stream_assistant_response(self) -> AssistantMessage:
        config = self.config
        messages = self.context.messages
        partial: AssistantMessage | None = None
        final: AssistantMessage | None = None
        try:
            if self.signal.aborted:
                raise AbortedError(self.signal.reason or ABORTED_MESSAGE)
            self.guard.before_request()
            if config.tool_sources:
                # Asked every turn: a source's tools may have changed since the last one.
                self.context.tools = await gather_tools(self.fixed_tools, config.tool_sources)
            view: Sequence[AgentMessage] = messages
            if config.transform_context is not None:
                view = await invoke(config.transform_context, list(messages), self.signal)
            llm_messages = await invoke(config.convert_to_llm, list(view))
            llm_context = Context(
                messages=list(llm_messages),
                system_prompt=self.system_prompt or None,
                tools=list(self.context.tools) if self.context.tools else None,
            )
            api_key = None
            if config.get_api_key is not None:
                api_key = await invoke(config.get_api_key, config.model.provider)
            options = self.options
            api_key = api_key or config.api_key
            if api_key:
                options = {**options, "api_key": api_key}
            self.guard.count_request()
            made = self.stream_fn(config.model, llm_context, **options)
            # A stream is itself awaitable (to its result): only await what is not a stream.
            response = cast(
                AssistantMessageEventStream,
                made if hasattr(made, "__aiter__") else await cast(Any, made),
            )
            failed = response.failed_attempts if isinstance(response, FallbackEventStream) else ()
            reported = 0
            iterator = response.__aiter__()
            emit = self.emit
            output = self.output
            if output is not None:
                output.restart()
            try:
                async for event in iterator:
                    kind = event.type
                    if kind == "done":
                        final = cast(DoneEvent, event).message
                        continue
                    if kind == "error":
                        final = cast(ErrorEvent, event).error
                        continue
                    if final is not None:
                        continue
                    event_partial = cast(Any, event).partial
                    if partial is None:
                        reported = await self.report_fallbacks(failed, reported)
                        partial = event_partial
                        messages.append(partial)
                        await emit(MessageStartEvent(partial))
                        if kind == "start":
                            continue
                    elif event_partial is not partial:
                        # A new partial (a fallback restarting the response) replaces the old.
                        reported = await self.report_fallbacks(failed, reported)
                        partial = event_partial
                        messages[-1] = partial
                        if output is not None:
                            output.restart()
                    await emit(MessageUpdateEvent(partial, event))
                    if output is not None:
                        changed, value = output.partial(event)
                        if changed:
                            await emit(OutputUpdateEvent(value))
            finally:
                aclose = getattr(iterator, "aclose", None)
                if aclose is not None:
                    await aclose()
            await self.report_fallbacks(failed, reported)
            if final is None:
                raise ProviderError(NO_TERMINAL_MESSAGE)
        except Exception as exc:
            # A failing sink (a listener) ends the message the same way a failing provider does.
            cause = exc.__cause__ if isinstance(exc, SinkError) and exc.__cause__ else exc
            aborted = self.signal.aborted or isinstance(cause, AbortedError)
            reason: StopReason = "aborted" if aborted else "error"
            if partial is None:
                final = self._empty_message()
                final.stop_reason = reason
                final.error_message = describe_error(cause)
            else:
                # A copy: the provider's task may still be winding down and writing to its own.
                final = dataclasses.replace(
                    partial,
                    content=list(partial.content),
                    stop_reason=reason,
                    error_message=describe_error(cause),
                )
        self.guard.usage.add_message(final)
        if partial is not None:
            messages[-1] = final
        else:
            messages.append(final)
            await self.emit(MessageStartEvent(final))
        await self.emit(MessageEndEvent(final))
        return final

    def _empty_message(self) -> AssistantMessage:
        model = self.config.model
        return AssistantMessage(content=[], api=model.api, provider=model.provider, model=model.id)

    # ----------------------------------------------------------------------- abort

    def _on_abort_threadsafe(self) -> None:
        if threading.get_ident() == self.loop_thread:
            self._on_abort()
        elif not self.loop.is_closed():
            self.loop.call_soon_threadsafe(self._on_abort)

    def _on_abort(self) -> None:
        if self.abort_timer is None:
            self.abort_timer = self.loop.call_later(
                max(0.0, self.config.tool_abort_grace), self.tools.cancel
            )
