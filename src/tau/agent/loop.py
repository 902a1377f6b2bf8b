"""The agent run's entry points: from the prompts to ``agent_end``, as a stream of
:class:`AgentEvent`.

Entry points: :func:`agent_loop` / :func:`agent_loop_continue` return an
:class:`~tau.ai.EventStream` (observational: the run never waits for the consumer), while
:func:`run_agent_loop` / :func:`run_agent_loop_continue` await an ``emit`` sink for every event
(a barrier: the run goes on only when the sink has processed the event).

What a run does (turns, tools, abort, failures, run control, typed output) is described in
:mod:`tau.agent.run`.
"""

from __future__ import annotations

import asyncio
import logging
import warnings
from collections.abc import Callable, Sequence
from typing import Any

from tau.agent.events import AgentEndEvent, AgentEvent
from tau.agent.messages import AgentMessage, message_role
from tau.agent.run import AgentRun
from tau.agent.tool_batch import ABORTED_TOOL_MESSAGE as _ABORTED_TOOL_MESSAGE
from tau.agent.tool_batch import BLOCKED_MESSAGE as _BLOCKED_MESSAGE
from tau.agent.tool_batch import SKIPPED_MESSAGE as _SKIPPED_MESSAGE
from tau.agent.types import AgentContext, AgentEventSink, AgentLoopConfig, StreamFn
from tau.ai import AbortSignal, AssistantMessage
from tau.ai.adapters import EventStream

__all__ = [
    "AgentError",
    "agent_loop",
    "agent_loop_continue",
    "ended_in_failure",
    "run_agent_loop",
    "run_agent_loop_continue",
]

_log = logging.getLogger("tau.agent")


class AgentError(RuntimeError):
    """A call that the agent's current state does not allow (continue from nothing, busy…)."""


def ended_in_failure(message: AgentMessage) -> bool:
    """Whether ``message`` is an assistant response that ended in ``error`` or ``aborted``."""
    return isinstance(message, AssistantMessage) and message.stop_reason in ("error", "aborted")


def _check_continue(context: AgentContext, config: AgentLoopConfig) -> None:
    if config.resume_from is not None:
        return  # the paused turn's calls are finished first: its assistant message may be last
    if not context.messages:
        raise AgentError("Cannot continue: no messages in context")
    last = context.messages[-1]
    if message_role(last) == "assistant" and not ended_in_failure(last):
        raise AgentError("Cannot continue from message role: assistant")


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
    name: str, make_run: Callable[[AgentEventSink], AgentRun]
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
        "agent_loop", lambda sink: AgentRun(context, prompts, config, sink, signal, stream_fn)
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
    _check_continue(context, config)
    return _launch(
        "agent_loop_continue", lambda sink: AgentRun(context, None, config, sink, signal, stream_fn)
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
    return await AgentRun(context, prompts, config, emit, signal, stream_fn).run()


async def run_agent_loop_continue(
    context: AgentContext,
    config: AgentLoopConfig,
    emit: AgentEventSink,
    signal: AbortSignal | None = None,
    stream_fn: StreamFn | None = None,
) -> list[AgentMessage]:
    """:func:`agent_loop_continue` with an awaited sink, like :func:`run_agent_loop`."""
    _check_continue(context, config)
    return await AgentRun(context, None, config, emit, signal, stream_fn).run()


_MOVED = {
    "ABORTED_TOOL_MESSAGE": _ABORTED_TOOL_MESSAGE,
    "BLOCKED_MESSAGE": _BLOCKED_MESSAGE,
    "SKIPPED_MESSAGE": _SKIPPED_MESSAGE,
}


def __getattr__(name: str) -> Any:
    # The tool-result texts moved to tau.agent.tool_batch with the tool batch.
    if name not in _MOVED:
        raise AttributeError(f"module 'tau.agent.loop' has no attribute {name!r}")
    warnings.warn(
        f"tau.agent.loop.{name} is deprecated and leaves tau.agent.loop in the next minor "
        "version: import it from tau.agent.tool_batch",
        DeprecationWarning,
        stacklevel=2,
    )
    return _MOVED[name]
