"""tau.agent: the agent run, from user input to idle (built on tau.ai only).

* :func:`agent_loop` / :func:`run_agent_loop` — the stateless run: turns, tools, steering,
  follow-ups, as a stream of :data:`AgentEvent`.
* :class:`Agent` — the stateful agent: transcript, queues, listeners, one run at a time;
  ``prompt()`` returns a :class:`RunResult`.
* :class:`AgentTool`, :func:`agent_tool` — executable tools, from a class or a typed function.
* :func:`register_message_type` — application message roles next to the LLM ones.
* :class:`RunObserver`, :func:`set_run_observer` — the observer interface: tracing
  (``tau.telemetry``) plugs in through it, ``Agent(instrument=True)`` finds it as a plugin.
* :class:`UsageLimits`, :class:`RunUsage` — how much a run may use, and what it used
  (``Agent(usage_limits=..., fallback_models=[...])``; see :mod:`tau.agent.usage`).
* ``Agent(output_type=...)``, :class:`ModelRetry` — runs that end on a validated output
  (see :mod:`tau.agent.output`); :class:`OutputUpdateEvent` streams it as it forms.
* ``AgentTool(requires_approval=..., external=...)``, ``Agent(approver=...)``: runs that pause
  for a person or the caller, :class:`RunState` to store them, ``agent.resume(state, decisions)``
  with :class:`Approve`, :class:`Deny`, :class:`ToolResult` (see :mod:`tau.agent.approval`).
* ``agent.as_tool(name, description)`` (:class:`SubAgentTool`) — an agent as another's tool
  (see :mod:`tau.agent.subagent`).
* :class:`ToolSource` — tools asked for before every turn; ``tau.agent.mcp`` makes MCP servers
  tool sources (imported only when used: ``pip install 'tau[mcp]'``).

This face lists what applications call; the modules behind it (``tau.agent.run``,
``tau.agent.tool_batch``…) are the implementation. Names that left the face keep working for
one minor version with a :class:`DeprecationWarning` naming their new place.
"""

import warnings
from typing import Any

from tau.agent.agent import Agent, AgentListener, AgentState, QueueMode
from tau.agent.approval import (
    ApprovalRequirement,
    Approve,
    Approver,
    Decision,
    Deny,
    PendingCall,
    PendingKind,
    ToolResult,
)
from tau.agent.events import AGENT_EVENT_TYPES as _AGENT_EVENT_TYPES
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
    ToolExecutionEndEvent,
    ToolExecutionStartEvent,
    ToolExecutionUpdateEvent,
    TurnEndEvent,
    TurnStartEvent,
    dump_event,
    event_to_json,
)
from tau.agent.loop import (
    AgentError,
    agent_loop,
    agent_loop_continue,
    run_agent_loop,
    run_agent_loop_continue,
)
from tau.agent.messages import (
    AgentMessage,
    CustomMessage,
    default_convert_to_llm,
    dump_agent_message,
    load_agent_message,
    message_role,
    register_message_type,
    unregister_message_type,
)
from tau.agent.messages import registered_message_types as _registered_message_types
from tau.agent.observe import (
    RunInfo,
    RunObservation,
    RunObserver,
    get_run_observer,
    set_run_observer,
)
from tau.agent.output import ModelRetry, OutputValidator
from tau.agent.run_result import RunResult, RunStatus
from tau.agent.run_state import RUN_STATE_VERSION, RunState, ToolPaused
from tau.agent.subagent import SubAgentTool
from tau.agent.tool_sources import ToolNameClashError, ToolSource
from tau.agent.tools import (
    AgentTool,
    AgentToolResult,
    ToolUpdateCallback,
    agent_tool,
    as_tool_result,
    tool_from_function,
)
from tau.agent.types import (
    AfterToolCall,
    AfterToolCallContext,
    AfterToolCallResult,
    AgentContext,
    AgentEventSink,
    AgentLoopConfig,
    AgentThinkingLevel,
    BeforeToolCall,
    BeforeToolCallContext,
    BeforeToolCallResult,
    StreamFn,
    ToolExecutionMode,
)
from tau.agent.usage import LIMIT_REACHED, RunUsage, UsageLimits

__all__ = [
    "LIMIT_REACHED",
    "RUN_STATE_VERSION",
    "AfterToolCall",
    "AfterToolCallContext",
    "AfterToolCallResult",
    "Agent",
    "AgentContext",
    "AgentEndEvent",
    "AgentError",
    "AgentEvent",
    "AgentEventSink",
    "AgentListener",
    "AgentLoopConfig",
    "AgentMessage",
    "AgentPausedEvent",
    "AgentStartEvent",
    "AgentState",
    "AgentThinkingLevel",
    "AgentTool",
    "AgentToolResult",
    "ApprovalRequirement",
    "Approve",
    "Approver",
    "BeforeToolCall",
    "BeforeToolCallContext",
    "BeforeToolCallResult",
    "CustomMessage",
    "Decision",
    "Deny",
    "FallbackEvent",
    "MessageEndEvent",
    "MessageStartEvent",
    "MessageUpdateEvent",
    "ModelRetry",
    "OutputUpdateEvent",
    "OutputValidator",
    "PendingCall",
    "PendingKind",
    "QueueMode",
    "RunInfo",
    "RunObservation",
    "RunObserver",
    "RunResult",
    "RunState",
    "RunStatus",
    "RunUsage",
    "StreamFn",
    "SubAgentTool",
    "ToolExecutionEndEvent",
    "ToolExecutionMode",
    "ToolExecutionStartEvent",
    "ToolExecutionUpdateEvent",
    "ToolNameClashError",
    "ToolPaused",
    "ToolResult",
    "ToolSource",
    "ToolUpdateCallback",
    "TurnEndEvent",
    "TurnStartEvent",
    "UsageLimits",
    "agent_loop",
    "agent_loop_continue",
    "agent_tool",
    "as_tool_result",
    "default_convert_to_llm",
    "dump_agent_message",
    "dump_event",
    "event_to_json",
    "get_run_observer",
    "load_agent_message",
    "message_role",
    "register_message_type",
    "run_agent_loop",
    "run_agent_loop_continue",
    "set_run_observer",
    "tool_from_function",
    "unregister_message_type",
]

# name -> (its new home, the object): removed from the face, still served with a warning.
_MOVED: dict[str, tuple[str, Any]] = {
    "AGENT_EVENT_TYPES": ("tau.agent.events", _AGENT_EVENT_TYPES),
    "registered_message_types": ("tau.agent.messages", _registered_message_types),
}


def __getattr__(name: str) -> Any:
    moved = _MOVED.get(name)
    if moved is None:
        raise AttributeError(f"module 'tau.agent' has no attribute {name!r}")
    home, value = moved
    warnings.warn(
        f"tau.agent.{name} is deprecated and leaves tau.agent in the next minor version: "
        f"import it from {home}",
        DeprecationWarning,
        stacklevel=2,
    )
    return value
