"""AG-UI (the protocol of CopilotKit pages), on the ``ag-ui-protocol`` package's types.

:class:`AGUIEncoder` turns one agent run's events into AG-UI events:

=========================  ================================================================
tau event                  AG-UI events
=========================  ================================================================
``agent_start``            ``RUN_STARTED``
``turn_start``/``_end``    ``STEP_STARTED`` / ``STEP_FINISHED`` (``turn <n>``)
text blocks                ``TEXT_MESSAGE_START/_CONTENT/_END``
thinking blocks            ``REASONING_START``, ``REASONING_MESSAGE_START/_CONTENT/_END``,
                           ``REASONING_END`` (AG-UI 1.0's names for ``THINKING_*``)
tool calls                 ``TOOL_CALL_START/_ARGS/_END``; results ``TOOL_CALL_RESULT``
``output_update``          ``STATE_SNAPSHOT`` ``{"output": ...}`` once, then ``STATE_DELTA``
                           (a JSON Patch replacing ``/output``)
``agent_end``              ``RUN_FINISHED`` (``result``: the output; ``outcome``: success,
                           ``interrupt`` with one interrupt per call waiting for approval,
                           or ``cancelled``), or ``RUN_ERROR`` when the run failed
=========================  ================================================================

The page's own tools (``RunAgentInput.tools``) become tau external tools: a run that calls
one finishes with the call pending, the page runs it and starts the next run with a
``tool`` message carrying its result, which resumes the paused run. An approval is answered
by ``RunAgentInput.resume``: ``{"interruptId": <call id>, "status": "resolved", "payload":
{"approved": true}}`` (or ``"cancelled"``, or ``approved: false``: denied).
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

try:
    from ag_ui import core as ag
    from ag_ui.core import (
        BaseEvent,
        Interrupt,
        ReasoningEndEvent,
        ReasoningMessageContentEvent,
        ReasoningMessageEndEvent,
        ReasoningMessageStartEvent,
        ReasoningStartEvent,
        RunAgentInput,
        RunErrorEvent,
        RunFinishedCancelledOutcome,
        RunFinishedEvent,
        RunFinishedInterruptOutcome,
        RunFinishedSuccessOutcome,
        RunStartedEvent,
        StateDeltaEvent,
        StateSnapshotEvent,
        StepFinishedEvent,
        StepStartedEvent,
        TextMessageContentEvent,
        TextMessageEndEvent,
        TextMessageStartEvent,
        ToolCallArgsEvent,
        ToolCallResultEvent,
    )
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError("tau.ui needs the [web] extra: pip install 'tau[web]'") from exc
from pydantic import ValidationError
from pydantic_core import to_jsonable_python

from tau.agent import (
    Agent,
    AgentEndEvent,
    AgentEvent,
    AgentPausedEvent,
    AgentStartEvent,
    AgentTool,
    Approve,
    Decision,
    Deny,
    MessageEndEvent,
    MessageUpdateEvent,
    OutputUpdateEvent,
    RunResult,
    ToolExecutionEndEvent,
    ToolResult,
    TurnEndEvent,
    TurnStartEvent,
)
from tau.ai import (
    AssistantMessage,
    ImageContent,
    TextContent,
    TextDeltaEvent,
    TextEndEvent,
    TextStartEvent,
    ThinkingDeltaEvent,
    ThinkingEndEvent,
    ThinkingStartEvent,
    ToolCall,
    ToolCallDeltaEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
    UserContent,
    UserMessage,
)
from tau.proxy.sse import HTTPError
from tau.ui.parts import Approval, UIMessageError, tool_output
from tau.ui.protocols import PreparedRun, Protocol, not_paused, paused
from tau.ui.store import Chat

__all__ = ["AGUIEncoder", "ag_ui_protocol"]


class AGUIEncoder:
    """The AG-UI events of one run (see the module docstring), for ``thread_id`` and
    ``run_id``; ``is_aborted`` as for :class:`~tau.ui.AISDKEncoder`."""

    def __init__(
        self, thread_id: str, run_id: str, *, is_aborted: Callable[[], bool] | None = None
    ) -> None:
        self.thread_id = thread_id
        self.run_id = run_id
        self._is_aborted = is_aborted
        self._turn = 0
        self._open: dict[int, str] = {}  # content index -> message or tool call id
        self._state_sent = False
        self._interrupts: list[Interrupt] = []

    def encode(self, event: AgentEvent) -> list[BaseEvent]:
        """The AG-UI events of ``event``."""
        if isinstance(event, MessageUpdateEvent):
            return self._update(event)
        if isinstance(event, TurnStartEvent):
            self._turn += 1
            self._open.clear()
            return [StepStartedEvent(step_name=f"turn {self._turn}")]
        if isinstance(event, TurnEndEvent):
            return [StepFinishedEvent(step_name=f"turn {self._turn}")]
        if isinstance(event, MessageEndEvent) and isinstance(event.message, AssistantMessage):
            return self._close_open()
        if isinstance(event, ToolExecutionEndEvent):
            if event.is_error:
                text = "".join(b.text for b in event.result.content if isinstance(b, TextContent))
            else:
                output = tool_output(event.result.content, event.result.details)
                text = output if isinstance(output, str) else _dumps(output)
            return [
                ToolCallResultEvent(
                    message_id=f"result-{event.tool_call_id}",
                    tool_call_id=event.tool_call_id,
                    content=text,
                    role="tool",
                )
            ]
        if isinstance(event, OutputUpdateEvent):
            return [self._state(event.output)]
        if isinstance(event, AgentStartEvent):
            return [RunStartedEvent(thread_id=self.thread_id, run_id=self.run_id)]
        if isinstance(event, AgentPausedEvent):
            self._interrupts = [
                Interrupt(
                    id=call.id,
                    reason="tool_approval",
                    message=f"Approve the call to {call.tool_name}?",
                    tool_call_id=call.path[0] if call.path else call.id,
                )
                for call in event.pending
                if call.kind == "approval"
            ]
            return []
        if isinstance(event, AgentEndEvent):
            return self._end(event)
        return []

    def _state(self, output: Any) -> BaseEvent:
        value = to_jsonable_python(output, fallback=repr)
        if not self._state_sent:
            self._state_sent = True
            return StateSnapshotEvent(snapshot={"output": value})
        return StateDeltaEvent.model_validate(
            {"delta": [{"op": "replace", "path": "/output", "value": value}]}
        )

    def _close_open(self) -> list[BaseEvent]:
        out: list[BaseEvent] = []
        for key in self._open.values():
            if key.startswith("text-"):
                out.append(TextMessageEndEvent(message_id=key))
            elif key.startswith("reasoning-"):
                out.extend(_reasoning_end(key))
        self._open.clear()
        return out

    def _update(self, event: MessageUpdateEvent) -> list[BaseEvent]:
        opened = self._open
        match event.assistant_message_event:
            case TextDeltaEvent(content_index=index, delta=delta):
                return [TextMessageContentEvent(message_id=opened[index], delta=delta)]
            case ThinkingDeltaEvent(content_index=index, delta=delta):
                return [ReasoningMessageContentEvent(message_id=opened[index], delta=delta)]
            case ToolCallDeltaEvent(content_index=index, delta=delta):
                return [ToolCallArgsEvent(tool_call_id=opened[index], delta=delta)]
            case TextStartEvent(content_index=index):
                key = opened[index] = f"text-{self.run_id}-{self._turn}-{index}"
                return [TextMessageStartEvent(message_id=key, role="assistant")]
            case ThinkingStartEvent(content_index=index):
                key = opened[index] = f"reasoning-{self.run_id}-{self._turn}-{index}"
                return [
                    ReasoningStartEvent(message_id=key),
                    ReasoningMessageStartEvent(message_id=key),
                ]
            case ToolCallStartEvent(content_index=index):
                call = event.message.content[index]
                if not isinstance(call, ToolCall):
                    return []
                opened[index] = call.id
                return [ag.ToolCallStartEvent(tool_call_id=call.id, tool_call_name=call.name)]
            case TextEndEvent(content_index=index):
                return [TextMessageEndEvent(message_id=opened.pop(index))]
            case ThinkingEndEvent(content_index=index):
                return _reasoning_end(opened.pop(index))
            case ToolCallEndEvent(content_index=index, tool_call=call):
                opened.pop(index, None)
                return [ag.ToolCallEndEvent(tool_call_id=call.id)]
        return []

    def _end(self, event: AgentEndEvent) -> list[BaseEvent]:
        last = next((m for m in reversed(event.messages) if isinstance(m, AssistantMessage)), None)
        if last is not None and last.stop_reason == "error":
            return [RunErrorEvent(message=last.error_message or "error", code="error")]
        result = to_jsonable_python(event.output, fallback=repr) if event.has_output else None
        if (last is not None and last.stop_reason == "aborted") or (
            self._is_aborted is not None and self._is_aborted()
        ):
            outcome: Any = RunFinishedCancelledOutcome()
        elif self._interrupts:
            outcome = RunFinishedInterruptOutcome(interrupts=self._interrupts)
        else:
            outcome = RunFinishedSuccessOutcome()
        return [
            RunFinishedEvent(
                thread_id=self.thread_id, run_id=self.run_id, result=result, outcome=outcome
            )
        ]


def _reasoning_end(key: str) -> list[BaseEvent]:
    return [ReasoningMessageEndEvent(message_id=key), ReasoningEndEvent(message_id=key)]


def _dumps(value: Any) -> str:
    from pydantic_core import to_json

    return to_json(value, fallback=repr).decode()


def _frame(event: BaseEvent) -> bytes:
    return b"data: " + event.model_dump_json(by_alias=True, exclude_none=True).encode() + b"\n\n"


# --------------------------------------------------------------------------- requests


def _user_message(message: Any, path: str) -> UserMessage:
    content = message.content
    if isinstance(content, str):
        return UserMessage([TextContent(content)])
    blocks: list[UserContent] = []
    for i, part in enumerate(content):
        if part.type == "text":
            blocks.append(TextContent(part.text))
        elif part.type == "image" and part.source.type == "data":
            blocks.append(ImageContent(part.source.value, part.source.mime_type))
        else:
            raise UIMessageError(
                f"{path}.content[{i}]: only text and inline (data) images are accepted"
            )
    return UserMessage(blocks)


def _decisions(chat: Chat, data: RunAgentInput) -> tuple[dict[str, Decision], dict[str, Approval]]:
    assert chat.state is not None
    answers: dict[str, Approval] = {}
    resume = {entry.interrupt_id: entry for entry in data.resume or ()}
    outputs = {m.tool_call_id: m for m in data.messages if m.role == "tool"}
    decisions: dict[str, Decision] = {}
    for call in chat.state.pending:
        entry = resume.get(call.id)
        if entry is not None:
            payload = entry.payload if isinstance(entry.payload, Mapping) else {}
            approved = entry.status == "resolved" and payload.get("approved", True) is True
            reason = payload.get("reason")
            answers[call.id] = {"approved": approved}
            if approved and call.kind == "approval":
                decisions[call.id] = Approve()
            else:
                decisions[call.id] = Deny(reason) if isinstance(reason, str) else Deny()
            continue
        message = outputs.get(call.id)
        if message is not None and call.kind == "external":
            content = message.content
            text = (
                content if isinstance(content, str) else _dumps([p.model_dump() for p in content])
            )
            decisions[call.id] = (
                ToolResult(message.error, is_error=True) if message.error else ToolResult(text)
            )
            continue
        need = "a resume entry" if call.kind == "approval" else "a tool message with its result"
        raise UIMessageError(f"call {call.id!r} ({call.tool_name}) needs {need}")
    return decisions, answers


_TOOL_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
_MAX_PAGE_TOOLS = 128


def _page_tools(data: RunAgentInput) -> list[Any]:
    """The page's tools, checked: providers take names of ``[A-Za-z0-9_-]{1,64}`` and a JSON
    Schema object as parameters."""
    tools = list(data.tools or ())
    if len(tools) > _MAX_PAGE_TOOLS:
        raise HTTPError(400, f"at most {_MAX_PAGE_TOOLS} tools, not {len(tools)}")
    for i, tool in enumerate(tools):
        if not _TOOL_NAME.fullmatch(tool.name):
            raise HTTPError(400, f"tools[{i}].name must match [A-Za-z0-9_-]{{1,64}}")
        if tool.parameters is not None and not (
            isinstance(tool.parameters, dict) and tool.parameters.get("type", "object") == "object"
        ):
            raise HTTPError(400, f"tools[{i}].parameters must be a JSON Schema object")
    return tools


class _AGUI:
    chat_id_field = "threadId"
    headers: Mapping[str, str] = {"cache-control": "no-cache", "x-accel-buffering": "no"}

    def chat_id(self, body: Mapping[str, Any]) -> Any:
        return body.get("threadId")

    def choices(self, body: Mapping[str, Any]) -> Mapping[str, Any]:
        props = body.get("forwardedProps")
        return props if isinstance(props, Mapping) else {}

    def prepare(self, chat: Chat, agent: Agent[Any], body: Mapping[str, Any]) -> PreparedRun:
        try:
            data = RunAgentInput.model_validate(body)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "body"
            raise HTTPError(400, f"not an AG-UI RunAgentInput: {where}: {first['msg']}") from None
        known = {tool.name for tool in agent.state.tools}
        page_tools = [
            AgentTool(t.name, t.description, t.parameters or None, external=True)
            for t in _page_tools(data)
            if t.name not in known
        ]
        if page_tools:
            agent.set_tools([*agent.state.tools, *page_tools])
        last = data.messages[-1] if data.messages else None
        answers: dict[str, Approval] = {}
        if data.resume or (last is not None and last.role == "tool"):
            state = chat.state
            if state is None:
                raise not_paused(chat)
            decisions, answers = _decisions(chat, data)

            def run(agent: Agent[Any]) -> Awaitable[RunResult[Any]]:
                return agent.resume(state, decisions)

        elif last is not None and last.role == "user":
            user = _user_message(last, f"messages[{len(data.messages) - 1}]")
            if chat.state is not None:
                raise paused(chat)

            def run(agent: Agent[Any]) -> Awaitable[RunResult[Any]]:
                return agent.prompt(user)

        else:
            raise HTTPError(400, "the last message must be a user message, or a tool result")
        encoder = AGUIEncoder(
            data.thread_id,
            data.run_id or uuid.uuid4().hex,
            is_aborted=lambda: agent.state.error is not None,
        )

        def encode(event: AgentEvent) -> list[bytes]:
            return [_frame(e) for e in encoder.encode(event)]

        def failed(text: str) -> list[bytes]:
            return [_frame(RunErrorEvent(message=text, code="error"))]

        return PreparedRun(run, encode, failed, [], answers)


def ag_ui_protocol() -> Protocol:
    """AG-UI's ``RunAgentInput`` request and event stream (see the module docstring)."""
    return _AGUI()
