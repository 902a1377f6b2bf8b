"""The inputs of an agent run: :class:`AgentContext`, :class:`AgentLoopConfig` and the hook types.

Every callback may be a plain function or a coroutine function; the loop awaits whatever is
awaitable. None of them needs to be exception-safe: the loop turns an exception in any of them
into a defined outcome (see :mod:`tau.agent.loop`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeAlias, TypeVar

from tau.agent.messages import AgentMessage, default_convert_to_llm
from tau.agent.output import OutputValidator
from tau.agent.tool_sources import ToolSource
from tau.agent.tools import AgentTool, AgentToolResult
from tau.agent.usage import RunUsage, UsageLimits
from tau.ai import (
    AbortSignal,
    AssistantMessage,
    AssistantMessageEventStream,
    Message,
    Model,
    ThinkingBudgets,
    ThinkingLevel,
    ToolCall,
    UserContent,
)
from tau.ai.structured import OutputMode

if TYPE_CHECKING:
    from tau.agent.approval import Approver
    from tau.agent.events import AgentEvent
    from tau.agent.run_state import Resumption

__all__ = [
    "AfterToolCall",
    "AfterToolCallContext",
    "AfterToolCallResult",
    "AgentContext",
    "AgentEventSink",
    "AgentLoopConfig",
    "AgentThinkingLevel",
    "BeforeToolCall",
    "BeforeToolCallContext",
    "BeforeToolCallResult",
    "ConvertToLlm",
    "GetApiKey",
    "GetMessages",
    "RunInfo",
    "RunObservation",
    "RunObserver",
    "StreamFn",
    "ToolExecutionMode",
    "TransformContext",
]

T = TypeVar("T")
MaybeAwaitable: TypeAlias = T | Awaitable[T]

ToolExecutionMode: TypeAlias = Literal["parallel", "sequential"]
"""How a turn's tool calls run: all at once (results still in call order), or one by one."""
AgentThinkingLevel: TypeAlias = Literal["off"] | ThinkingLevel
"""The agent's reasoning level; ``off`` sends no ``reasoning`` option."""


@dataclass(slots=True)
class AgentContext:
    """What one run starts from: system prompt, transcript and tools."""

    system_prompt: str = ""
    messages: list[AgentMessage] = field(default_factory=list)
    tools: list[AgentTool] | None = None


@dataclass(slots=True)
class BeforeToolCallContext:
    """What ``before_tool_call`` sees: the message, the call, its validated ``args``."""

    assistant_message: AssistantMessage
    tool_call: ToolCall
    args: Any
    context: AgentContext


@dataclass(slots=True)
class BeforeToolCallResult:
    """``block=True`` stops the call; ``reason`` becomes its error result."""

    block: bool = False
    reason: str | None = None


@dataclass(slots=True)
class AfterToolCallContext:
    """What ``after_tool_call`` sees: the call and its result before any override."""

    assistant_message: AssistantMessage
    tool_call: ToolCall
    args: Any
    result: AgentToolResult
    is_error: bool
    context: AgentContext


@dataclass(slots=True)
class AfterToolCallResult:
    """Overrides of a tool result; a field left None keeps the original value."""

    content: list[UserContent] | None = None
    details: Any = None
    is_error: bool | None = None


StreamFn: TypeAlias = Callable[
    ..., "AssistantMessageEventStream | Awaitable[AssistantMessageEventStream]"
]
"""``(model, context, **options) -> stream``, like :func:`tau.ai.stream_simple` (the default).

It should encode failures in the stream; if it raises anyway, the turn ends with an error
message instead of hanging.
"""

ConvertToLlm: TypeAlias = Callable[[list[AgentMessage]], MaybeAwaitable[Sequence[Message]]]
TransformContext: TypeAlias = Callable[
    [list[AgentMessage], AbortSignal], MaybeAwaitable[Sequence[AgentMessage]]
]
GetApiKey: TypeAlias = Callable[[str], MaybeAwaitable[str | None]]
GetMessages: TypeAlias = Callable[[], MaybeAwaitable[Sequence[AgentMessage] | None]]
BeforeToolCall: TypeAlias = Callable[
    [BeforeToolCallContext, AbortSignal], MaybeAwaitable[BeforeToolCallResult | None]
]
"""Asked before a validated call runs; a result with ``block=True`` stops it."""
AfterToolCall: TypeAlias = Callable[
    [AfterToolCallContext, AbortSignal], MaybeAwaitable[AfterToolCallResult | None]
]
"""Asked after a call ran; a result overrides its content, details or error flag."""
AgentEventSink: TypeAlias = Callable[["AgentEvent"], Awaitable[None] | None]
"""Receives every event of a run; an awaitable it returns is awaited before the run goes on."""


@dataclass(slots=True, kw_only=True)
class AgentLoopConfig:
    """How a run calls the model and runs tools.

    ``reasoning``, ``thinking_budgets``, ``session_id`` and ``api_key`` become stream options
    (the key from ``get_api_key``, asked before every LLM call, wins when it is non-empty);
    ``stream_options`` passes anything else :func:`tau.ai.stream_simple` accepts
    (``temperature``, ``max_tokens``, ``headers``, ``on_payload``…).

    ``tool_abort_grace`` is how many seconds a running tool gets to finish on its own after an
    abort before it is cancelled and recorded as aborted.

    ``usage_limits`` bounds the run (see :mod:`tau.agent.usage`). ``usage`` is the
    :class:`RunUsage` the run adds to, in place, as it goes (pass the totals of a stopped run
    to count on from them); None starts from zero.
    ``name`` names the agent in traces; ``instrument`` chooses the run's observer (see
    :mod:`tau.agent.observe`): None follows the process-wide ``tau.telemetry.instrument()``,
    False turns tracing off for this run, True or an ``InstrumentationSettings`` turns it on.

    ``tool_sources`` (MCP servers, see :mod:`tau.agent.tool_sources`) are asked for their tools
    before every LLM call; their tools join the context's own for that turn.

    ``output_type`` (a pydantic model, any type a pydantic ``TypeAdapter`` takes, a JSON Schema
    dict or a :class:`tau.ai.OutputSpec`) makes the run end on a validated output, asked for in
    ``output_mode``, checked by ``output_validators`` and re-asked up to ``output_retries``
    more times (see :mod:`tau.agent.output`); the output is on the ``agent_end`` event.

    ``approver`` decides tool calls that need approval while the run waits; without one such
    calls (and every external call) pause the run (see :mod:`tau.agent.approval`).
    ``resume_from`` makes the run finish a paused turn first: the context must be the paused
    run's transcript.
    """

    model: Model
    convert_to_llm: ConvertToLlm = default_convert_to_llm
    transform_context: TransformContext | None = None
    get_api_key: GetApiKey | None = None
    get_steering_messages: GetMessages | None = None
    get_follow_up_messages: GetMessages | None = None
    before_tool_call: BeforeToolCall | None = None
    after_tool_call: AfterToolCall | None = None
    tool_execution: ToolExecutionMode = "parallel"
    reasoning: ThinkingLevel | None = None
    thinking_budgets: ThinkingBudgets | None = None
    session_id: str | None = None
    api_key: str | None = None
    stream_fn: StreamFn | None = None
    stream_options: Mapping[str, Any] = field(default_factory=dict)
    tool_abort_grace: float = 2.0
    usage_limits: UsageLimits | None = None
    usage: RunUsage | None = None
    name: str = "tau"
    instrument: RunObserver | bool | None = None
    tool_sources: Sequence[ToolSource] = ()
    output_type: Any = None
    output_mode: OutputMode = "auto"
    output_retries: int = 1
    output_validators: Sequence[OutputValidator] = ()
    approver: Approver | None = None
    resume_from: Resumption | None = None


# --------------------------------------------------------------------------- the observer interface
# (tau.agent.observe chooses a run's observer; the loop calls it as described there)


@dataclass(frozen=True, slots=True)
class RunInfo:
    """What a run starts from, as an observer sees it."""

    name: str
    """The agent's name (``AgentLoopConfig.name``)."""
    config: AgentLoopConfig
    context: AgentContext
    """System prompt, transcript (the new input included) and tools."""
    prompts: Sequence[AgentMessage]
    """The run's new input; empty when it continues from the transcript."""


class RunObservation(Protocol):
    """One observed run; see the module docstring for where the loop calls each method."""

    def sink(self, sink: AgentEventSink) -> AgentEventSink:
        """The sink the run emits to: it must pass every event on to ``sink`` and return what
        ``sink`` returns."""
        ...

    def stream_fn(self, stream_fn: StreamFn) -> StreamFn:
        """The stream function the run calls: it must call ``stream_fn`` once per call."""
        ...

    def execute_tool(self, call: ToolCall, work: Awaitable[T]) -> Awaitable[T]:
        """Await ``work`` (the tool running) and return or raise what it does."""
        ...

    def run(self, body: Callable[[], Awaitable[T]]) -> Awaitable[T]:
        """Await ``body()`` (the whole run) and return or raise what it does."""
        ...


class RunObserver(Protocol):
    """Watches agent runs: makes a :class:`RunObservation` for each."""

    def start_run(self, run: RunInfo) -> RunObservation:
        """Called when a run is set up, before its first event."""
        ...
