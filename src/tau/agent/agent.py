"""The stateful :class:`Agent`: a transcript, queues, listeners, and one run at a time.

::

    agent = Agent(model=model, system_prompt="You are helpful.", tools=[read_file])
    agent.subscribe(lambda event: print(event.type))
    result = await agent.prompt("What is in README.md?")
    print(result.text)                       # the final answer; result.messages: the run's
    agent.follow_up("And in LICENSE?")      # delivered when the agent would otherwise stop
    agent.steer("Stop, do X instead")        # delivered after the current tool call(s)

Every loop event first updates :attr:`Agent.state`, then goes to the listeners in subscription
order; a listener may be sync or async, and async ones are awaited before the run goes on.
Two barriers follow: when tool preflight starts, the assistant message is in
``state.messages`` and every listener has finished with its ``message_end`` (so
``before_tool_call`` sees current state); and the agent is idle (``prompt()`` returns,
``wait_for_idle()`` resolves, ``is_streaming`` turns false) only after every ``agent_end``
listener has settled, so persist-on-end works.

``prompt()`` and ``continue_()`` return a :class:`RunResult`: the messages the run added, its
final assistant message and text, and whether it failed or was aborted. Failures never raise
(the result and ``state.error`` say what happened), so one ``await`` is the common case.

Where this departs from pi-agent-core 0.58.3's ``Agent`` (deliberately):

* Listeners are awaited (pi ignores their return values), and an exception in one does not
  stop the others from seeing the event; the run then ends with an error message.
* ``is_streaming`` stays true until the run is completely finished (pi clears it at
  ``agent_end``, before its listeners run, so a listener calling ``prompt()`` started a second
  run that the first run's cleanup then broke). Calling ``prompt()`` from an ``agent_end``
  listener raises the busy error; schedule the next prompt instead. ``wait_for_idle()`` called
  from inside the run (a listener, a sequential tool) raises instead of deadlocking.
* A failed run goes through the normal events: its error message gets ``message_start``,
  ``message_end`` (so it is persisted like any other), ``turn_end`` and ``agent_end`` while
  the run is still marked running (pi emitted a bare ``agent_end`` to listeners only).
* ``after_tool_call`` raising gives an error tool result (see :mod:`tau.agent.loop`).
* An abort between turns or during tools ends the run without a new LLM call;
  ``state.error`` then says the run was aborted.
* ``state.messages`` grows in place (pi copies the list on every message, which is quadratic).
* ``reset()`` during a run raises (pi cleared ``is_streaming`` under the running run, which
  let a second run start alongside it).
* No default model: pi defaults to a Google model; here ``prompt()`` without one raises
  ``No model configured``.

Snapshot rule (as in pi): a run reads the model, reasoning level, system prompt, tools,
tool sources, messages, session id, budgets, hooks, ``stream_fn``, ``get_api_key``,
``usage_limits`` and ``fallback_models`` once, when it starts; changing them (``session_id``
included) affects the next run. The tool sources themselves are asked for their current tools
before every turn. The steering and follow-up modes are read at every dequeue.

Run control: ``usage_limits`` bound each run (:mod:`tau.agent.usage`), ``state.usage`` holds
its live totals (``prompt()`` starts from zero, ``continue_()`` counts on); ``fallback_models``
are tried in order when the model fails before streaming anything, each a ``fallback`` event.
Typed output: ``Agent(output_type=City)`` ends every run on a validated ``City`` (on
``result.output``); ``@agent.output_validator`` functions may raise
:class:`~tau.agent.ModelRetry` to have the model try again (see :mod:`tau.agent.output`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Generic, cast, overload

from typing_extensions import TypeVar, Unpack

from tau.agent.approval import Approver, Decision
from tau.agent.events import AgentEndEvent, AgentEvent, AgentPausedEvent
from tau.agent.listeners import AgentListener, Listeners
from tau.agent.loop import AgentError, ended_in_failure, run_agent_loop, run_agent_loop_continue
from tau.agent.messages import AgentMessage, default_convert_to_llm, message_role
from tau.agent.observe import RunObserver, resolve_run_observer
from tau.agent.output import OutputValidator
from tau.agent.pausing import fork_agent, paused_state, resume_agent
from tau.agent.queues import QueueMode, as_message, take_queued
from tau.agent.run_config import loop_config
from tau.agent.run_result import OutputT, RunResult
from tau.agent.run_state import Resumption, RunState
from tau.agent.settings import agent_settings
from tau.agent.state import AgentState, apply_event
from tau.agent.subagent import SubAgentOptions, SubAgentTool
from tau.agent.tool_sources import ToolSource
from tau.agent.tools import AgentTool
from tau.agent.types import (
    AfterToolCall,
    AgentContext,
    AgentThinkingLevel,
    BeforeToolCall,
    ConvertToLlm,
    GetApiKey,
    StreamFn,
    ToolExecutionMode,
    TransformContext,
)
from tau.agent.usage import RunUsage, UsageLimits
from tau.ai import (
    AbortController,
    AssistantMessage,
    ImageContent,
    Model,
    PayloadHook,
    Settings,
    TextContent,
    ThinkingBudgets,
    UserContent,
    UserMessage,
    fallback_stream_fn,
)
from tau.ai.adapters import ABORTED_MESSAGE, describe_error
from tau.ai.structured import OutputMode, OutputSpec, supports_native_output

__all__ = ["Agent", "AgentListener", "AgentState", "QueueMode", "RunResult"]


BUSY_PROMPT = (
    "Agent is already processing a prompt. Use steer() or follow_up() to queue messages, "
    "or wait for completion."
)
BUSY_CONTINUE = "Agent is already processing. Wait for completion before continuing."
NO_MODEL = "No model configured"

V = TypeVar("V", bound=OutputValidator)


class Agent(Generic[OutputT]):
    """An agent: state, queues and listeners around :func:`~tau.agent.run_agent_loop`.

    With ``output_type``, each run ends on a validated output (``Agent[City]`` for a model
    ``City``): see :mod:`tau.agent.output` for ``output_mode``, ``output_retries`` and
    ``output_validators``.
    """

    @overload
    def __init__(
        self: Agent[OutputT],
        *,
        model: Model | None = ...,
        system_prompt: str = ...,
        thinking_level: AgentThinkingLevel = ...,
        tools: Sequence[AgentTool] = ...,
        messages: Sequence[AgentMessage] = ...,
        convert_to_llm: ConvertToLlm = ...,
        transform_context: TransformContext | None = ...,
        steering_mode: QueueMode = ...,
        follow_up_mode: QueueMode = ...,
        stream_fn: StreamFn | None = ...,
        session_id: str | None = ...,
        get_api_key: GetApiKey | None = ...,
        on_payload: PayloadHook | None = ...,
        thinking_budgets: ThinkingBudgets | None = ...,
        max_retry_delay_ms: int | None = ...,
        tool_execution: ToolExecutionMode = ...,
        before_tool_call: BeforeToolCall | None = ...,
        after_tool_call: AfterToolCall | None = ...,
        settings: Settings | None = ...,
        stream_options: Mapping[str, Any] | None = ...,
        usage_limits: UsageLimits | None = ...,
        fallback_models: Sequence[Model] = ...,
        name: str = ...,
        instrument: RunObserver | bool | None = ...,
        tool_sources: Sequence[ToolSource] = ...,
        output_type: type[OutputT] | OutputSpec[OutputT],
        output_mode: OutputMode = ...,
        output_retries: int = ...,
        output_validators: Sequence[OutputValidator] = ...,
        approver: Approver | None = ...,
    ) -> None: ...
    @overload
    def __init__(
        self: Agent[Any],
        *,
        model: Model | None = ...,
        system_prompt: str = ...,
        thinking_level: AgentThinkingLevel = ...,
        tools: Sequence[AgentTool] = ...,
        messages: Sequence[AgentMessage] = ...,
        convert_to_llm: ConvertToLlm = ...,
        transform_context: TransformContext | None = ...,
        steering_mode: QueueMode = ...,
        follow_up_mode: QueueMode = ...,
        stream_fn: StreamFn | None = ...,
        session_id: str | None = ...,
        get_api_key: GetApiKey | None = ...,
        on_payload: PayloadHook | None = ...,
        thinking_budgets: ThinkingBudgets | None = ...,
        max_retry_delay_ms: int | None = ...,
        tool_execution: ToolExecutionMode = ...,
        before_tool_call: BeforeToolCall | None = ...,
        after_tool_call: AfterToolCall | None = ...,
        settings: Settings | None = ...,
        stream_options: Mapping[str, Any] | None = ...,
        usage_limits: UsageLimits | None = ...,
        fallback_models: Sequence[Model] = ...,
        name: str = ...,
        instrument: RunObserver | bool | None = ...,
        tool_sources: Sequence[ToolSource] = ...,
        output_type: Any = ...,
        output_mode: OutputMode = ...,
        output_retries: int = ...,
        output_validators: Sequence[OutputValidator] = ...,
        approver: Approver | None = ...,
    ) -> None: ...
    def __init__(
        self,
        *,
        model: Model | None = None,
        system_prompt: str = "",
        thinking_level: AgentThinkingLevel = "off",
        tools: Sequence[AgentTool] = (),
        messages: Sequence[AgentMessage] = (),
        convert_to_llm: ConvertToLlm = default_convert_to_llm,
        transform_context: TransformContext | None = None,
        steering_mode: QueueMode = "one-at-a-time",
        follow_up_mode: QueueMode = "one-at-a-time",
        stream_fn: StreamFn | None = None,
        session_id: str | None = None,
        get_api_key: GetApiKey | None = None,
        on_payload: PayloadHook | None = None,
        thinking_budgets: ThinkingBudgets | None = None,
        max_retry_delay_ms: int | None = None,
        tool_execution: ToolExecutionMode = "parallel",
        before_tool_call: BeforeToolCall | None = None,
        after_tool_call: AfterToolCall | None = None,
        settings: Settings | None = None,
        stream_options: Mapping[str, Any] | None = None,
        usage_limits: UsageLimits | None = None,
        fallback_models: Sequence[Model] = (),
        name: str = "tau",
        instrument: RunObserver | bool | None = None,
        tool_sources: Sequence[ToolSource] = (),
        output_type: Any = None,
        output_mode: OutputMode = "auto",
        output_retries: int = 1,
        output_validators: Sequence[OutputValidator] = (),
        approver: Approver | None = None,
    ) -> None:
        self._state = AgentState(
            system_prompt=system_prompt,
            model=model,
            thinking_level=thinking_level,
            tools=list(tools),
            messages=list(messages),
        )
        self._convert_to_llm = convert_to_llm
        self._transform_context = transform_context
        self._on_payload = on_payload
        self.steering_mode: QueueMode = steering_mode
        """How many queued steering messages one poll delivers."""
        self.follow_up_mode: QueueMode = follow_up_mode
        """How many queued follow-up messages one poll delivers."""
        self.stream_fn: StreamFn | None = stream_fn
        """The LLM call (default :func:`tau.ai.stream_simple`)."""
        self.session_id: str | None = session_id
        """Forwarded to providers for prompt caching; set it when switching sessions."""
        self.get_api_key: GetApiKey | None = get_api_key
        """Asked for a key before every LLM call (expiring OAuth tokens)."""
        self.thinking_budgets: ThinkingBudgets | None = thinking_budgets
        self.max_retry_delay_ms: int | None = max_retry_delay_ms
        self.tool_execution: ToolExecutionMode = tool_execution
        self.before_tool_call: BeforeToolCall | None = before_tool_call
        self.after_tool_call: AfterToolCall | None = after_tool_call
        self.settings, self.stream_options = agent_settings(settings, stream_options)
        """The model call's :class:`tau.ai.Settings`; ``stream_options``: deprecated, untyped."""
        self.usage_limits: UsageLimits | None = usage_limits
        """How much one run may use (None: no limit); raise it and ``continue_()`` to go on."""
        self.fallback_models: list[Model] = list(fallback_models)
        """Models tried in order when the model fails before streaming anything."""
        self.name = name
        """The agent's name in traces (``invoke_agent {name}``)."""
        if instrument is True:
            resolve_run_observer(True)  # a missing [otel] extra fails here, not mid-run
        self.instrument: RunObserver | bool | None = instrument
        """Tracing: None follows ``tau.telemetry.instrument()``, False is off, True or a
        ``tau.telemetry.InstrumentationSettings`` is on for this agent."""
        self.tool_sources: list[ToolSource] = list(tool_sources)
        """Asked for their tools before every turn (MCP servers): see :mod:`tau.agent.mcp`."""
        if output_retries < 0:
            raise ValueError(f"output_retries must be 0 or more, got {output_retries}")
        self.output_type: OutputSpec[Any] | None = (
            None if output_type is None else OutputSpec.of(output_type)
        )
        """What each run must end on (resolved once: a bad type fails here), or None."""
        self.output_mode: OutputMode = output_mode
        self.output_retries = output_retries
        """How many times a rejected output is sent back before the run fails."""
        self.output_validators: list[OutputValidator] = list(output_validators)
        """Run in order on each validated output (see :meth:`output_validator`)."""
        self.approver: Approver | None = approver
        """Decides calls that need approval during a run; None pauses it (:meth:`resume`)."""
        self._run_paused: AgentPausedEvent | None = None
        self._listeners = Listeners()
        self._steering: list[AgentMessage] = []
        self._follow_ups: list[AgentMessage] = []
        self._controller: AbortController | None = None
        self._idle: asyncio.Future[None] | None = None
        self._run_task: asyncio.Task[Any] | None = None
        self._run_end: AgentEndEvent | None = None

    # ----------------------------------------------------------------------- state

    @property
    def state(self) -> AgentState:
        """The live state object."""
        return self._state

    def set_system_prompt(self, value: str) -> None:
        """Replace the system prompt (next run)."""
        self._state.system_prompt = value

    def set_model(self, model: Model) -> None:
        """Replace the model (next run)."""
        self._state.model = model

    def set_thinking_level(self, level: AgentThinkingLevel) -> None:
        """Replace the reasoning level (next run); ``off`` sends none."""
        self._state.thinking_level = level

    def set_tools(self, tools: list[AgentTool]) -> None:
        """Replace the tools (the list itself is kept, not copied)."""
        self._state.tools = tools

    def replace_messages(self, messages: Sequence[AgentMessage]) -> None:
        """Replace the transcript with a copy of ``messages``."""
        self._state.messages = list(messages)

    def append_message(self, message: AgentMessage) -> None:
        """Add one message to the transcript (no event)."""
        self._state.messages.append(message)

    def clear_messages(self) -> None:
        """Empty the transcript."""
        self._state.messages = []

    def output_validator(self, validator: V) -> V:
        """Decorator: add ``validator`` to :attr:`output_validators`.

        It receives the validated output (sync or async), returns the output to keep (None
        keeps it as it is) and raises :class:`~tau.agent.ModelRetry` to send a message to the
        model and have it try again.
        """
        self.output_validators.append(validator)
        return validator

    # ----------------------------------------------------------------------- listeners

    def subscribe(self, listener: AgentListener) -> Callable[[], None]:
        """Call ``listener`` with every event from now on; returns the unsubscribe function."""
        return self._listeners.subscribe(listener)

    def _process_event(self, event: AgentEvent) -> Awaitable[None] | None:
        # The state first, then the listeners (see the module docstring).
        apply_event(self._state, event)
        if event.type == "agent_paused":
            self._run_paused = event
        elif event.type == "agent_end":
            self._run_end = event
            controller = self._controller
            state = self._state
            if controller is not None and controller.signal.aborted and state.error is None:
                state.error = controller.signal.reason or ABORTED_MESSAGE
        return self._listeners.deliver(event)

    # ----------------------------------------------------------------------- queues

    def steer(self, message: AgentMessage | str) -> None:
        """Queue a message delivered after the current tool call(s), skipping the rest."""
        self._steering.append(as_message(message))

    def follow_up(self, message: AgentMessage | str) -> None:
        """Queue a message delivered when the agent would otherwise stop."""
        self._follow_ups.append(as_message(message))

    def clear_steering_queue(self) -> None:
        """Drop the queued steering messages."""
        self._steering.clear()

    def clear_follow_up_queue(self) -> None:
        """Drop the queued follow-up messages."""
        self._follow_ups.clear()

    def clear_all_queues(self) -> None:
        """Drop every queued message."""
        self._steering.clear()
        self._follow_ups.clear()

    def has_queued_messages(self) -> bool:
        """Whether a steering or follow-up message is waiting."""
        return bool(self._steering or self._follow_ups)

    @property
    def steering_queue(self) -> tuple[AgentMessage, ...]:
        """The queued steering messages (a snapshot)."""
        return tuple(self._steering)

    @property
    def follow_up_queue(self) -> tuple[AgentMessage, ...]:
        """The queued follow-up messages (a snapshot)."""
        return tuple(self._follow_ups)

    def _dequeue_steering(self) -> list[AgentMessage]:
        return take_queued(self._steering, self.steering_mode)

    def _dequeue_follow_ups(self) -> list[AgentMessage]:
        return take_queued(self._follow_ups, self.follow_up_mode)

    # ----------------------------------------------------------------------- running

    async def prompt(
        self,
        input: str | AgentMessage | Sequence[AgentMessage],
        images: Sequence[ImageContent] | None = None,
    ) -> RunResult[OutputT]:
        """Run the agent on a new input until it is idle; returns what the run produced.

        ``input`` is text (one user message, with ``images`` after it), a message, or several
        messages. Raises :class:`~tau.agent.AgentError` if a run is active or no model is set;
        model and tool failures never raise: they end up in the transcript and ``state.error``.
        """
        if self._state.is_streaming:
            raise AgentError(BUSY_PROMPT)
        if isinstance(input, str):
            content: list[UserContent] = [TextContent(input)]
            content.extend(images or ())
            messages: list[AgentMessage] = [UserMessage(content)]
        elif isinstance(input, list | tuple):
            messages = list(input)
        else:
            messages = [cast(AgentMessage, input)]
        self._state.usage = RunUsage()
        return await self._run(messages)

    async def continue_(self) -> RunResult[OutputT]:
        """Run from the transcript as it is: a retry, or queued messages after an answer.

        With an assistant message last, the queued steering messages (else follow-ups) are
        delivered as a new input; with nothing queued, a last message that ended in ``error``
        or ``aborted`` is retried (it stays in the transcript; providers never see it), and
        any other is an error, as is an empty transcript or an active run. The run's usage
        adds to ``state.usage``. Returns the run's :class:`RunResult`.
        """
        if self._state.is_streaming:
            raise AgentError(BUSY_CONTINUE)
        messages = self._state.messages
        if not messages:
            raise AgentError("No messages to continue from")
        if self._state.model is None:
            raise AgentError(NO_MODEL)
        if message_role(messages[-1]) == "assistant":
            steering = self._dequeue_steering()
            if steering:
                return await self._run(steering, skip_initial_steering_poll=True)
            follow_ups = self._dequeue_follow_ups()
            if follow_ups:
                return await self._run(follow_ups)
            if not ended_in_failure(messages[-1]):
                raise AgentError("Cannot continue from message role: assistant")
        return await self._run(None)

    async def resume(
        self, state: RunState, decisions: Mapping[str, Decision]
    ) -> RunResult[OutputT]:
        """Continue a paused run from ``state`` (any process, an agent built the same way)
        with a decision per pending call; a missing, extra or ill-typed one is a
        ``ValueError`` naming the call, before anything runs (see :mod:`tau.agent.approval`)."""
        return await resume_agent(self, state, decisions, keep_usage=False)

    def fork(self) -> Agent[OutputT]:
        """A new agent built the same way, with no transcript, queued messages or listeners."""
        clone: Agent[OutputT] = fork_agent(self)
        return clone

    def as_tool(self, name: str, description: str, **options: Unpack[SubAgentOptions]) -> AgentTool:
        """A tool running a fork of this agent per call (see :mod:`tau.agent.subagent`)."""
        return SubAgentTool(self, name, description, **options)

    def abort(self, reason: str | None = None) -> None:
        """Abort the current run (no-op when idle). The steering and follow-up queues are
        kept, and the next ``prompt()``/``continue_()`` delivers them first; a caller for whom
        that would be a surprise takes them (``steering_queue``, ``follow_up_queue``) and
        ``clear_all_queues()`` (the ``tau`` command does: it puts them back in the editor, or
        reports them dropped over RPC)."""
        if self._controller is not None:
            self._controller.abort(reason)

    async def wait_for_idle(self) -> None:
        """Return once no run is active (every ``agent_end`` listener has settled)."""
        idle = self._idle
        if idle is None:
            return
        if self._run_task is not None and asyncio.current_task() is self._run_task:
            raise AgentError(
                "wait_for_idle() was called from inside the agent's own run (a listener or a "
                "tool); it would wait for itself forever"
            )
        await asyncio.shield(idle)

    def reset(self) -> None:
        """Clear the transcript, run state, error and queues (keeps model, tools, listeners).

        Raises :class:`~tau.agent.AgentError` during a run: ``abort()`` and
        ``wait_for_idle()`` first.
        """
        state = self._state
        state.output = None
        if state.is_streaming:
            raise AgentError("Agent is processing: call abort() and wait_for_idle() before reset()")
        state.messages = []
        state.is_streaming = False
        state.stream_message = None
        state.pending_tool_calls = set()
        state.error = None
        state.usage = RunUsage()
        self.clear_all_queues()

    def _output_mode(self, model: Model) -> OutputMode:
        # Every model that may answer gets the same request, so "auto" picks native only when
        # each of them takes the output_schema option (a fallback without it would ignore it).
        if self.output_mode != "auto" or not self.fallback_models:
            return self.output_mode
        models = [model, *self.fallback_models]
        return "native" if all(supports_native_output(m) for m in models) else "tool"

    def _stream_fn(self) -> StreamFn | None:
        if not self.fallback_models:
            return self.stream_fn
        return fallback_stream_fn(
            self.fallback_models, self.stream_fn, get_api_key=self.get_api_key
        )

    async def _run(
        self,
        messages: list[AgentMessage] | None,
        *,
        skip_initial_steering_poll: bool = False,
        resume_from: Resumption | None = None,
    ) -> RunResult[OutputT]:
        state = self._state
        model = state.model
        if model is None:
            raise AgentError(NO_MODEL)
        transcript, start = state.messages, len(state.messages)
        self._run_end = self._run_paused = None
        controller = AbortController()
        idle: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        state.is_streaming = True
        state.stream_message = None
        state.error = None
        state.output = None
        self._controller = controller
        self._idle = idle
        self._run_task = asyncio.current_task()
        skip = skip_initial_steering_poll

        def get_steering_messages() -> list[AgentMessage]:
            nonlocal skip
            if skip:
                # continue_() already delivered one steering message: keep one-at-a-time order.
                skip = False
                return []
            return self._dequeue_steering()

        context = AgentContext(state.system_prompt, list(state.messages), list(state.tools))
        config = loop_config(self, model, get_steering_messages, resume_from)
        try:
            if messages is None:
                await run_agent_loop_continue(
                    context, config, self._process_event, controller.signal
                )
            else:
                await run_agent_loop(
                    messages, context, config, self._process_event, controller.signal
                )
        except Exception as exc:
            # Listeners kept failing while the run reported a failure: record it here.
            state.error = describe_error(exc)
        finally:
            state.is_streaming = False
            state.stream_message = None
            state.pending_tool_calls = set()
            self._controller = None
            self._idle = None
            self._run_task = None
            idle.set_result(None)
        end, self._run_end = self._run_end, None
        paused, self._run_paused = self._run_paused, None
        if end is not None:
            added = end.messages
        else:  # the run broke off before agent_end: what reached the transcript
            added = transcript[start:] if state.messages is transcript else []
        final = next((m for m in reversed(added) if isinstance(m, AssistantMessage)), None)
        return RunResult(
            messages=list(added),
            final_message=final,
            error=state.error,
            aborted=controller.signal.aborted,
            output=state.output,
            has_output=end is not None and end.has_output,
            state=paused_state(self, paused) if paused is not None else None,
            usage=end.usage if end is not None else None,
        )
