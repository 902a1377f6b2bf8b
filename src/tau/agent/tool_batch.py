"""A turn's tool calls: looked up, validated, run (one after another or in parallel), finished.

:class:`ToolBatch` runs the tool calls of a run (:class:`tau.agent.run.AgentRun`): the run holds
one and calls :meth:`ToolBatch.execute` with each assistant message's calls; the batch holds
the run (a :class:`ToolRun`: its config, signal, context, usage guard and event sink).

:meth:`ToolBatch.decide` is the one place where a call is decided (found, repaired, validated,
admitted, let through by ``before_tool_call``) and :meth:`ToolBatch.run_call` the one place
where a decided call runs; everything else orders events and results. Every call gets
exactly one ``tool_execution_start``, any number of ``tool_execution_update`` and one
``tool_execution_end`` (then its tool-result message), in the assistant's call order, whatever
happened to it: unknown tool, invalid arguments, blocked by ``before_tool_call``, skipped for a
steering message, aborted, or failed while running. Nothing a tool or hook raises escapes the
batch, and a failing sink is remembered (:meth:`ToolRun.defer`) until every call has its
result.
"""

from __future__ import annotations

import asyncio
import inspect
import threading
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from tau.agent.approval import PendingCall
from tau.agent.approval_gate import ApprovalGate
from tau.agent.events import (
    AgentEvent,
    MessageEndEvent,
    MessageStartEvent,
    ToolExecutionEndEvent,
    ToolExecutionStartEvent,
    ToolExecutionUpdateEvent,
)
from tau.agent.messages import AgentMessage
from tau.agent.observe import RunObservation
from tau.agent.output import OutputTool
from tau.agent.run_state import NestedPause, PausedCall, ToolPaused
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
    AgentLoopConfig,
    BeforeToolCallContext,
    BeforeToolCallResult,
    GetMessages,
)
from tau.agent.usage import UsageGuard
from tau.ai import AbortSignal, AssistantMessage, ToolCall, ToolResultMessage
from tau.ai.adapters import describe_error

__all__ = [
    "ABORTED_TOOL_MESSAGE",
    "BLOCKED_MESSAGE",
    "SKIPPED_MESSAGE",
    "SinkError",
    "ToolBatch",
    "ToolRun",
    "invoke",
]

SKIPPED_MESSAGE = "Skipped due to queued user message."
BLOCKED_MESSAGE = "Tool execution was blocked"
ABORTED_TOOL_MESSAGE = "Operation aborted"


class SinkError(Exception):
    """The event sink raised; carries the sink's exception as ``__cause__``."""


async def invoke(fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)``, awaited if it returned an awaitable (hooks may be sync or async)."""
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


_validate_arguments: Callable[[AgentTool, ToolCall], Any] | None = None


def _validate(tool: AgentTool, call: ToolCall) -> Any:
    global _validate_arguments
    if _validate_arguments is None:
        # Imported on first use: jsonschema-rs is not needed to import tau.agent.
        from tau.ai import validate_tool_arguments

        _validate_arguments = validate_tool_arguments
    return _validate_arguments(tool, call)


class _Prepared:
    """A tool call that passed lookup, validation and ``before_tool_call``."""

    __slots__ = ("args", "call", "finished", "paused", "task", "tool", "updates")

    def __init__(self, call: ToolCall, tool: AgentTool, args: Any) -> None:
        self.call = call
        self.tool = tool
        self.args = args
        self.finished = False
        self.paused: NestedPause | None = None
        self.updates: asyncio.Task[None] | None = None
        self.task: asyncio.Task[tuple[AgentToolResult, bool]] | None = None


class _Outcome:
    """A tool call decided without running it (not found, invalid, blocked, skipped, denied,
    or given its result by the caller)."""

    __slots__ = ("call", "is_error", "result")

    def __init__(
        self,
        call: ToolCall,
        message: str,
        result: AgentToolResult | None = None,
        is_error: bool = True,
    ) -> None:
        self.call = call
        self.result = result if result is not None else error_tool_result(message)
        self.is_error = is_error


class _Pending:
    """A tool call left waiting for a decision: the run pauses after the batch."""

    __slots__ = ("call", "entry")

    def __init__(self, call: ToolCall, entry: PendingCall) -> None:
        self.call = call
        self.entry = entry


_Slot = _Prepared | _Outcome | _Pending


class ToolRun(Protocol):
    """What a :class:`ToolBatch` uses of its run (:class:`tau.agent.run.AgentRun` is one)."""

    config: AgentLoopConfig
    signal: AbortSignal
    context: AgentContext
    guard: UsageGuard
    loop: asyncio.AbstractEventLoop
    loop_thread: int
    observation: RunObservation | None

    async def emit(self, event: AgentEvent) -> None:
        """Deliver ``event`` to the sink; raises :class:`SinkError` if the sink fails."""
        ...

    async def poll(self, callback: GetMessages | None) -> list[AgentMessage]:
        """The messages ``callback`` returns now (none without a callback)."""
        ...

    def defer(self, exc: BaseException) -> None:
        """Remember a failure that ends the run once the batch has given every call a result."""
        ...


class ToolBatch:
    """Runs the tool calls of one run, a turn at a time (see the module docstring)."""

    __slots__ = ("gate", "paused", "run", "running")

    def __init__(self, run: ToolRun) -> None:
        self.run = run
        self.running: set[asyncio.Task[Any]] = set()
        """The calls running now (cancelled when the grace period after an abort ends)."""
        self.gate = ApprovalGate(run.config.approver, run.config.resume_from)
        """Decides the calls that need approval (see :mod:`tau.agent.approval`)."""
        self.paused: list[PausedCall] = []
        """The calls left waiting for a decision, in call order: the run pauses after them."""

    def cancel(self) -> None:
        """Cancel every running call (it gets the result ``Operation aborted``)."""
        for task in list(self.running):
            task.cancel()

    async def emit_deferring(self, event: AgentEvent) -> None:
        # Inside a tool batch a failing sink must not leave calls without results: remember
        # the failure, finish the batch, and end the run after its turn_end.
        try:
            await self.run.emit(event)
        except SinkError as exc:
            self.run.defer(exc)

    async def execute(
        self, message: AssistantMessage, calls: list[ToolCall]
    ) -> tuple[list[ToolResultMessage], list[AgentMessage] | None]:
        """Run ``message``'s ``calls``; returns their results in call order, and the steering
        messages that arrived meanwhile (None if none did)."""
        self.run.guard.begin_tool_batch(len(calls))
        try:
            if self.run.config.tool_execution == "sequential":
                return await self.run_sequential(message, calls)
            return await self.run_parallel(message, calls)
        finally:
            self.cancel()

    async def poll_steering_in_batch(self) -> list[AgentMessage]:
        try:
            return await self.run.poll(self.run.config.get_steering_messages)
        except Exception as exc:
            self.run.defer(exc)
            return []

    async def run_sequential(
        self, message: AssistantMessage, calls: list[ToolCall]
    ) -> tuple[list[ToolResultMessage], list[AgentMessage] | None]:
        results: list[ToolResultMessage] = []
        steering: list[AgentMessage] | None = None
        for index, call in enumerate(calls):
            await self.emit_deferring(ToolExecutionStartEvent(call.id, call.name, call.arguments))
            slot = await self.decide(message, call)
            if isinstance(slot, _Prepared):
                self.start(slot)
            result = await self.finish(message, slot)
            if result is not None:
                results.append(result)
            if self.run.config.get_steering_messages is not None:
                steering = await self.poll_steering_in_batch()
                if steering:
                    for later in calls[index + 1 :]:
                        await self.emit_deferring(
                            ToolExecutionStartEvent(later.id, later.name, later.arguments)
                        )
                        results.append(
                            await self._emit_result(later, error_tool_result(SKIPPED_MESSAGE), True)
                        )
                    break
        return results, steering or None

    async def run_parallel(
        self, message: AssistantMessage, calls: list[ToolCall]
    ) -> tuple[list[ToolResultMessage], list[AgentMessage] | None]:
        slots: list[_Slot] = []
        steering: list[AgentMessage] | None = None
        polls = self.run.config.get_steering_messages is not None
        for index, call in enumerate(calls):
            await self.emit_deferring(ToolExecutionStartEvent(call.id, call.name, call.arguments))
            slots.append(await self.decide(message, call))
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
        results = [r for slot in slots if (r := await self.finish(message, slot)) is not None]
        if polls and not steering:
            steering = await self.poll_steering_in_batch()
        return results, steering or None

    async def decide(self, message: AssistantMessage, call: ToolCall) -> _Slot:
        """Whether ``call`` runs: a :class:`_Prepared` call with its validated arguments, or
        the :class:`_Outcome` that takes its place (aborted, over a limit, unknown tool,
        invalid arguments, blocked by ``before_tool_call``)."""
        run = self.run
        if run.signal.aborted:
            return _Outcome(call, ABORTED_TOOL_MESSAGE)
        given = self.gate.decided(call)
        if given is not None:  # denied, or an external call's result: nothing runs
            return _Outcome(call, "", *given)
        refusal = run.guard.admit_tool_call()
        if refusal is not None:
            return _Outcome(call, refusal)
        tool = next((t for t in run.context.tools or () if t.name == call.name), None)
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
            # The output tool checks its arguments against the output type itself.
            args = target.arguments if isinstance(tool, OutputTool) else _validate(tool, target)
            hook = run.config.before_tool_call
            if hook is not None:
                decision = await invoke(
                    hook, BeforeToolCallContext(message, call, args, run.context), run.signal
                )
                _check_hook_result("before_tool_call", decision, BeforeToolCallResult)
                if decision is not None and decision.block:
                    return _Outcome(call, decision.reason or BLOCKED_MESSAGE)
            if self.gate.passes(tool):
                return _Prepared(call, tool, args)
            verdict = await self.gate.check(tool, target, args, _validate)
        except asyncio.CancelledError:
            raise
        except BaseException as exc:
            return _Outcome(call, _describe_failure(exc))
        if verdict.action == "pend":
            assert verdict.pending is not None
            run.guard.refund_tool_call()  # counted when it runs, after the pause
            return _Pending(call, verdict.pending)
        if verdict.action == "refuse":
            return _Outcome(call, verdict.message)
        return _Prepared(verdict.call or call, verdict.tool or tool, verdict.args)

    def start(self, prepared: _Prepared) -> None:
        if self.run.signal.aborted:
            return
        task = self.run.loop.create_task(self.run_call(prepared))
        prepared.task = task
        self.running.add(task)
        task.add_done_callback(self.running.discard)

    async def run_call(self, prepared: _Prepared) -> tuple[AgentToolResult, bool]:
        """Run a decided call (in its own task): its result, and whether it is an error."""
        call = prepared.call
        run = self.run
        loop = run.loop

        def on_update(partial: object) -> None:
            if threading.get_ident() != run.loop_thread:
                loop.call_soon_threadsafe(on_update, partial)
                return
            if prepared.finished:
                return
            event = ToolExecutionUpdateEvent(
                call.id, call.name, call.arguments, as_tool_result(partial)
            )
            prepared.updates = loop.create_task(self._chain(prepared.updates, event))

        try:
            work: Awaitable[Any] = run_tool(
                prepared.tool, call.id, prepared.args, run.signal, on_update
            )
            if run.observation is not None:
                work = run.observation.execute_tool(call, work)
            value = await work
            return as_tool_result(value), False
        except asyncio.CancelledError:
            raise
        except ToolPaused as paused:
            prepared.paused = NestedPause(call.id, call.name, dict(call.arguments), paused.state)
            return error_tool_result("paused"), True
        except BaseException as exc:
            return error_tool_result(_describe_failure(exc)), True
        finally:
            prepared.finished = True

    async def _chain(self, previous: asyncio.Task[None] | None, event: AgentEvent) -> None:
        # Updates of one call are delivered in order, each after the one before.
        if previous is not None:
            await asyncio.wait([previous])
        await self.emit_deferring(event)

    async def finish(self, message: AssistantMessage, slot: _Slot) -> ToolResultMessage | None:
        """Give ``slot`` its result; None when it is left waiting (see :attr:`paused`)."""
        call = slot.call
        if isinstance(slot, _Outcome):
            return await self._emit_result(call, slot.result, slot.is_error)
        if isinstance(slot, _Pending):
            self.paused.append(slot.entry)
            return None
        task = slot.task
        if task is None:
            result, is_error = error_tool_result(ABORTED_TOOL_MESSAGE), True
        else:
            try:
                result, is_error = await task
            except asyncio.CancelledError:
                current = asyncio.current_task()
                if not task.cancelled() or (current is not None and current.cancelling()):
                    raise  # this run is being cancelled, not just the tool
                slot.finished = True
                result, is_error = error_tool_result(ABORTED_TOOL_MESSAGE), True
        if slot.updates is not None and not slot.updates.done():
            await asyncio.wait([slot.updates])
        if slot.paused is not None:
            self.paused.append(slot.paused)
            self.run.guard.refund_tool_call()  # it runs (on) again when the run is resumed
            return None
        hook = self.run.config.after_tool_call
        if hook is not None:
            try:
                override = await invoke(
                    hook,
                    AfterToolCallContext(
                        message, call, slot.args, result, is_error, self.run.context
                    ),
                    self.run.signal,
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
