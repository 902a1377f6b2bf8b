"""Runs that pause for approval or an external tool, and resume: here and in a new interpreter."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from tau.agent import (
    Agent,
    AgentEvent,
    AgentPausedEvent,
    AgentTool,
    Approve,
    Decision,
    Deny,
    PendingCall,
    RunState,
    ToolExecutionStartEvent,
    ToolResult,
    UsageLimits,
    agent_tool,
    event_to_json,
)
from tau.ai import Context, ToolResultMessage, UserMessage
from tau.ai.providers.faux import (
    FauxResponse,
    faux_calls,
    faux_model,
    faux_payloads,
    text,
    tool_call,
)
from tests.factories import without_timestamps

from . import approval_app
from .helpers import check_grammar, kinds, result_text

APP = Path(approval_app.__file__)


def run_app(command: str, stdin: str = "") -> str:
    done = subprocess.run(
        [sys.executable, str(APP), command],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def tool_results(context: Context) -> list[ToolResultMessage]:
    return [m for m in context.messages if isinstance(m, ToolResultMessage)]


@pytest.fixture(autouse=True)
def fresh_log() -> None:
    approval_app.EXECUTED.clear()


# --------------------------------------------------------------------------- pausing


async def test_a_call_needing_approval_pauses_after_the_others_ran() -> None:
    agent = approval_app.build_agent()
    events: list[AgentEvent] = []
    agent.subscribe(events.append)
    result = await agent.prompt("Clean up")

    assert result.status == "paused"
    assert result.state is not None
    assert [(c.id, c.tool_name, c.arguments, c.kind) for c in result.pending] == [
        ("call_delete", "delete", {"path": "build"}, "approval"),
        ("call_lookup", "lookup", {"query": "weather"}, "external"),
    ]
    assert approval_app.EXECUTED == ["note:hello"]  # the call that needs nothing ran
    paused = [e for e in events if isinstance(e, AgentPausedEvent)]
    assert len(paused) == 1 and paused[0].pending == result.pending
    assert kinds(events)[-2:] == ["agent_paused", "agent_end"]
    assert len(faux_calls(agent.state.model)) == 1  # type: ignore[arg-type]
    # The waiting calls are started and not ended: the resumed run ends them.
    waiting = {c.id for c in result.pending}
    started = [e.tool_call_id for e in events if isinstance(e, ToolExecutionStartEvent)]
    assert started == ["call_note", "call_delete", "call_lookup"]
    check_grammar(
        [
            e
            for e in events
            if e.type != "agent_paused"
            and not (isinstance(e, ToolExecutionStartEvent) and e.tool_call_id in waiting)
        ]
    )


async def test_every_decision_kind_reaches_the_model() -> None:
    agent = approval_app.build_agent()
    result = await agent.prompt("Clean up")
    assert result.state is not None
    resumed = await agent.resume(
        result.state,
        {"call_delete": Approve(arguments={"path": "dist"}), "call_lookup": ToolResult("sunny")},
    )
    assert resumed.status == "completed"
    assert approval_app.EXECUTED == ["note:hello", "delete:dist"]
    assert resumed.text == "note=noted hello; delete=deleted dist; lookup=sunny"

    again = await agent.resume(
        result.state,
        {"call_delete": Deny("not today"), "call_lookup": ToolResult("offline", is_error=True)},
    )
    assert again.text == "note=noted hello; delete=error:not today; lookup=error:offline"
    assert approval_app.EXECUTED == ["note:hello", "delete:dist"]  # the denied call never ran


async def test_resuming_one_state_twice_sends_the_same_request() -> None:
    first, second = approval_app.build_agent(), approval_app.build_agent()
    result = await first.prompt("Clean up")
    assert result.state is not None
    text_state = result.state.to_json()
    decisions: dict[str, Decision] = {"call_delete": Approve(), "call_lookup": ToolResult("sunny")}
    await first.resume(RunState.from_json(text_state), decisions)
    await second.resume(RunState.from_json(text_state), decisions)
    await first.resume(result.state, decisions)
    # The same request: messages, tools, options (the results' local timestamps aside,
    # which no provider is sent).
    first_sent = faux_payloads(first.state.model)  # type: ignore[arg-type]
    sent = [without_timestamps(p[-1]) for p in (first_sent, faux_payloads(second.state.model))]  # type: ignore[arg-type]
    assert sent[0] == sent[1]
    assert without_timestamps(first_sent[1]) == sent[0]


async def test_a_live_approver_decides_without_pausing() -> None:
    asked: list[PendingCall] = []

    async def approver(call: PendingCall) -> Approve | Deny:
        asked.append(call)
        return Approve() if call.arguments["path"] == "build" else Deny("no")

    def script(context: Context, options: Mapping[str, Any]) -> FauxResponse:
        if tool_results(context):
            return FauxResponse([text(" ".join(result_text(m) for m in tool_results(context)))])
        return FauxResponse(
            [tool_call("delete", {"path": "build"}), tool_call("delete", {"path": "home"})]
        )

    ran: list[str] = []

    @agent_tool(requires_approval=True)
    def delete(path: str) -> str:
        """Delete."""
        ran.append(path)
        return f"deleted {path}"

    agent = Agent(model=faux_model(script), tools=[delete], approver=approver)
    result = await agent.prompt("go")
    assert result.status == "completed"
    assert result.text == "deleted build no"
    assert ran == ["build"]
    assert [c.arguments for c in asked] == [{"path": "build"}, {"path": "home"}]


async def test_approval_decided_per_call_and_a_none_answer_pauses() -> None:
    async def only_outside_tmp(call: PendingCall) -> bool:
        return not str(call.arguments["path"]).startswith("/tmp")

    def script(context: Context, options: Mapping[str, Any]) -> FauxResponse:
        if tool_results(context):
            return FauxResponse([text("done")])
        return FauxResponse(
            [tool_call("rm", {"path": "/tmp/x"}, id="a"), tool_call("rm", {"path": "/etc"}, id="b")]
        )

    ran: list[str] = []

    @agent_tool(requires_approval=only_outside_tmp)
    def rm(path: str) -> str:
        """Remove."""
        ran.append(path)
        return "ok"

    agent = Agent(model=faux_model(script), tools=[rm], approver=lambda call: None)
    result = await agent.prompt("go")
    assert [c.id for c in result.pending] == ["b"]
    assert ran == ["/tmp/x"]
    assert result.state is not None
    done = await agent.resume(result.state, {"b": Approve()})
    assert done.text == "done" and ran == ["/tmp/x", "/etc"]
    assert done.state is None and done.pending == []


# --------------------------------------------------------------------------- bad decisions


@pytest.mark.parametrize(
    ("decisions", "message"),
    [
        ({"call_delete": Approve()}, "no decision for call 'call_lookup' (lookup)"),
        (
            {"call_delete": Approve(), "call_lookup": ToolResult("x"), "call_x": Approve()},
            "call 'call_x' is not pending",
        ),
        (
            {"call_delete": "yes", "call_lookup": ToolResult("x")},
            "decision for call 'call_delete' (delete) must be Approve(), Deny(...) or ToolResult",
        ),
        (
            {"call_delete": ToolResult("x"), "call_lookup": ToolResult("x")},
            "call 'call_delete' (delete) waits for approval",
        ),
        (
            {"call_delete": Approve(), "call_lookup": Approve()},
            "call 'call_lookup' (lookup) is an external tool",
        ),
        (
            {"call_delete": Approve(arguments={"path": 3}), "call_lookup": ToolResult("x")},
            "the edited arguments for call 'call_delete' (delete) are invalid",
        ),
        (
            {"call_delete": Approve(arguments=["x"]), "call_lookup": ToolResult("x")},  # type: ignore[arg-type]
            "the edited arguments for call 'call_delete' (delete) must be a dict",
        ),
    ],
)
async def test_a_bad_decision_is_refused_before_anything_runs(
    decisions: dict[str, Any], message: str
) -> None:
    agent = approval_app.build_agent()
    result = await agent.prompt("Clean up")
    assert result.state is not None
    transcript = list(agent.state.messages)
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        await agent.resume(result.state, decisions)
    assert approval_app.EXECUTED == ["note:hello"]
    assert len(faux_calls(agent.state.model)) == 1  # type: ignore[arg-type]
    assert agent.state.messages == transcript


async def test_an_agent_built_differently_is_refused() -> None:
    agent = approval_app.build_agent()
    result = await agent.prompt("Clean up")
    assert result.state is not None

    class City(BaseModel):
        name: str

    other = Agent(model=agent.state.model, tools=agent.state.tools, output_type=City)
    with pytest.raises(ValueError, match="output is None; this agent's is 'City'"):
        await other.resume(result.state, {})


# --------------------------------------------------------------------------- a new interpreter


def test_resume_in_a_new_interpreter_from_the_json_text() -> None:
    state_text = run_app("pause").strip()
    state = RunState.from_json(state_text)
    assert [c.id for c in state.pending] == ["call_delete", "call_lookup"]
    request = {
        "state": state_text,
        "decisions": {
            "call_delete": {"kind": "approve", "arguments": {"path": "dist"}},
            "call_lookup": {"kind": "result", "content": "sunny"},
        },
    }
    out = json.loads(run_app("resume", json.dumps(request)))
    assert out == {
        "status": "completed",
        "text": "note=noted hello; delete=deleted dist; lookup=sunny",
        "executed": ["delete:dist"],  # the note ran in the first process, never again
    }
    request["decisions"] = {
        "call_delete": {"kind": "deny", "reason": "keep it"},
        "call_lookup": {"kind": "deny", "reason": "no browser"},
    }
    out = json.loads(run_app("resume", json.dumps(request)))
    assert out["text"] == "note=noted hello; delete=error:keep it; lookup=error:no browser"
    assert out["executed"] == []


# --------------------------------------------------------------------------- across a pause


def pausing_script(answer: str) -> Any:
    def script(context: Context, options: Mapping[str, Any]) -> FauxResponse:
        last = context.messages[-1]
        if isinstance(last, UserMessage) and len(context.messages) == 1:
            return FauxResponse([tool_call("ask", {"value": "x"}, id="ask_1")])
        return FauxResponse([text(answer)])

    return script


def ask_tool() -> AgentTool:
    return AgentTool(
        "ask",
        "Ask the user",
        {"type": "object", "properties": {"value": {"type": "string"}}},
        external=True,
    )


async def test_usage_and_limits_count_on_across_a_pause() -> None:
    agent = Agent(
        model=faux_model(pausing_script("fine")),
        tools=[ask_tool()],
        usage_limits=UsageLimits(max_turns=1),
    )
    result = await agent.prompt("go")
    assert result.state is not None and result.state.usage.turns == 1
    restored = RunState.from_json(result.state.to_json())
    assert restored.usage == result.state.usage
    limited = await agent.resume(restored, {"ask_1": ToolResult("yes")})
    assert limited.status == "error"
    assert limited.error == "Usage limit reached: turns 1 of 1"
    agent.usage_limits = UsageLimits(max_turns=2)
    done = await agent.resume(restored, {"ask_1": ToolResult("yes")})
    assert done.text == "fine"
    assert agent.state.usage.turns == 2
    assert agent.state.usage.input_tokens > result.state.usage.input_tokens


async def test_typed_output_after_a_pause() -> None:
    class City(BaseModel):
        name: str
        population: int

    answer = json.dumps({"name": "Paris", "population": 2100000})
    agent = Agent(
        model=faux_model(pausing_script(answer)),
        tools=[ask_tool()],
        output_type=City,
        output_mode="native",
    )
    result = await agent.prompt("go")
    assert result.state is not None and result.state.output == "City"
    done = await agent.resume(
        RunState.from_json(result.state.to_json()), {"ask_1": ToolResult("Paris")}
    )
    assert done.output == City(name="Paris", population=2100000)


async def test_steering_queued_during_the_paused_run_is_kept_in_the_state() -> None:
    model = faux_model(pausing_script("answer"))
    agent = Agent(model=model, tools=[ask_tool()])
    agent.subscribe(
        lambda event: agent.steer("look again") if event.type == "agent_paused" else None
    )
    agent.follow_up("and then this")
    result = await agent.prompt("go")
    assert result.state is not None
    assert len(result.state.steering) == 1 and len(result.state.follow_ups) == 1
    assert not agent.has_queued_messages()  # moved into the state
    other = Agent(model=model, tools=[ask_tool()])
    done = await other.resume(
        RunState.from_json(result.state.to_json()), {"ask_1": ToolResult("y")}
    )
    texts = [
        "".join(getattr(b, "text", "") for b in m.content)
        for m in done.messages
        if isinstance(m, UserMessage)
    ]
    assert texts == ["look again", "and then this"]
    # The steering message came right after the tool result, then a turn, then the follow-up.
    roles = [m.role for m in done.messages]
    assert roles == ["toolResult", "user", "assistant", "user", "assistant"]


async def test_a_fallback_model_answers_a_resumed_run() -> None:
    failing = faux_model(
        [
            FauxResponse([tool_call("ask", {}, id="ask_1")]),
            FauxResponse(error="Overloaded", error_status=529),
        ]
    )
    backup = faux_model([FauxResponse([text("from the backup")])])
    agent = Agent(model=failing, tools=[ask_tool()], fallback_models=[backup])
    result = await agent.prompt("go")
    assert result.state is not None
    done = await agent.resume(result.state, {"ask_1": ToolResult("y")})
    assert done.text == "from the backup"
    assert agent.state.usage.requests == 3  # the pause's turn, the failed attempt, the backup


async def test_an_aborted_resume_keeps_the_state_resumable() -> None:
    started = asyncio.Event()

    async def slow(value: str) -> str:
        started.set()
        await asyncio.sleep(30)
        return value

    def script(context: Context, options: Mapping[str, Any]) -> FauxResponse:
        if tool_results(context):
            return FauxResponse([text("ok")])
        return FauxResponse([tool_call("slow", {"value": "v"}, id="s1")])

    tool = agent_tool(requires_approval=True)(slow)
    agent = Agent(model=faux_model(script), tools=[tool])
    result = await agent.prompt("go")
    assert result.state is not None
    task = asyncio.ensure_future(agent.resume(result.state, {"s1": Approve()}))
    await started.wait()
    agent.abort()
    aborted = await asyncio.wait_for(task, 10)
    assert aborted.status == "aborted"


async def test_decisions_that_are_not_a_mapping_are_refused() -> None:
    agent = approval_app.build_agent()
    result = await agent.prompt("Clean up")
    assert result.state is not None
    with pytest.raises(ValueError, match="decisions must be a mapping of call id to decision"):
        await agent.resume(result.state, [Approve(), ToolResult("x")])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="resume\\(\\) needs a RunState, not str"):
        await agent.resume(result.state.to_json(), {})  # type: ignore[arg-type]
    assert approval_app.EXECUTED == ["note:hello"]


async def test_the_paused_event_has_a_json_form() -> None:
    agent = approval_app.build_agent()
    events: list[AgentEvent] = []
    agent.subscribe(events.append)
    await agent.prompt("Clean up")
    paused = next(e for e in events if isinstance(e, AgentPausedEvent))
    assert json.loads(event_to_json(paused)) == {
        "type": "agent_paused",
        "pending": [
            {
                "id": "call_delete",
                "toolName": "delete",
                "arguments": {"path": "build"},
                "kind": "approval",
                "path": [],
            },
            {
                "id": "call_lookup",
                "toolName": "lookup",
                "arguments": {"query": "weather"},
                "kind": "external",
                "path": [],
            },
        ],
    }
