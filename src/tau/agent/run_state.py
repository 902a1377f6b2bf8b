""":class:`RunState`: everything a paused run needs to go on, as versioned JSON.

A paused run (see :mod:`tau.agent.approval`) returns ``result.state``. It holds the
transcript (tau's pi-compatible message JSON), the calls waiting for a decision (with the
paused runs of sub-agents nested in them), the run's usage and turn counters (so
``UsageLimits`` keep counting), the steering and follow-up messages that were queued, the
agent's name and the name of its output type.

The JSON form (``state.to_json()``), version 1::

    {"type": "tau.run_state", "version": 1, "agent": "tau", "output": "City" | null,
     "messages": [<message>...],
     "pending": [{"id": "call_1", "toolName": "delete", "arguments": {...},
                  "kind": "approval" | "external"}
                 | {"id": ..., "toolName": ..., "arguments": ..., "kind": "subagent",
                    "state": <a nested run state>}],
     "usage": {"turns": 2, "requests": 2, "toolCalls": 1, "inputTokens": ..., "cost": ...},
     "steering": [<message>...], "followUps": [<message>...],
     "traceLink": {"traceId": "<32 hex>", "spanId": "<16 hex>"} | null}

Stability: fields are only ever added; :meth:`RunState.from_json` reads every earlier version
and refuses a newer one with a clear error.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from tau.agent.approval import Approve, Decision, Deny, PendingCall, ToolResult
from tau.agent.messages import AgentMessage, dump_agent_message, load_agent_message
from tau.agent.tools import AgentTool
from tau.agent.usage import RunUsage
from tau.ai import AssistantMessage, SerializationError, ToolCall, ToolResultMessage

__all__ = [
    "RUN_STATE_VERSION",
    "NestedPause",
    "PausedCall",
    "Resumption",
    "RunState",
    "ToolPaused",
    "flatten",
]

RUN_STATE_VERSION = 1
"""The version :meth:`RunState.to_json` writes."""

_TYPE = "tau.run_state"


@dataclass(frozen=True, slots=True)
class NestedPause:
    """A sub-agent tool call whose own run paused: its state, resumed as part of this one."""

    id: str
    tool_name: str
    arguments: dict[str, Any]
    state: RunState


PausedCall: TypeAlias = PendingCall | NestedPause
"""What a paused run waits on, per call of its last turn."""


class ToolPaused(Exception):
    """Raised by a tool whose work paused (a sub-agent waiting for a decision): the call
    becomes pending in the calling run, with ``state`` resumed when the run is."""

    def __init__(self, state: RunState) -> None:
        super().__init__("the tool's run paused")
        self.state = state


def flatten(paused: list[PausedCall]) -> list[PendingCall]:
    """The pending calls a person decides on, nested sub-agent calls included."""
    out: list[PendingCall] = []
    for entry in paused:
        if isinstance(entry, PendingCall):
            out.append(entry)
        else:
            for inner in entry.state.pending:
                out.append(
                    PendingCall(
                        inner.id,
                        inner.tool_name,
                        inner.arguments,
                        inner.kind,
                        (entry.id, *inner.path),
                    )
                )
    return out


@dataclass(slots=True)
class Resumption:
    """What a resumed run starts with: the paused turn's message and the calls to finish."""

    message: AssistantMessage
    calls: list[ToolCall]
    """The pending calls of ``message`` in call order (approved edits applied)."""
    decisions: dict[str, Decision]
    nested: dict[str, tuple[RunState, dict[str, Decision]]] = field(default_factory=dict)
    earlier_results: list[ToolResultMessage] = field(default_factory=list)
    """Results the paused turn already had (its calls that needed nothing)."""
    trace_link: dict[str, str] | None = None
    """The paused run's span (see :class:`~tau.agent.AgentPausedEvent`)."""


@dataclass(slots=True, kw_only=True)
class RunState:
    """A paused run: resume it with :meth:`tau.agent.Agent.resume` (any process, an agent
    built the same way). ``pending`` lists the calls that need a decision."""

    messages: list[AgentMessage]
    paused: list[PausedCall]
    usage: RunUsage = field(default_factory=RunUsage)
    agent: str = "tau"
    output: str | None = None
    steering: list[AgentMessage] = field(default_factory=list)
    follow_ups: list[AgentMessage] = field(default_factory=list)
    trace_link: dict[str, str] | None = None
    """The paused run's span, when it was traced: the resumed run's span links to it."""
    version: int = RUN_STATE_VERSION

    @property
    def pending(self) -> list[PendingCall]:
        """The calls waiting for a decision, those of paused sub-agents included."""
        return flatten(self.paused)

    # ----------------------------------------------------------------------- JSON

    def dump(self) -> dict[str, Any]:
        """The JSON-compatible form (see the module docstring)."""
        return {
            "type": _TYPE,
            "version": RUN_STATE_VERSION,
            "agent": self.agent,
            "output": self.output,
            "messages": [dump_agent_message(m) for m in self.messages],
            "pending": [_dump_paused(p) for p in self.paused],
            "usage": self.usage.dump(),
            "steering": [dump_agent_message(m) for m in self.steering],
            "followUps": [dump_agent_message(m) for m in self.follow_ups],
            "traceLink": self.trace_link,
        }

    def to_json(self) -> str:
        """The state as JSON text."""
        from pydantic_core import to_json

        return to_json(self.dump()).decode()

    @classmethod
    def load(cls, data: Any, path: str = "state") -> RunState:
        """A state from :meth:`dump` output; raises ``SerializationError`` naming the field."""
        if not isinstance(data, Mapping) or data.get("type") != _TYPE:
            raise SerializationError(f'{path}: not a tau run state (no "type": "{_TYPE}")')
        version = data.get("version")
        if not isinstance(version, int) or isinstance(version, bool) or version < 1:
            raise SerializationError(
                f"{path}.version: expected a positive integer, got {version!r}"
            )
        if version > RUN_STATE_VERSION:
            raise SerializationError(
                f"{path}: run state version {version} was written by a newer tau "
                f"(this one reads up to {RUN_STATE_VERSION}): upgrade tau to resume it"
            )
        return cls(
            messages=_messages(data.get("messages"), f"{path}.messages"),
            paused=[
                _load_paused(item, f"{path}.pending[{i}]")
                for i, item in enumerate(_list(data.get("pending"), f"{path}.pending"))
            ],
            usage=_load_usage(data.get("usage", {}), f"{path}.usage"),
            agent=_str(data.get("agent", "tau"), f"{path}.agent"),
            output=None if data.get("output") is None else _str(data["output"], f"{path}.output"),
            steering=_messages(data.get("steering", []), f"{path}.steering"),
            follow_ups=_messages(data.get("followUps", []), f"{path}.followUps"),
            trace_link=_load_link(data.get("traceLink"), f"{path}.traceLink"),
            version=version,
        )

    @classmethod
    def from_json(cls, text: str | bytes) -> RunState:
        """A state from :meth:`to_json` text (this version or an earlier one)."""
        import jiter

        try:
            data = jiter.from_json(text.encode() if isinstance(text, str) else text)
        except ValueError as exc:
            raise SerializationError(f"state: not JSON: {exc}") from None
        return cls.load(data)


def _dump_paused(entry: PausedCall) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": entry.id,
        "toolName": entry.tool_name,
        "arguments": entry.arguments,
    }
    if isinstance(entry, PendingCall):
        out["kind"] = entry.kind
    else:
        out["kind"] = "subagent"
        out["state"] = entry.state.dump()
    return out


def _load_paused(data: Any, path: str) -> PausedCall:
    if not isinstance(data, Mapping):
        raise SerializationError(f"{path}: expected an object")
    call_id = _str(data.get("id"), f"{path}.id")
    name = _str(data.get("toolName"), f"{path}.toolName")
    arguments = data.get("arguments")
    if not isinstance(arguments, dict):
        raise SerializationError(f"{path}.arguments: expected an object")
    kind = data.get("kind")
    if kind == "subagent":
        return NestedPause(
            call_id, name, arguments, RunState.load(data.get("state"), f"{path}.state")
        )
    if kind not in ("approval", "external"):
        raise SerializationError(
            f"{path}.kind: expected approval, external or subagent, got {kind!r}"
        )
    return PendingCall(call_id, name, arguments, kind)


def _load_link(value: Any, path: str) -> dict[str, str] | None:
    if value is None:
        return None
    if not isinstance(value, Mapping) or not all(
        isinstance(value.get(key), str) for key in ("traceId", "spanId")
    ):
        raise SerializationError(f'{path}: expected {{"traceId": ..., "spanId": ...}}')
    return {"traceId": value["traceId"], "spanId": value["spanId"]}


def _list(value: Any, path: str) -> list[Any]:
    if not isinstance(value, list):
        raise SerializationError(f"{path}: expected a list")
    return value


def _str(value: Any, path: str) -> str:
    if not isinstance(value, str):
        raise SerializationError(f"{path}: expected a string, got {type(value).__name__}")
    return value


def _messages(value: Any, path: str) -> list[AgentMessage]:
    return [load_agent_message(m, f"{path}[{i}]") for i, m in enumerate(_list(value, path))]


def _load_usage(data: Any, path: str) -> RunUsage:
    if not isinstance(data, Mapping):
        raise SerializationError(f"{path}: expected an object")
    try:
        return RunUsage.load(dict(data))
    except ValueError as exc:
        raise SerializationError(f"{path}.{exc}") from None


# --------------------------------------------------------------------------- resuming


def _name(call: PendingCall | PausedCall) -> str:
    return f"call {call.id!r} ({call.tool_name})"


def check_decision(call: PendingCall, decision: object, tools: Sequence[AgentTool]) -> None:
    """Raise ``ValueError`` naming ``call`` if ``decision`` does not fit it."""
    if not isinstance(decision, Approve | Deny | ToolResult):
        raise ValueError(
            f"the decision for {_name(call)} must be Approve(), Deny(...) or ToolResult(...), "
            f"not {type(decision).__name__}"
        )
    if call.kind == "approval" and isinstance(decision, ToolResult):
        raise ValueError(f"{_name(call)} waits for approval: decide it with Approve() or Deny()")
    if call.kind == "external" and isinstance(decision, Approve):
        raise ValueError(
            f"{_name(call)} is an external tool: give its result with ToolResult(...) or Deny()"
        )
    if isinstance(decision, Deny) and not isinstance(decision.reason, str):
        raise ValueError(f"the Deny reason for {_name(call)} must be a string")
    if isinstance(decision, Approve) and decision.arguments is not None:
        if not isinstance(decision.arguments, dict):
            raise ValueError(f"the edited arguments for {_name(call)} must be a dict")
        tool = next((t for t in tools if t.name == call.tool_name), None)
        if tool is not None:
            from tau.ai import validate_tool_arguments

            try:
                validate_tool_arguments(tool, ToolCall(call.id, call.tool_name, decision.arguments))
            except Exception as exc:
                raise ValueError(
                    f"the edited arguments for {_name(call)} are invalid: {exc}"
                ) from None


def split_decisions(
    state: RunState, decisions: Mapping[str, Decision], tools: Sequence[AgentTool]
) -> tuple[dict[str, Decision], dict[str, tuple[RunState, dict[str, Decision]]]]:
    """Check ``decisions`` against ``state.pending``; split them into the run's own and the
    nested sub-agents'. Raises ``ValueError`` naming the call for a missing, extra or
    ill-typed decision."""
    if not isinstance(decisions, Mapping):
        raise ValueError(
            f"decisions must be a mapping of call id to decision, not {type(decisions).__name__}"
        )
    pending = state.pending
    known = {call.id for call in pending}
    extra = [key for key in decisions if key not in known]
    if extra:
        waiting = ", ".join(repr(c.id) for c in pending) or "none"
        raise ValueError(f"call {extra[0]!r} is not pending in this state (pending: {waiting})")
    for call in pending:
        if call.id not in decisions:
            raise ValueError(f"no decision for {_name(call)}: every pending call needs one")
        if not call.path:
            check_decision(call, decisions[call.id], tools)
        else:
            check_decision(call, decisions[call.id], ())
    own: dict[str, Decision] = {}
    nested: dict[str, tuple[RunState, dict[str, Decision]]] = {}
    for entry in state.paused:
        if isinstance(entry, PendingCall):
            own[entry.id] = decisions[entry.id]
        else:
            inner = {call.id: decisions[call.id] for call in entry.state.pending}
            nested[entry.id] = (entry.state, inner)
    return own, nested


def plan_resume(
    state: RunState, decisions: Mapping[str, Decision], tools: Sequence[AgentTool]
) -> Resumption:
    """The :class:`Resumption` of ``state`` with ``decisions`` (checked first)."""
    own, nested = split_decisions(state, decisions, tools)
    waiting = {entry.id for entry in state.paused}
    index = next(
        (
            i
            for i in range(len(state.messages) - 1, -1, -1)
            if isinstance(state.messages[i], AssistantMessage)
        ),
        None,
    )
    message = state.messages[index] if index is not None else None
    if (
        index is None
        or not isinstance(message, AssistantMessage)
        or not waiting <= {c.id for c in message.tool_calls}
    ):
        raise ValueError(
            "the state's transcript does not end on the turn its pending calls are from"
        )
    calls: list[ToolCall] = []
    for call in message.tool_calls:
        if call.id not in waiting:
            continue
        decision = own.get(call.id)
        if isinstance(decision, Approve) and decision.arguments is not None:
            call = ToolCall(call.id, call.name, dict(decision.arguments), call.thought_signature)
        calls.append(call)
    earlier = [m for m in state.messages[index + 1 :] if isinstance(m, ToolResultMessage)]
    return Resumption(message, calls, own, nested, earlier, state.trace_link)
