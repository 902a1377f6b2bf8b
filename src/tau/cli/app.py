"""One ``tau`` session: the agent with its model, tools, prompt, approver and session file.

Print, JSON, RPC and interactive mode all run through :class:`App`; they differ only in how
events are shown and where input comes from. The App is also what every front end's commands
act on: a new session, another model or reasoning level (both recorded in the session), a
compaction, the session's numbers, an export, the last answer.

Tool calls that need approval are asked through the front end's :data:`~tau.cli.approvals.Ask`
(:mod:`tau.cli.approvals`); a session whose last run stopped at undecided calls resumes with
them (:attr:`App.paused`, :meth:`App.resume`, :mod:`tau.cli.paused_run`).

Context that fits: before a prompt and after each run the context is measured against the
model's window; past the threshold (80 % by default, ``"compaction"`` in config.json) it is
compacted (:mod:`tau.cli.compaction`). When the provider reports an overflow, the context is
compacted and the turn retried, once. Each automatic compaction is announced by a
:class:`CompactionStart` and a :class:`CompactionEnd` event to ``on_event``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Literal, TypeGuard, cast

from tau.agent import (
    Agent,
    AgentEvent,
    AgentMessage,
    AgentThinkingLevel,
    Decision,
    MessageEndEvent,
    PendingCall,
    RunResult,
    RunState,
    RunUsage,
    UsageLimits,
)
from tau.ai import (
    AbortController,
    AbortSignal,
    AssistantMessage,
    Context,
    Model,
    UserMessage,
    complete_simple,
    is_context_overflow,
)
from tau.ai import Settings as ModelSettings
from tau.ai.adapters import LOCAL_PROVIDER
from tau.cli.app_events import (
    AppEvent,
    CompactionEnd,
    CompactionStart,
    SessionInfo,
    notice_on_stderr,
)
from tau.cli.approvals import Approvals, Ask, describe_call
from tau.cli.argtypes import THINKING_LEVELS
from tau.cli.compaction import (
    SUMMARY_SYSTEM_PROMPT,
    Compacted,
    CompactionError,
    CompactionSettings,
    compact_messages,
    context_tokens,
    convert_to_llm,
    estimate_tokens,
    find_cut,
)
from tau.cli.config import save_config
from tau.cli.errors import UsageError
from tau.cli.extensions import Customizations, ExtensionOptions
from tau.cli.mcp import mcp_tools
from tau.cli.models import (
    check_credentials,
    custom_key,
    endpoint_of,
    model_spec,
    parse_model,
    remembered_spec,
)
from tau.cli.paused_run import (
    PAUSED_RUN,
    decide,
    dismissal,
    paused_run,
    question_data,
    record_data,
)
from tau.cli.prompt import build_system_prompt
from tau.cli.resources import ResourceOptions
from tau.cli.session import Session, SessionError
from tau.cli.tools import MUTATING_TOOLS, Workspace, build_tools
from tau.cli.tools.task import TASK_TOOL, task_tool
from tau.cli.transcript import ExportError, export_conversation, last_answer, last_exchange


@dataclass
class Settings:
    """What the command line asked for.

    ``session`` is the session to resume or start (:meth:`Session.open` on a file); without
    one, a new session is started in ``session_dir``; with neither, nothing is saved. ``/new``
    starts its sessions in ``session_dir`` (in memory when there is none).
    """

    model: Model
    tool_names: Sequence[str]
    workspace: Workspace
    thinking: AgentThinkingLevel = "off"
    system: str | None = None
    session: Session | None = None
    yes: bool = False
    model_settings: ModelSettings = field(default_factory=lambda: cast("ModelSettings", {}))
    """The model call's settings (``--max-tokens``, ``--timeout``, ``-o``…): see
    :func:`tau.cli.run_settings.model_settings`."""
    mcp_file: Path | None = None
    usage_limits: UsageLimits | None = None
    fallback_models: Sequence[Model] = ()
    session_dir: Path | None = None
    compaction: CompactionSettings = field(default_factory=CompactionSettings)
    output_type: Any = None
    """What each run must end on (``--output-schema``): a JSON Schema dict or a pydantic model."""
    resources: ResourceOptions = field(default_factory=ResourceOptions)
    extensions: ExtensionOptions = field(default_factory=ExtensionOptions)
    cycle_models: tuple[str, ...] = ()
    """``--models``: what Ctrl+P cycles through."""


class AppError(RuntimeError):
    """An operation the session cannot do now (a run is going on, nothing to export…)."""


@dataclass
class Queued:
    """The messages an abort took off the queues (see :meth:`App.abort`)."""

    steering: list[AgentMessage]
    follow_ups: list[AgentMessage]

    def __bool__(self) -> bool:
        return bool(self.steering or self.follow_ups)

    def texts(self) -> list[str]:
        """The text of each message, steering first (images are left out)."""
        return [message_text(m) for m in (*self.steering, *self.follow_ups)]


def message_text(message: AgentMessage) -> str:
    """The text of a queued (user) message; images are left out."""
    content = getattr(message, "content", "")
    if isinstance(content, str):
        return content
    return "".join(getattr(block, "text", "") for block in content)


class App:
    """The agent of one ``tau`` invocation, persisting to its session file if it has one."""

    def __init__(
        self,
        settings: Settings,
        ask: Ask | None,
        on_event: Callable[[AppEvent], None] | None = None,
    ) -> None:
        self.settings = settings
        self.on_event = on_event or notice_on_stderr
        self.tools = build_tools(settings.tool_names, settings.workspace)
        for tool in self.tools:
            if tool.name in MUTATING_TOOLS:
                tool.requires_approval = not settings.yes
        self.subagent: Agent[Any] | None = None
        """The sub-agent the ``task`` tool runs (``--tools task``)."""
        if TASK_TOOL in settings.tool_names:
            task, self.subagent = task_tool(settings, convert_to_llm, custom_key)
            self.tools.append(task)
        self.custom = Customizations(  # skills, templates, context files, extensions
            settings.workspace, settings.resources, settings.extensions, lambda: self.session
        )
        self.tools += self.custom.load(builtin_tools=[t.name for t in self.tools])
        # MCP servers (the config's and --mcp FILE's): one tool source, started on first use.
        self.mcp = mcp_tools(
            settings.mcp_file, settings.workspace, [t.name for t in self.tools], yes=settings.yes
        )
        self.approvals = Approvals(ask, self._describe, self._record_question)
        self.session = settings.session or self._new_session_file()
        self.resumed_messages = len(self.session.messages) if self.session else 0
        """How many messages the session held when it was opened."""
        self.agent = Agent(
            model=settings.model,
            system_prompt=self._system_prompt(settings.model),
            thinking_level=settings.thinking,
            tools=self.tools,
            messages=self.session.messages if self.session else (),
            convert_to_llm=convert_to_llm,
            transform_context=self.custom.transform_context,
            get_api_key=custom_key,
            approver=self.approvals,
            before_tool_call=self.custom.before_tool_call,  # the extensions' tool_call handlers
            session_id=self.session.id if self.session else None,
            settings=settings.model_settings,
            tool_sources=[self.mcp] if self.mcp else (),
            usage_limits=settings.usage_limits,
            fallback_models=settings.fallback_models,
            output_type=settings.output_type,
        )
        self.agent.subscribe(self._on_agent_event)
        self.custom.attach(self.agent)
        self.compaction_usage = RunUsage()
        """What summary requests have cost in this process."""
        self._compaction: AbortController | None = None
        self._save_problem: str | None = None
        self.paused = self._find_paused()
        """The run the session stopped in, at calls nobody decided (see :meth:`resume`)."""
        self._record_settings()

    # ----------------------------------------------------------------------- session file

    def _new_session_file(self) -> Session | None:
        directory = self.settings.session_dir
        return Session.create(directory) if directory is not None else None

    def _save(self, write: Callable[[Session], None]) -> None:
        """Write to the session file; a failure is reported once, and the run goes on (what
        could not be written stays pending for the next write)."""
        if self.session is None:
            return
        try:
            write(self.session)
        except SessionError as exc:
            if str(exc) != self._save_problem:
                self._save_problem = str(exc)
                print(f"tau: warning: the session is not being saved: {exc}", file=sys.stderr)
        else:
            self._save_problem = None

    def _record_settings(self) -> None:
        model = self.model
        endpoint = endpoint_of(model)
        self._save(lambda s: s.record_model(model.provider, model.id, endpoint))
        level = self.agent.state.thinking_level
        self._save(lambda s: s.record_thinking_level(level))

    def _describe(self, name: str, args: Any) -> str:
        return self.mcp.describe_call(name, args) or describe_call(name, args)

    def _record_question(self, call: PendingCall) -> None:
        """Before a question: what ``tau -c`` needs if the process dies while it is open."""
        data = question_data(self.agent.state.messages, self.agent.state.usage)
        if data is not None:
            self._save(lambda s: s.record_custom(PAUSED_RUN, data))

    def _find_paused(self) -> RunState | None:
        if self.session is None:
            return None
        spec = self.agent.output_type
        return paused_run(
            self.session.messages,
            self.session.custom.get(PAUSED_RUN),
            output=spec.name if spec is not None else None,
        )

    def _on_agent_event(self, event: AgentEvent) -> None:
        if isinstance(event, MessageEndEvent):
            message = event.message
            self._save(lambda s: s.record_message(message))

    # ----------------------------------------------------------------------- state

    @property
    def model(self) -> Model:
        """The model of the next request."""
        model = self.agent.state.model
        assert model is not None  # the App always gives the agent one
        return model

    @property
    def busy(self) -> bool:
        """Whether a run or a compaction is going on."""
        return self.agent.state.is_streaming or self._compaction is not None

    @property
    def compacting(self) -> bool:
        """Whether a compaction is going on."""
        return self._compaction is not None

    def _system_prompt(self, model: Model) -> str:
        return build_system_prompt(
            self.tools,
            self.settings.workspace.cwd,
            custom=self.settings.system,
            small=model.provider == LOCAL_PROVIDER,
            resources=self.custom.resources,
        )

    def reload(self) -> Customizations:
        """``/reload``: extensions, skills, templates and context files, found again."""
        self._idle("reload")
        builtin = [t for t in self.tools if t.name in self.custom.builtin_tools]
        self.tools = [*builtin, *self.custom.load()]
        self.agent.set_tools(self.tools)
        self.agent.set_system_prompt(self._system_prompt(self.model))
        return self.custom

    def _idle(self, what: str) -> None:
        if self.busy:
            raise AppError(f"cannot {what} while the agent is working (wait, or abort it first)")

    def context_tokens(self) -> int:
        """The current context's size in tokens (reported where known, else estimated)."""
        return context_tokens(self.agent.state.messages, self.agent.state.system_prompt)

    def resume_notice(self) -> str | None:
        """``resumed 12 messages · provider/id`` when a session with messages was opened."""
        if not self.resumed_messages:
            return None
        return f"resumed {self.resumed_messages} messages · {model_spec(self.model)}"

    def last_exchange(self) -> str | None:
        """The newest prompt and its answer, shortened (for a resumed session)."""
        return last_exchange(self.agent.state.messages)

    def last_answer(self) -> str | None:
        """The text of the newest answer (what ``/copy`` copies)."""
        return last_answer(self.agent.state.messages)

    # ----------------------------------------------------------------------- operations

    def new_session(self) -> Session | None:
        """Start a new, empty session (saved in ``session_dir``, if there is one)."""
        self._idle("start a new session")
        self.session = self._new_session_file()
        self.resumed_messages = 0
        self.paused = None
        self.agent.reset()
        self.agent.session_id = self.session.id if self.session else None
        self._record_settings()
        return self.session

    def switch_model(self, spec: str) -> Model:
        """Use the model ``spec`` names from the next request on (recorded in the session).

        Raises :class:`~tau.cli.errors.UsageError` for an unknown model and
        :class:`~tau.cli.models.ModelChoiceError` for a missing key.
        """
        model = parse_model(spec)
        check_credentials(model)
        self.agent.set_model(model)
        self.agent.set_system_prompt(self._system_prompt(model))
        if self.subagent is not None:  # the sub-agent works on the session's model
            self.subagent.set_model(model)
        self._record_settings()  # remembered as the default once a run with it succeeds
        return model

    def set_thinking(self, level: str) -> None:
        """Use reasoning ``level`` from the next request on (recorded in the session)."""
        if not _is_thinking_level(level):
            raise UsageError(
                f"unknown thinking level {level!r} (one of {', '.join(THINKING_LEVELS)})"
            )
        self.agent.set_thinking_level(level)
        if self.subagent is not None:
            self.subagent.set_thinking_level(level)
        self._record_settings()

    def session_info(self) -> SessionInfo:
        """The session's file, message counts, context size, tokens and cost."""
        history = self.session.history if self.session else self.agent.state.messages
        roles = [getattr(m, "role", None) for m in history]
        usage = RunUsage()
        if self.session is not None:
            usage += self.session.usage
        else:
            for message in self.agent.state.messages:
                if isinstance(message, AssistantMessage):
                    usage.add_message(message)
        usage += self.compaction_usage
        return SessionInfo(
            path=self.session.path if self.session else None,
            saved=bool(self.session and self.session.on_disk),
            session_id=self.session.id if self.session else None,
            model=model_spec(self.model),
            thinking=self.agent.state.thinking_level,
            user_messages=roles.count("user"),
            assistant_messages=roles.count("assistant"),
            tool_results=roles.count("toolResult"),
            context_messages=len(self.agent.state.messages),
            context_tokens=self.context_tokens(),
            context_window=self.model.context_window,
            usage=usage,
        )

    def export(self, target: str | Path | None = None) -> Path:
        """Write the whole conversation (compacted parts included) to ``target``: Markdown for
        a ``.md`` name, else HTML; the default is ``tau-<id>.html`` in the working directory."""
        messages = self.session.history if self.session else self.agent.state.messages
        if not messages:
            raise AppError("nothing to export yet")
        short = (self.session.id if self.session else "session")[:8]
        title = f"tau session {short} · {model_spec(self.model)}"
        try:
            return export_conversation(messages, target, self.settings.workspace.cwd, short, title)
        except ExportError as exc:
            raise AppError(str(exc)) from None

    # ----------------------------------------------------------------------- compaction

    async def _summarise(self, prompt: str, max_tokens: int, signal: AbortSignal) -> str:
        model = self.model
        options: dict[str, Any] = {}
        timeout = self.settings.model_settings.get("timeout")
        if timeout is not None:
            options["timeout"] = timeout
        key = custom_key(model.provider)
        if key:
            options["api_key"] = key
        message = await complete_simple(
            model,
            Context([UserMessage(prompt)], system_prompt=SUMMARY_SYSTEM_PROMPT),
            max_tokens=max_tokens,
            signal=signal,
            **options,
        )
        self.compaction_usage.add_message(message)
        if message.stop_reason == "aborted" or signal.aborted:
            raise CompactionError("aborted")
        if message.stop_reason == "error":
            raise CompactionError(f"the summary request failed: {message.error_message}")
        if message.stop_reason == "length":
            # A summary cut mid-sentence (often a repetition loop): never accepted.
            raise CompactionError(
                f"the summary was cut at its limit of {max_tokens:,} tokens; the context is "
                "left as it was"
            )
        return message.text

    async def compact(self, instructions: str | None = None) -> Compacted:
        """Summarise all but the recent turns now (``/compact``); raises
        :class:`~tau.cli.compaction.CompactionError` or :class:`AppError`."""
        self._idle("compact")
        return await self._compact(instructions)

    async def _compact(self, instructions: str | None) -> Compacted:
        controller = AbortController()
        self._compaction = controller
        messages = list(self.agent.state.messages)
        try:
            result = await compact_messages(
                messages,
                self.model,
                self.settings.compaction,
                lambda prompt, tokens: self._summarise(prompt, tokens, controller.signal),
                system_prompt=self.agent.state.system_prompt,
                instructions=instructions,
            )
        finally:
            self._compaction = None
        self.agent.replace_messages(result.messages)
        kept = result.kept[0] if result.kept else None
        if self.session is not None:
            # The session's index of the first kept message (its lists run parallel to the
            # agent's, but an identity search cannot be misled).
            index = next(
                (i for i, m in enumerate(self.session.messages) if m is kept), len(messages)
            )
            self._save(lambda s: s.record_compaction(result.summary, index, result.tokens_before))
        return result

    async def _auto_compact(
        self, reason: Literal["threshold", "overflow"], *, will_retry: bool
    ) -> bool:
        self.on_event(CompactionStart(reason, self.context_tokens()))
        try:
            result = await self._compact(None)
        except CompactionError as exc:
            aborted = str(exc) == "aborted"
            self.on_event(CompactionEnd(reason, None, aborted=aborted, error=str(exc)))
            return False
        self.on_event(CompactionEnd(reason, result, will_retry=will_retry))
        return True

    def _over_threshold(self, extra_tokens: int = 0) -> bool:
        messages = self.agent.state.messages
        settings = self.settings.compaction
        if not settings.over_threshold(self.context_tokens() + extra_tokens, self.model):
            return False
        return find_cut(messages, settings.keep_tokens(self.model)) is not None

    # ----------------------------------------------------------------------- runs

    async def run(self, text: str | UserMessage) -> RunResult:
        """One prompt (text, or a message with attachments), until the agent is idle,
        compacting the context when it must."""
        message = UserMessage(text) if isinstance(text, str) else text
        tokens, window = estimate_tokens(message), self.model.context_window
        if window and tokens > window:
            # No compaction can make room for the prompt itself: fail before any call.
            return RunResult(
                messages=[],
                final_message=None,
                error=f"the prompt is about {tokens:,} tokens, more than the {window:,}-token "
                f"context window of {model_spec(self.model)}: use a model with a larger window "
                "(-m), or attach less",
            )
        if self.paused is not None:
            self._dismiss_paused()
        if self._over_threshold(tokens):
            await self._auto_compact("threshold", will_retry=False)
        result = await self._after_run(await self.agent.prompt(text))
        # Only a model that answered becomes the default: one that failed (a fake key, a server
        # down) would make every later run fail too.
        remembered = remembered_spec(self.model)
        if remembered is not None and result.stop_reason not in ("error", "aborted"):
            save_config({"model": remembered})
        return result

    def _dismiss_paused(self) -> None:
        """Close the paused calls with error results: a new prompt was sent instead."""
        assert self.paused is not None
        results = dismissal(self.paused)
        self.paused = None
        self.agent.replace_messages([*self.agent.state.messages, *results])
        for message in results:
            self._save(partial(Session.record_message, message=message))

    async def resume_paused(self) -> RunResult | None:
        """Ask about each call of the paused run (:attr:`paused`) that needs a decision, then
        resume it; None when an answer left it pending (the run stays paused)."""
        state = self.paused
        if state is None:
            raise AppError("no run is waiting for a decision")
        tools = self.agent.state.tools
        decisions = await decide(state, self.approvals, tools, yes=self.settings.yes)
        return None if decisions is None else await self.resume(decisions)

    async def resume(self, decisions: Mapping[str, Decision]) -> RunResult:
        """Continue the paused run (:attr:`paused`) with a decision per pending call (a bad
        one is a ``ValueError`` naming the call, before anything runs)."""
        state = self.paused
        if state is None:
            raise AppError("no run is waiting for a decision")
        self._idle("resume")
        result = await self.agent.resume(state, decisions)
        self.paused = None
        return await self._after_run(result)

    async def _after_run(self, result: RunResult) -> RunResult:
        if result.state is not None:  # paused: kept in the session for `tau -c`
            state = self.paused = result.state
            self._save(lambda s: s.record_custom(PAUSED_RUN, record_data(state)))
            return result
        final = result.final_message
        if result.aborted or final is None:
            return result
        if final.stop_reason == "error" and is_context_overflow(final):
            if not self.settings.compaction.enabled:
                return result
            if not await self._auto_compact("overflow", will_retry=True):
                return result
            retry = await self.agent.continue_()
            return RunResult(
                messages=[*result.messages, *retry.messages],
                final_message=retry.final_message,
                error=retry.error,
                aborted=retry.aborted,
                output=retry.output,
                has_output=retry.has_output,
            )
        if self._over_threshold():
            await self._auto_compact("threshold", will_retry=False)
        return result

    def abort(self, reason: str | None = None) -> Queued:
        """Abort the run or compaction going on (no-op when idle), and take the queued steering
        and follow-up messages off the agent's queues: they are never sent with the next
        prompt. The caller gives them back (the editor) or reports them dropped (RPC)."""
        agent = self.agent
        queued = Queued(list(agent.steering_queue), list(agent.follow_up_queue))
        agent.clear_all_queues()
        self.approvals.cancel()
        agent.abort(reason)
        if self._compaction is not None:
            self._compaction.abort(reason)
        return queued

    async def aclose(self) -> None:
        """Stop what the session started (MCP servers) and tell the extensions."""
        await self.custom.shutdown(self.session.path if self.session else None)
        await self.mcp.aclose()


def _is_thinking_level(level: str) -> TypeGuard[AgentThinkingLevel]:
    return level in THINKING_LEVELS
