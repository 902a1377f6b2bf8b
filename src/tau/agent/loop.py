"""The agent run: from the prompts to ``agent_end``, as a stream of :class:`AgentEvent`.

The double loop of the seed design. The inner loop runs turns (one LLM response plus its tool
calls) while the model calls tools or steering messages are pending; when it would stop, the
outer loop asks for follow-up messages and, if there are any, runs more turns. Every LLM call
goes through ``transform_context`` and then ``convert_to_llm``, after the config's
``tool_sources`` (MCP servers) were asked for their current tools.

Entry points: :func:`agent_loop` / :func:`agent_loop_continue` return an
:class:`~tau.ai.EventStream` (observational: the run never waits for the consumer), while
:func:`run_agent_loop` / :func:`run_agent_loop_continue` await an ``emit`` sink for every event
(a barrier: the run goes on only when the sink has processed the event).

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
* A synchronous tool runs in a worker thread (:func:`~tau.agent.tools.run_tool`), so abort and the grace
  period apply to it like to any other.
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
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import logging
import threading
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar, cast

from tau.agent.events import (
    AgentEndEvent,
    AgentEvent,
    AgentStartEvent,
    FallbackEvent,
    MessageEndEvent,
    MessageStartEvent,
    MessageUpdateEvent,
    ToolExecutionEndEvent,
    ToolExecutionStartEvent,
    ToolExecutionUpdateEvent,
    TurnEndEvent,
    TurnStartEvent,
)
from tau.agent.messages import AgentMessage, message_role
from tau.agent.observe import RunInfo, RunObservation, resolve_run_observer
from tau.agent.tool_sources import gather_tools
from tau.agent.tools import (
    AgentTool,
    AgentToolResult,
    as_tool_result,
    error_tool_result,
    run_tool,
)
from tau.agent.types import (
    AfterToolCallContext,
    AfterToolCallResult,
    AgentContext,
    AgentEventSink,
    AgentLoopConfig,
    BeforeToolCallContext,
    BeforeToolCallResult,
    GetMessages,
    StreamFn,
)
from tau.agent.usage import UsageGuard
from tau.ai import FailedAttempt, FallbackEventStream
from tau.ai.abort import AbortController, AbortedError, AbortSignal
from tau.ai.builder import ABORTED_MESSAGE, ProviderError, describe_error
from tau.ai.event_stream import AssistantMessageEventStream, EventStream
from tau.ai.events import DoneEvent, ErrorEvent
from tau.ai.types import AssistantMessage, Context, StopReason, ToolCall, ToolResultMessage

__all__ = [
    "ABORTED_TOOL_MESSAGE",
    "BLOCKED_MESSAGE",
    "SKIPPED_MESSAGE",
    "AgentError",
    "agent_loop",
    "agent_loop_continue",
    "run_agent_loop",
    "run_agent_loop_continue",
]

SKIPPED_MESSAGE = "Skipped due to queued user message."
BLOCKED_MESSAGE = "Tool execution was blocked"
ABORTED_TOOL_MESSAGE = "Operation aborted"
NO_TERMINAL_MESSAGE = "the stream function's stream ended without a done or error event"

_log = logging.getLogger("tau.agent")
T = TypeVar("T")


class AgentError(RuntimeError):
    """A call that the agent's current state does not allow (continue from nothing, busy…)."""


class _SinkError(Exception):
    """The event sink raised; carries the sink's exception as ``__cause__``."""


async def _call(fn: Callable[..., Any], *args: Any) -> Any:
    result = fn(*args)
    if inspect.isawaitable(result):
        result = await result
    return result


def _describe_failure(exc: BaseException) -> str:
    # A BaseException that is not an Exception is named, so "3" reads as "SystemExit: 3".
    if isinstance(exc, Exception):
        return describe_error(exc)
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _check_hook_result(hook: str, value: object, expected: type) -> None:
    if value is not None and not isinstance(value, expected):
        raise TypeError(
            f"{hook} must return {expected.__name__} or None, not {type(value).__name__}"
        )


def ended_in_failure(message: AgentMessage) -> bool:
    """Whether ``message`` is an assistant response that ended in ``error`` or ``aborted``."""
    return isinstance(message, AssistantMessage) and message.stop_reason in ("error", "aborted")


def _check_continue(context: AgentContext) -> None:
    if not context.messages:
        raise AgentError("Cannot continue: no messages in context")
    last = context.messages[-1]
    if message_role(last) == "assistant" and not ended_in_failure(last):
        raise AgentError("Cannot continue from message role: assistant")


class _Prepared:
    """A tool call that passed lookup, validation and ``before_tool_call``."""

    __slots__ = ("args", "call", "finished", "task", "tool", "updates")

    def __init__(self, call: ToolCall, tool: AgentTool, args: Any) -> None:
        self.call = call
        self.tool = tool
        self.args = args
        self.finished = False
        self.updates: asyncio.Task[None] | None = None
        self.task: asyncio.Task[tuple[AgentToolResult, bool]] | None = None


class _Outcome:
    """A tool call decided without running it (not found, invalid, blocked, skipped…)."""

    __slots__ = ("call", "result")

    def __init__(self, call: ToolCall, message: str) -> None:
        self.call = call
        self.result = error_tool_result(message)


_Slot = _Prepared | _Outcome


class _Run:
    """One run's state; :meth:`run` drives it from ``agent_start`` to ``agent_end``."""

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
        self.stream_fn: StreamFn = stream_fn or config.stream_fn or _default_stream_fn
        self.prompts = list(prompts) if prompts is not None else None
        self.context = AgentContext(
            context.system_prompt, [*context.messages, *(self.prompts or ())], context.tools
        )
        self.fixed_tools = context.tools or []
        self.new_messages: list[AgentMessage] = list(self.prompts or ())
        self.in_turn = False
        self.open_message: AgentMessage | None = None
        self.deferred: BaseException | None = None
        self.running: set[asyncio.Task[Any]] = set()
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
        self.options = options
        self.guard = UsageGuard(config.usage_limits, config.usage)
        observer = resolve_run_observer(config.instrument)
        self.observation: RunObservation | None = None
        if observer is not None:
            info = RunInfo(config.name, config, self.context, self.prompts or ())
            self.observation = observation = observer.start_run(info)
            self.sink = observation.sink(self.sink)
            self.stream_fn = observation.stream_fn(self.stream_fn)

    # ----------------------------------------------------------------------- emitting

    async def emit(self, event: AgentEvent) -> None:
        kind = event.type
        if kind == "message_start":
            self.open_message = event.message  # type: ignore[union-attr]
        elif kind == "message_end":
            self.open_message = None
        try:
            result = self.sink(event)
            if result is not None and inspect.isawaitable(result):
                await result
        except Exception as exc:
            raise _SinkError(describe_error(exc)) from exc

    async def emit_deferring(self, event: AgentEvent) -> None:
        # Inside a tool batch a failing sink must not leave calls without results: remember
        # the failure, finish the batch, and end the run after its turn_end.
        try:
            await self.emit(event)
        except _SinkError as exc:
            self.defer(exc)

    def defer(self, exc: BaseException) -> None:
        if self.deferred is None:
            self.deferred = exc

    def agent_end(self) -> AgentEndEvent:
        return AgentEndEvent(self.new_messages, self.guard.usage.copy())

    async def report_fallbacks(self, failed: Sequence[FailedAttempt], reported: int) -> int:
        # Failed attempts of a fallback stream: counted, and announced before the answer.
        for attempt in failed[reported:]:
            self.guard.add_failed_attempt(attempt.message)
            await self.emit(FallbackEvent(attempt))
        return len(failed)

    # ----------------------------------------------------------------------- the run

    async def run(self) -> list[AgentMessage]:
        if self.observation is not None:
            return await self.observation.run(self._run)
        return await self._run()

    async def _run(self) -> list[AgentMessage]:
        remove_abort = self.signal.add_callback(self._on_abort_threadsafe)
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
            remove_abort()
            if self.abort_timer is not None:
                self.abort_timer.cancel()
            for task in self.running:
                task.cancel()
        return self.new_messages

    async def poll(self, callback: GetMessages | None) -> list[AgentMessage]:
        if callback is None:
            return []
        messages = await _call(callback)
        return list(messages) if messages else []

    async def run_loop(self) -> None:
        config = self.config
        first_turn = True
        pending = await self.poll(config.get_steering_messages)
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
                    results, steering_after_tools = await self.execute_tool_calls(
                        message, tool_calls
                    )
                    self.context.messages.extend(results)
                    self.new_messages.extend(results)
                await self.end_turn(message, results)
                if self.deferred is not None:
                    raise self.deferred
                if self.signal.aborted:
                    await self.emit(self.agent_end())
                    return
                if steering_after_tools:
                    pending = steering_after_tools
                    steering_after_tools = None
                else:
                    pending = await self.poll(config.get_steering_messages)
            follow_ups = await self.poll(config.get_follow_up_messages)
            if follow_ups:
                pending = follow_ups
                continue
            break
        await self.emit(self.agent_end())

    async def end_turn(self, message: AssistantMessage, results: list[ToolResultMessage]) -> None:
        self.in_turn = False
        await self.emit(TurnEndEvent(message, results))

    async def fail(self, exc: BaseException) -> None:
        """End the run after an unexpected failure, with a well-formed event sequence."""
        cause = exc.__cause__ if isinstance(exc, _SinkError) else exc
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
            except _SinkError as err:
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
                view = await _call(config.transform_context, list(messages), self.signal)
            llm_messages = await _call(config.convert_to_llm, list(view))
            llm_context = Context(
                messages=list(llm_messages),
                system_prompt=self.context.system_prompt or None,
                tools=list(self.context.tools) if self.context.tools else None,
            )
            api_key = None
            if config.get_api_key is not None:
                api_key = await _call(config.get_api_key, config.model.provider)
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
                    await emit(MessageUpdateEvent(partial, event))
            finally:
                aclose = getattr(iterator, "aclose", None)
                if aclose is not None:
                    await aclose()
            await self.report_fallbacks(failed, reported)
            if final is None:
                raise ProviderError(NO_TERMINAL_MESSAGE)
        except Exception as exc:
            # A failing sink (a listener) ends the message the same way a failing provider does.
            cause = exc.__cause__ if isinstance(exc, _SinkError) and exc.__cause__ else exc
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

    # ----------------------------------------------------------------------- tools

    async def execute_tool_calls(
        self, message: AssistantMessage, calls: list[ToolCall]
    ) -> tuple[list[ToolResultMessage], list[AgentMessage] | None]:
        self.guard.begin_tool_batch(len(calls))
        try:
            if self.config.tool_execution == "sequential":
                return await self.run_sequential(message, calls)
            return await self.run_parallel(message, calls)
        finally:
            for task in self.running:
                task.cancel()

    async def poll_steering_in_batch(self) -> list[AgentMessage]:
        try:
            return await self.poll(self.config.get_steering_messages)
        except Exception as exc:
            self.defer(exc)
            return []

    async def run_sequential(
        self, message: AssistantMessage, calls: list[ToolCall]
    ) -> tuple[list[ToolResultMessage], list[AgentMessage] | None]:
        results: list[ToolResultMessage] = []
        steering: list[AgentMessage] | None = None
        for index, call in enumerate(calls):
            await self.emit_deferring(ToolExecutionStartEvent(call.id, call.name, call.arguments))
            slot = await self.prepare(message, call)
            if isinstance(slot, _Prepared):
                self.start(slot)
            results.append(await self.finish(message, slot))
            if self.config.get_steering_messages is not None:
                steering = await self.poll_steering_in_batch()
                if steering:
                    for later in calls[index + 1 :]:
                        await self.emit_deferring(
                            ToolExecutionStartEvent(later.id, later.name, later.arguments)
                        )
                        results.append(await self.finish(message, _Outcome(later, SKIPPED_MESSAGE)))
                    break
        return results, steering or None

    async def run_parallel(
        self, message: AssistantMessage, calls: list[ToolCall]
    ) -> tuple[list[ToolResultMessage], list[AgentMessage] | None]:
        slots: list[_Slot] = []
        steering: list[AgentMessage] | None = None
        polls = self.config.get_steering_messages is not None
        for index, call in enumerate(calls):
            await self.emit_deferring(ToolExecutionStartEvent(call.id, call.name, call.arguments))
            slots.append(await self.prepare(message, call))
            if polls:
                steering = await self.poll_steering_in_batch()
                if steering:
                    # Nothing has run yet: skip every call, announcing the later ones.
                    slots = [_Outcome(slot.call, SKIPPED_MESSAGE) for slot in slots]
                    for later in calls[index + 1 :]:
                        await self.emit_deferring(
                            ToolExecutionStartEvent(later.id, later.name, later.arguments)
                        )
                        slots.append(_Outcome(later, SKIPPED_MESSAGE))
                    break
        for slot in slots:
            if isinstance(slot, _Prepared):
                self.start(slot)
        results = [await self.finish(message, slot) for slot in slots]
        if polls and not steering:
            steering = await self.poll_steering_in_batch()
        return results, steering or None

    async def prepare(self, message: AssistantMessage, call: ToolCall) -> _Slot:
        if self.signal.aborted:
            return _Outcome(call, ABORTED_TOOL_MESSAGE)
        refusal = self.guard.admit_tool_call()
        if refusal is not None:
            return _Outcome(call, refusal)
        tool = next((t for t in self.context.tools or () if t.name == call.name), None)
        if tool is None:
            return _Outcome(call, f"Tool {call.name} not found")
        try:
            raw = call.arguments
            arguments = tool.prepare_arguments(raw)
            if inspect.isawaitable(arguments):
                arguments = await arguments
            target = call
            if arguments is not raw:
                if not isinstance(arguments, dict):
                    raise TypeError(
                        f"prepare_arguments of tool {tool.name!r} must return a dict, "
                        f"not {type(arguments).__name__}"
                    )
                target = ToolCall(call.id, call.name, arguments, call.thought_signature)
            args = _validate(tool, target)
            hook = self.config.before_tool_call
            if hook is not None:
                decision = await _call(
                    hook, BeforeToolCallContext(message, call, args, self.context), self.signal
                )
                _check_hook_result("before_tool_call", decision, BeforeToolCallResult)
                if decision is not None and decision.block:
                    return _Outcome(call, decision.reason or BLOCKED_MESSAGE)
        except asyncio.CancelledError:
            raise
        except BaseException as exc:
            return _Outcome(call, _describe_failure(exc))
        return _Prepared(call, tool, args)

    def start(self, prepared: _Prepared) -> None:
        if self.signal.aborted:
            return
        task = self.loop.create_task(self.execute(prepared))
        prepared.task = task
        self.running.add(task)
        task.add_done_callback(self.running.discard)

    async def execute(self, prepared: _Prepared) -> tuple[AgentToolResult, bool]:
        call = prepared.call

        def on_update(partial: object) -> None:
            if threading.get_ident() != self.loop_thread:
                self.loop.call_soon_threadsafe(on_update, partial)
                return
            if prepared.finished:
                return
            event = ToolExecutionUpdateEvent(
                call.id, call.name, call.arguments, as_tool_result(partial)
            )
            prepared.updates = self.loop.create_task(self._chain(prepared.updates, event))

        try:
            work: Awaitable[Any] = run_tool(
                prepared.tool, call.id, prepared.args, self.signal, on_update
            )
            if self.observation is not None:
                work = self.observation.execute_tool(call, work)
            value = await work
            return as_tool_result(value), False
        except asyncio.CancelledError:
            raise
        except BaseException as exc:
            return error_tool_result(_describe_failure(exc)), True
        finally:
            prepared.finished = True

    async def _chain(self, previous: asyncio.Task[None] | None, event: AgentEvent) -> None:
        # Updates of one call are delivered in order, each after the one before.
        if previous is not None:
            await asyncio.wait([previous])
        await self.emit_deferring(event)

    async def finish(self, message: AssistantMessage, slot: _Slot) -> ToolResultMessage:
        call = slot.call
        if isinstance(slot, _Outcome):
            return await self._emit_result(call, slot.result, True)
        task = slot.task
        if task is None:
            result, is_error = error_tool_result(ABORTED_TOOL_MESSAGE), True
        else:
            if not task.done():
                await asyncio.wait([task])
            if task.cancelled():
                slot.finished = True
                result, is_error = error_tool_result(ABORTED_TOOL_MESSAGE), True
            else:
                result, is_error = task.result()
        if slot.updates is not None and not slot.updates.done():
            await asyncio.wait([slot.updates])
        hook = self.config.after_tool_call
        if hook is not None:
            try:
                override = await _call(
                    hook,
                    AfterToolCallContext(message, call, slot.args, result, is_error, self.context),
                    self.signal,
                )
                _check_hook_result("after_tool_call", override, AfterToolCallResult)
            except asyncio.CancelledError:
                raise
            except BaseException as exc:
                result, is_error = error_tool_result(_describe_failure(exc)), True
            else:
                if override is not None:
                    result = AgentToolResult(
                        override.content if override.content is not None else result.content,
                        override.details if override.details is not None else result.details,
                    )
                    if override.is_error is not None:
                        is_error = override.is_error
        return await self._emit_result(call, result, is_error)

    async def _emit_result(
        self, call: ToolCall, result: AgentToolResult, is_error: bool
    ) -> ToolResultMessage:
        await self.emit_deferring(ToolExecutionEndEvent(call.id, call.name, result, is_error))
        message = ToolResultMessage(
            tool_call_id=call.id,
            tool_name=call.name,
            content=result.content,
            is_error=is_error,
            details=result.details,
        )
        await self.emit_deferring(MessageStartEvent(message))
        await self.emit_deferring(MessageEndEvent(message))
        return message

    # ----------------------------------------------------------------------- abort

    def _on_abort_threadsafe(self) -> None:
        if threading.get_ident() == self.loop_thread:
            self._on_abort()
        elif not self.loop.is_closed():
            self.loop.call_soon_threadsafe(self._on_abort)

    def _on_abort(self) -> None:
        if self.abort_timer is None:
            self.abort_timer = self.loop.call_later(
                max(0.0, self.config.tool_abort_grace), self._cancel_tools
            )

    def _cancel_tools(self) -> None:
        for task in list(self.running):
            task.cancel()


# --------------------------------------------------------------------------- entry points


def _default_stream_fn(model: Any, context: Context, **options: Any) -> Any:
    from tau.ai.entry import stream_simple

    return stream_simple(model, context, **options)


def _validate(tool: AgentTool, call: ToolCall) -> Any:
    # Imported on first use: jsonschema-rs is not needed to import tau.agent.
    from tau.ai.utils.validation import validate_tool_arguments

    return validate_tool_arguments(tool, call)


def _is_agent_end(event: AgentEvent) -> bool:
    return event.type == "agent_end"


def _agent_end_messages(event: AgentEvent) -> list[AgentMessage]:
    assert isinstance(event, AgentEndEvent)
    return event.messages


def _running_loop(name: str) -> asyncio.AbstractEventLoop:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        raise RuntimeError(
            f"{name}() needs a running asyncio event loop (call it from async code)"
        ) from None


_tasks: set[asyncio.Task[Any]] = set()


def _cancel(task: asyncio.Task[Any]) -> None:
    task.cancel()


def _launch(
    name: str, make_run: Callable[[AgentEventSink], _Run]
) -> EventStream[AgentEvent, list[AgentMessage]]:
    loop = _running_loop(name)
    stream: EventStream[AgentEvent, list[AgentMessage]] = EventStream(
        _is_agent_end, _agent_end_messages
    )
    run = make_run(stream.push)

    async def drive() -> None:
        try:
            await run.run()
        except Exception:
            # Only reachable through a bug: the sink (push) cannot fail and run() ends every
            # other failure with agent_end. Never leave the consumer waiting.
            _log.exception("agent run failed")
        finally:
            stream.end(run.new_messages)

    task = loop.create_task(drive())
    _tasks.add(task)
    task.add_done_callback(_tasks.discard)
    stream.set_on_close(lambda: _cancel(task))
    return stream


def agent_loop(
    prompts: Sequence[AgentMessage],
    context: AgentContext,
    config: AgentLoopConfig,
    signal: AbortSignal | None = None,
    stream_fn: StreamFn | None = None,
) -> EventStream[AgentEvent, list[AgentMessage]]:
    """Start a run with ``prompts`` appended to ``context``; returns its event stream at once.

    The stream's result is the list of messages the run added (prompts included). Leaving the
    iteration early cancels the run. ``context`` is never modified.
    """
    return _launch(
        "agent_loop", lambda sink: _Run(context, prompts, config, sink, signal, stream_fn)
    )


def agent_loop_continue(
    context: AgentContext,
    config: AgentLoopConfig,
    signal: AbortSignal | None = None,
    stream_fn: StreamFn | None = None,
) -> EventStream[AgentEvent, list[AgentMessage]]:
    """Start a run from ``context`` as it is (a retry, or after a tool result).

    Raises :class:`AgentError` at once if the context is empty or ends with an assistant
    message, unless that message ended in ``error`` or ``aborted`` (a retry: providers never
    see failed responses, so the model answers what came before it, e.g. after a usage limit
    was raised). Application messages at the end are allowed: ``convert_to_llm`` must turn
    them into something the model can answer.
    """
    _check_continue(context)
    return _launch(
        "agent_loop_continue", lambda sink: _Run(context, None, config, sink, signal, stream_fn)
    )


async def run_agent_loop(
    prompts: Sequence[AgentMessage],
    context: AgentContext,
    config: AgentLoopConfig,
    emit: AgentEventSink,
    signal: AbortSignal | None = None,
    stream_fn: StreamFn | None = None,
) -> list[AgentMessage]:
    """Run to the end, awaiting ``emit(event)`` for every event; returns the added messages.

    Failures end the run with an error message and ``agent_end`` rather than raising; only a
    sink that still raises while the run reports a failure makes this raise (its exception).
    """
    return await _Run(context, prompts, config, emit, signal, stream_fn).run()


async def run_agent_loop_continue(
    context: AgentContext,
    config: AgentLoopConfig,
    emit: AgentEventSink,
    signal: AbortSignal | None = None,
    stream_fn: StreamFn | None = None,
) -> list[AgentMessage]:
    """:func:`agent_loop_continue` with an awaited sink, like :func:`run_agent_loop`."""
    _check_continue(context)
    return await _Run(context, None, config, emit, signal, stream_fn).run()
