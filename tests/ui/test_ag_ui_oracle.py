"""AG-UI's own schemas are the oracle: every event tau streams validates against
``@ag-ui/core``'s ``EventSchemas`` (and every request against ``RunAgentInputSchema``), and
the stream, assembled, holds what tau's transcript of the same run holds."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx2
import pydantic

from tau.agent import Agent
from tau.ai.providers.faux import FauxResponse, faux_model, text, thinking, tool_call
from tau.ui import chat_app
from tests.factories import serving
from tests.ui.conftest import run_node
from tests.ui.test_ai_sdk_oracle import approval_agent, tools


def run_input(thread: str, messages: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {
        "threadId": thread,
        "runId": f"run-{len(messages)}",
        "state": {},
        "messages": messages,
        "tools": [],
        "context": [],
        "forwardedProps": {},
        **extra,
    }


async def run(cache: Path, url: str, body: dict[str, Any]) -> dict[str, Any]:
    answer = await run_node(cache, "ag_ui_client.mjs", {"url": f"{url}/api/chat", "body": body})
    assert answer["status"] == 200, answer
    assert answer["invalid"] == [], answer["invalid"]
    types = [e["type"] for e in answer["events"]]
    assert types[0] == "RUN_STARTED" and types[-1] in ("RUN_FINISHED", "RUN_ERROR")
    return answer


async def transcript_parts(url: str, thread: str) -> list[dict[str, Any]]:
    async with httpx2.AsyncClient() as client:
        chat = (await client.get(f"{url}/api/chats/{thread}")).json()
    parts: list[dict[str, Any]] = chat["messages"][-1]["parts"]
    return parts


def same_as_transcript(assembled: dict[str, Any], parts: list[dict[str, Any]]) -> None:
    assert [t["text"] for t in assembled["texts"]] == [
        p["text"] for p in parts if p["type"] == "text"
    ]
    assert [r["text"] for r in assembled["reasoning"]] == [
        p["text"] for p in parts if p["type"] == "reasoning"
    ]
    calls = [p for p in parts if p["type"].startswith("tool-")]
    assert [(c["id"], c["name"], c["args"]) for c in assembled["toolCalls"]] == [
        (p["toolCallId"], p["type"].removeprefix("tool-"), p["input"]) for p in calls
    ]
    for call, part in zip(assembled["toolCalls"], calls, strict=True):
        expected = part.get("output", part.get("errorText"))
        if part["state"] == "output-denied":
            expected = call.get("result")  # the denial's reason, as the model saw it
        assert call.get("result") == expected


async def test_text_reasoning_and_parallel_tools(node_oracle: Path) -> None:
    model = faux_model(
        [
            FauxResponse(
                [
                    thinking("Two tools at once."),
                    text("On it."),
                    tool_call("add", {"a": 2, "b": 3}, id="call_add"),
                    tool_call("explode", {"reason": "x"}, id="call_boom"),
                ]
            ),
            FauxResponse([text("Done.")]),
        ],
        reasoning=True,
    )
    app = chat_app(lambda: Agent(model=model, tools=tools()), protocol="ag-ui")
    async with serving(app) as url:
        body = run_input("t1", [{"id": "u1", "role": "user", "content": "go"}])
        answer = await run(node_oracle, url, body)
        same_as_transcript(answer["assembled"], await transcript_parts(url, "t1"))
    assert answer["assembled"]["finished"]["outcome"] == {"type": "success"}
    types = [e["type"] for e in answer["events"]]
    assert "REASONING_START" in types and "STEP_STARTED" in types
    assert "THINKING_START" not in types  # AG-UI 1.0 renamed them REASONING_*


async def test_a_model_error_is_run_error(node_oracle: Path) -> None:
    model = faux_model([FauxResponse([text("Half")], error="upstream exploded")])
    app = chat_app(lambda: Agent(model=model), protocol="ag-ui")
    async with serving(app) as url:
        body = run_input("t2", [{"id": "u1", "role": "user", "content": "go"}])
        answer = await run(node_oracle, url, body)
    assert answer["assembled"]["error"] == "upstream exploded"


class City(pydantic.BaseModel):
    name: str
    country: str


async def test_typed_output_as_state(node_oracle: Path) -> None:
    model = faux_model(
        [FauxResponse([text('{"name": "Oslo", "country": "Norway"}')], chunk_size=5)]
    )
    app = chat_app(
        lambda: Agent(model=model, output_type=City, output_mode="native"), protocol="ag-ui"
    )
    async with serving(app) as url:
        body = run_input("t3", [{"id": "u1", "role": "user", "content": "capital of Norway?"}])
        answer = await run(node_oracle, url, body)
    types = [e["type"] for e in answer["events"]]
    assert types.count("STATE_SNAPSHOT") == 1 and "STATE_DELTA" in types
    final = {"name": "Oslo", "country": "Norway"}
    assert answer["assembled"]["state"] == {"output": final}
    assert answer["assembled"]["finished"]["result"] == final


async def test_an_approval_through_resume(node_oracle: Path) -> None:
    executed: list[str] = []
    app = chat_app(lambda: approval_agent(executed), protocol="ag-ui")
    async with serving(app) as url:
        first_messages = [{"id": "u1", "role": "user", "content": "clean up"}]
        first = await run(node_oracle, url, run_input("t4", first_messages))
        outcome = first["assembled"]["finished"]["outcome"]
        assert outcome["type"] == "interrupt"
        [interrupt] = outcome["interrupts"]
        assert interrupt["id"] == "del_0" and interrupt["toolCallId"] == "del_0"
        resume = [{"interruptId": "del_0", "status": "resolved", "payload": {"approved": True}}]
        second = await run(node_oracle, url, run_input("t4", first_messages, resume=resume))
        parts = await transcript_parts(url, "t4")
    assert executed == ["build"]
    assert second["assembled"]["texts"][-1]["text"] == "add=2; delete=deleted build"
    assert parts[-1]["text"] == "add=2; delete=deleted build"


async def test_a_frontend_tool_is_an_external_tool(node_oracle: Path) -> None:
    def reply(context: Any, options: Any) -> FauxResponse:
        from tau.ai import ToolResultMessage

        last = context.messages[-1]
        if isinstance(last, ToolResultMessage):
            return FauxResponse([text(f"Colour set: {last.content[0].text}")])
        assert [t.name for t in context.tools or ()] == ["set_colour"]
        return FauxResponse([tool_call("set_colour", {"colour": "teal"}, id="col_1")])

    app = chat_app(lambda: Agent(model=faux_model(reply)), protocol="ag-ui")
    page_tool = {
        "name": "set_colour",
        "description": "Set the page's colour.",
        "parameters": {"type": "object", "properties": {"colour": {"type": "string"}}},
    }
    async with serving(app) as url:
        messages: list[dict[str, Any]] = [{"id": "u1", "role": "user", "content": "teal please"}]
        first = await run(node_oracle, url, run_input("t5", messages, tools=[page_tool]))
        [call] = first["assembled"]["toolCalls"]
        assert call == {"id": "col_1", "name": "set_colour", "args": {"colour": "teal"}}
        messages += [
            {
                "id": "a1",
                "role": "assistant",
                "toolCalls": [
                    {
                        "id": "col_1",
                        "type": "function",
                        "function": {"name": "set_colour", "arguments": '{"colour":"teal"}'},
                    }
                ],
            },
            {"id": "r1", "role": "tool", "toolCallId": "col_1", "content": "ok"},
        ]
        second = await run(node_oracle, url, run_input("t5", messages, tools=[page_tool]))
    assert second["assembled"]["texts"][-1]["text"] == "Colour set: ok"


async def test_a_denial_and_an_abort(node_oracle: Path) -> None:
    executed: list[str] = []
    app = chat_app(lambda: approval_agent(executed), protocol="ag-ui")
    async with serving(app) as url:
        messages = [{"id": "u1", "role": "user", "content": "clean up"}]
        await run(node_oracle, url, run_input("t6", messages))
        resume = [{"interruptId": "del_0", "status": "cancelled"}]
        denied = await run(node_oracle, url, run_input("t6", messages, resume=resume))
        parts = await transcript_parts(url, "t6")
    # The resumed run streams the results of the paused run's calls, then the answer.
    results = {c["id"]: c["result"] for c in denied["assembled"]["toolCalls"]}
    assert results == {"del_0": "The user denied this tool call."}  # add ran before the pause
    assert [p["state"] for p in parts if p["type"].startswith("tool-")] == [
        "output-available",
        "output-denied",
    ]
    assert executed == []
    assert denied["assembled"]["texts"][-1]["text"] == (
        "add=2; delete=error:The user denied this tool call."
    )

    agents: list[Agent] = []

    def make() -> Agent:
        from tau.agent import agent_tool

        @agent_tool
        def stop() -> str:
            """Stop everything."""
            agents[-1].abort("stopped by the tool")
            return "stopping"

        agents.append(
            Agent(model=faux_model([FauxResponse([tool_call("stop", {})])]), tools=[stop])
        )
        return agents[-1]

    app = chat_app(make, protocol="ag-ui")
    async with serving(app) as url:
        body = run_input("t7", [{"id": "u1", "role": "user", "content": "stop"}])
        answer = await run(node_oracle, url, body)
    assert answer["assembled"]["finished"]["outcome"] == {"type": "cancelled"}
