"""The DBOS steps of a durable run: one per model call, one per tool execution.

A step's result is recorded as JSON-compatible data; when DBOS replays a workflow after a
crash, a recorded step returns that data without running, and the wrappers here turn it back
into what the agent loop expects (a response stream, a tool result).
"""

from __future__ import annotations

import asyncio
import inspect
import uuid
from typing import Any

from dbos import DBOS

from tau.agent import (
    AgentTool,
    AgentToolResult,
    Approve,
    Approver,
    Deny,
    PendingCall,
    StreamFn,
    ToolUpdateCallback,
)
from tau.agent.tools import as_tool_result, run_tool
from tau.ai import (
    AbortSignal,
    AssistantMessage,
    AssistantMessageEventStream,
    Context,
    DoneEvent,
    ErrorEvent,
    Model,
    ProviderConnectionError,
    ProviderError,
    ProviderTimeoutError,
    StartEvent,
    ToolResultMessage,
    dump_message,
    load_message,
)
from tau.ai.adapters import describe_error

__all__ = ["INTERRUPTED_MESSAGE", "durable_approver", "durable_stream_fn", "durable_tool"]

INCARNATION = uuid.uuid4().hex
"""This process's identity: a tool-start marker recorded by another process means a crash."""

INTERRUPTED_MESSAGE = (
    "Tool {name} was running when its process stopped; it is not idempotent, so it was not "
    "run again and its outcome is unknown"
)
"""The error result of a non-idempotent call that a crash interrupted."""

_NO_RETRY: Any = {"retries_allowed": False}


# --------------------------------------------------------------------------- model calls


def _dump_cause(cause: BaseException | None) -> dict[str, Any] | None:
    # What fallback_stream_fn classifies a failure by: the exception's kind and HTTP status.
    if cause is None:
        return None
    kind = (
        "timeout"
        if isinstance(cause, ProviderTimeoutError)
        else "connection"
        if isinstance(cause, ProviderConnectionError)
        else "provider"
    )
    status = cause.status if isinstance(cause, ProviderError) else None
    return {"kind": kind, "status": status, "text": describe_error(cause)}


def _load_cause(data: dict[str, Any] | None) -> BaseException | None:
    if data is None:
        return None
    if data["kind"] == "timeout":
        return ProviderTimeoutError(data["text"])
    if data["kind"] == "connection":
        return ProviderConnectionError(data["text"])
    return ProviderError(data["text"], status=data["status"])


def durable_stream_fn(inner: StreamFn) -> StreamFn:
    """``inner`` with each call a DBOS step: the recorded response is replayed, not re-sent.

    The stream it returns carries the whole response at once (``start`` then ``done`` or
    ``error``): a step records results, not the deltas on the way.
    """

    def stream_fn(model: Model, context: Context, **options: Any) -> AssistantMessageEventStream:
        out = AssistantMessageEventStream()

        async def call() -> dict[str, Any]:
            made = inner(model, context, **options)
            stream: AssistantMessageEventStream = (
                made if isinstance(made, AssistantMessageEventStream) else await made
            )
            cause: BaseException | None = None
            final: AssistantMessage | None = None
            async for event in stream:
                if isinstance(event, DoneEvent):
                    final = event.message
                elif isinstance(event, ErrorEvent):
                    final, cause = event.error, event.cause
            if final is None:
                final = await stream.result()
            return {"message": dump_message(final), "cause": _dump_cause(cause)}

        async def drive() -> None:
            try:
                recorded = await DBOS.run_step_async(_step("tau.model_call"), call)
                message = load_message(recorded["message"])
                assert isinstance(message, AssistantMessage)
                cause = _load_cause(recorded.get("cause"))
            except Exception as exc:  # the step itself failed (database trouble)
                message = AssistantMessage(
                    content=[],
                    api=model.api,
                    provider=model.provider,
                    model=model.id,
                    stop_reason="error",
                    error_message=describe_error(exc),
                )
                cause = exc
            out.push(StartEvent(message))
            reason = message.stop_reason
            if reason == "error" or reason == "aborted":
                out.push(ErrorEvent(reason, message, cause))
            else:
                out.push(DoneEvent(reason, message))
            out.end(message)

        task = asyncio.get_running_loop().create_task(drive())
        _tasks.add(task)
        task.add_done_callback(_tasks.discard)
        return out

    return stream_fn


_tasks: set[asyncio.Task[None]] = set()


def _step(name: str) -> Any:
    return {**_NO_RETRY, "name": name}


# --------------------------------------------------------------------------- tools


class _RecordedToolError(Exception):
    """A tool failure as recorded: its text is the error result's."""


def _incarnation() -> str:
    return INCARNATION


def durable_tool(tool: AgentTool) -> AgentTool:
    """``tool`` with each execution a DBOS step (external tools are returned as they are)."""
    if tool.external:
        return tool

    async def execute(
        call_id: str, params: Any, signal: AbortSignal, on_update: ToolUpdateCallback
    ) -> Any:
        name = tool.name
        started = INCARNATION
        if not tool.idempotent:
            # Recorded before it runs: a replay that finds another process's marker and no
            # recorded result knows the call was running when that process died.
            started = await DBOS.run_step_async(_step(f"tau.tool_start.{name}"), _incarnation)

        async def run() -> dict[str, Any]:
            if started != INCARNATION:
                return {"error": INTERRUPTED_MESSAGE.format(name=name)}
            try:
                value = await run_tool(tool, call_id, params, signal, on_update)
            except Exception as exc:
                return {"error": describe_error(exc)}
            result = as_tool_result(value)
            # Recorded as a tool-result message: its pi JSON holds any content block.
            message = ToolResultMessage(
                tool_call_id=call_id,
                tool_name=name,
                content=result.content,
                is_error=False,
                details=_jsonable(result.details),
            )
            return {"result": dump_message(message)}

        recorded = await DBOS.run_step_async(_step(f"tau.tool.{name}"), run)
        if "error" in recorded:
            raise _RecordedToolError(recorded["error"])
        message = load_message(recorded["result"])
        assert isinstance(message, ToolResultMessage)
        return AgentToolResult(list(message.content), message.details)

    wrapped = AgentTool(
        tool.name,
        tool.description,
        tool.parameters,
        execute=execute,
        label=tool.label,
        prepare_arguments=tool.prepare_arguments,
        requires_approval=tool.requires_approval,
        idempotent=tool.idempotent,
    )
    return wrapped


def _jsonable(value: Any) -> Any:
    from pydantic_core import to_jsonable_python

    return to_jsonable_python(value, fallback=repr)


# --------------------------------------------------------------------------- approvals


def durable_approver(approver: Approver) -> Approver:
    """``approver`` with each answer a DBOS step: a replayed run gets the answer the person
    gave, instead of asking again (and maybe hearing something else)."""

    async def decide(call: PendingCall) -> Approve | Deny | bool | None:
        async def ask() -> Any:
            answer = approver(call)
            if inspect.isawaitable(answer):
                answer = await answer
            if isinstance(answer, Approve):
                return {"kind": "approve", "arguments": answer.arguments}
            if isinstance(answer, Deny):
                return {"kind": "deny", "reason": answer.reason}
            if answer is None or isinstance(answer, bool):
                return answer
            raise TypeError(
                f"the approver must return Approve, Deny, True, False or None, not "
                f"{type(answer).__name__}"
            )

        recorded = await DBOS.run_step_async(_step(f"tau.approval.{call.tool_name}"), ask)
        if isinstance(recorded, dict):
            if recorded["kind"] == "approve":
                return Approve(arguments=recorded["arguments"])
            return Deny(recorded["reason"])
        answer: bool | None = recorded
        return answer

    return decide
