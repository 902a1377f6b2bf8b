"""The AI SDK's own client is the oracle: every chunk tau streams validates against the
``ai`` package's ``uiMessageChunkSchema``, and the ``UIMessage`` its ``readUIMessageStream``
assembles equals, part by part, tau's transcript of the same run (``GET /api/chats/{id}``)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx2
import pydantic

from tau.agent import Agent, AgentTool, ToolUpdateCallback, agent_tool
from tau.ai.providers.faux import FauxResponse, faux_model, text, thinking, tool_call
from tau.ui import MemoryChatStore, chat_app
from tests.factories import serving
from tests.ui.conftest import run_node

KEEP = ("type", "text", "state", "toolCallId", "input", "output", "errorText", "approval")


def parts(message: dict[str, Any]) -> list[dict[str, Any]]:
    """A message's parts with what both sides define (no provider metadata, no part ids)."""
    out = []
    for part in message["parts"]:
        kept = {key: part[key] for key in KEEP if key in part}
        if part["type"].startswith("data-"):
            kept["id"], kept["data"] = part.get("id"), part["data"]
        out.append(kept)
    return out


def user(text_: str, id_: str = "u1") -> dict[str, Any]:
    return {"id": id_, "role": "user", "parts": [{"type": "text", "text": text_}]}


async def ask(
    cache: Path,
    url: str,
    chat_id: str,
    messages: list[dict[str, Any]],
    trigger: str = "submit-message",
    message_id: str | None = None,
    **extra: Any,
) -> dict[str, Any]:
    # The body useChat's transport posts (`messageId` with regenerate(messageId)).
    body: dict[str, Any] = {"id": chat_id, "messages": messages, "trigger": trigger}
    if message_id is not None:
        body["messageId"] = message_id
    answer = await run_node(
        cache, "ai_sdk_client.mjs", {"url": f"{url}/api/chat", "body": body, **extra}
    )
    assert answer["status"] == 200, answer
    assert answer["headers"]["x-vercel-ai-ui-message-stream"] == "v1"
    assert answer["headers"]["content-type"].startswith("text/event-stream")
    assert answer["invalid"] == [], answer["invalid"]
    return answer


async def transcript(url: str, chat_id: str) -> dict[str, Any]:
    async with httpx2.AsyncClient() as client:
        response = await client.get(f"{url}/api/chats/{chat_id}")
    assert response.status_code == 200, response.text
    data: dict[str, Any] = response.json()
    return data


async def same_as_transcript(url: str, chat_id: str, answer: dict[str, Any]) -> dict[str, Any]:
    chat = await transcript(url, chat_id)
    last = chat["messages"][-1]
    assert answer["message"]["id"] == last["id"]
    assert answer["message"]["role"] == "assistant"
    assert parts(answer["message"]) == parts(last)
    return chat


async def test_text_and_reasoning(node_oracle: Path) -> None:
    model = faux_model(
        [FauxResponse([thinking("The user greets me."), text("Hello there, friend!")])],
        reasoning=True,
    )
    app = chat_app(lambda: Agent(model=model))
    async with serving(app) as url:
        answer = await ask(node_oracle, url, "c1", [user("hi")])
        chat = await same_as_transcript(url, "c1", answer)
    kinds = [c["type"] for c in answer["chunks"]]
    assert kinds[0] == "start" and kinds[-1] == "finish" and answer["done"]
    assert "message-metadata" in kinds and "reasoning-delta" in kinds
    assert [p["type"] for p in parts(answer["message"])] == ["step-start", "reasoning", "text"]
    assert answer["message"]["parts"][2]["text"] == "Hello there, friend!"
    usage = answer["message"]["metadata"]["usage"]
    assert usage["turns"] == 1 and usage["inputTokens"] > 0
    assert chat["messages"][0]["parts"] == [{"type": "text", "text": "hi"}]


def tools() -> list[AgentTool]:
    @agent_tool
    def add(a: int, b: int) -> str:
        """Add two numbers."""
        return str(a + b)

    @agent_tool
    def explode(reason: str) -> str:
        """Fail."""
        raise RuntimeError(f"exploded: {reason}")

    return [add, explode]


async def test_parallel_tool_calls_and_a_tool_error(node_oracle: Path) -> None:
    model = faux_model(
        [
            FauxResponse(
                [
                    text("Working on it."),
                    tool_call("add", {"a": 2, "b": 3}, id="call_add"),
                    tool_call("explode", {"reason": "test"}, id="call_boom"),
                ]
            ),
            FauxResponse([text("2 + 3 = 5; the other failed.")]),
        ]
    )
    app = chat_app(lambda: Agent(model=model, tools=tools()))
    async with serving(app) as url:
        answer = await ask(node_oracle, url, "tools", [user("add and explode")])
        await same_as_transcript(url, "tools", answer)
    got = parts(answer["message"])
    assert [p["type"] for p in got] == [
        "step-start",
        "text",
        "tool-add",
        "tool-explode",
        "step-start",
        "text",
    ]
    assert got[2]["state"] == "output-available" and got[2]["output"] == "5"
    assert got[3]["state"] == "output-error" and "exploded: test" in got[3]["errorText"]


async def test_a_model_error(node_oracle: Path) -> None:
    model = faux_model([FauxResponse([text("Partial answ")], error="upstream exploded")])
    app = chat_app(lambda: Agent(model=model))
    async with serving(app) as url:
        answer = await ask(node_oracle, url, "err", [user("hi")])
        await same_as_transcript(url, "err", answer)
    assert answer["errors"] == ["upstream exploded"]
    assert answer["chunks"][-1] == {"type": "finish", "finishReason": "error"}


def approval_agent(executed: list[str]) -> Agent:
    @agent_tool(requires_approval=True)
    def delete(path: str) -> str:
        """Delete a path."""
        executed.append(path)
        return f"deleted {path}"

    model = faux_model(reply_after_tools)
    return Agent(model=model, tools=[delete, *tools()])


def reply_after_tools(context: Any, options: Any) -> FauxResponse:
    from tau.ai import ToolResultMessage

    results = [m for m in context.messages if isinstance(m, ToolResultMessage)]
    if results and isinstance(context.messages[-1], ToolResultMessage):
        summary = "; ".join(
            f"{m.tool_name}={'error:' if m.is_error else ''}{m.content[0].text}" for m in results
        )
        return FauxResponse([text(summary)])
    return FauxResponse(
        [
            tool_call("add", {"a": 1, "b": 1}, id=f"add_{len(results)}"),
            tool_call("delete", {"path": "build"}, id=f"del_{len(results)}"),
        ]
    )


def answered(message: dict[str, Any], approved: bool, reason: str | None = None) -> dict[str, Any]:
    """What useChat's addToolApprovalResponse makes of the paused message."""
    page = dict(message)
    page["parts"] = []
    for part in message["parts"]:
        if part.get("state") == "approval-requested":
            approval = {**part["approval"], "approved": approved}
            if reason is not None:
                approval["reason"] = reason
            part = {**part, "state": "approval-responded", "approval": approval}
        page["parts"].append(part)
    return page


async def test_an_approval_round_trip(node_oracle: Path) -> None:
    executed: list[str] = []
    app = chat_app(lambda: approval_agent(executed))
    async with serving(app) as url:
        first = await ask(node_oracle, url, "ok", [user("clean up")])
        paused = await same_as_transcript(url, "ok", first)
        assert paused["paused"] is True
        assert first["chunks"][-1] == {"type": "finish", "finishReason": "tool-calls"}
        request = next(c for c in first["chunks"] if c["type"] == "tool-approval-request")
        assert request == {
            "type": "tool-approval-request",
            "approvalId": "del_0",
            "toolCallId": "del_0",
        }
        assert executed == []
        page = answered(first["message"], approved=True)
        second = await ask(node_oracle, url, "ok", [user("clean up"), page], message=page)
        chat = await same_as_transcript(url, "ok", second)
    assert executed == ["build"]
    assert chat["paused"] is False
    got = parts(second["message"])
    assert got[2]["state"] == "output-available"
    assert got[-1] == {"type": "text", "text": "add=2; delete=deleted build", "state": "done"}


async def test_a_denied_call(node_oracle: Path) -> None:
    executed: list[str] = []
    app = chat_app(lambda: approval_agent(executed))
    async with serving(app) as url:
        first = await ask(node_oracle, url, "no", [user("clean up")])
        page = answered(first["message"], approved=False, reason="not today")
        second = await ask(node_oracle, url, "no", [user("clean up"), page], message=page)
        await same_as_transcript(url, "no", second)
    assert executed == []
    got = parts(second["message"])
    denied = next(p for p in got if p["type"] == "tool-delete")
    assert denied["state"] == "output-denied"
    assert denied["approval"] == {"id": "del_0", "approved": False, "reason": "not today"}
    assert got[-1]["text"] == "add=2; delete=error:not today"


class City(pydantic.BaseModel):
    name: str
    country: str


async def test_a_typed_output_streams_as_a_data_part(node_oracle: Path) -> None:
    answer_json = '{"name": "Barcelona", "country": "Spain"}'
    model = faux_model([FauxResponse([text(answer_json)], chunk_size=6)])
    app = chat_app(lambda: Agent(model=model, output_type=City, output_mode="native"))
    async with serving(app) as url:
        answer = await ask(node_oracle, url, "city", [user("1992 Olympics?")])
        await same_as_transcript(url, "city", answer)
    outputs = [c["data"] for c in answer["chunks"] if c["type"] == "data-output"]
    assert len(outputs) > 2  # partials, then the validated output
    assert outputs[-1] == {"name": "Barcelona", "country": "Spain"}
    assert parts(answer["message"])[-1] == {
        "type": "data-output",
        "id": "output",
        "data": {"name": "Barcelona", "country": "Spain"},
    }


async def test_an_aborted_run(node_oracle: Path) -> None:
    agents: list[Agent] = []

    @agent_tool
    def stop() -> str:
        """Stop everything."""
        agents[-1].abort("stopped by the tool")
        return "stopping"

    def make() -> Agent:
        agents.append(
            Agent(
                model=faux_model([FauxResponse([text("Stopping."), tool_call("stop", {})])]),
                tools=[stop],
            )
        )
        return agents[-1]

    app = chat_app(make)
    async with serving(app) as url:
        answer = await ask(node_oracle, url, "abort", [user("stop")])
        await same_as_transcript(url, "abort", answer)
    assert answer["chunks"][-1]["type"] == "abort"


async def test_a_page_tool_round_trip(node_oracle: Path) -> None:
    # A tool the page runs (useChat's onToolCall + addToolOutput) is a tau external tool.
    location = AgentTool("get_location", "Where the user is.", {"type": "object"}, external=True)

    def reply(context: Any, options: Any) -> FauxResponse:
        from tau.ai import ToolResultMessage

        last = context.messages[-1]
        if isinstance(last, ToolResultMessage):
            return FauxResponse([text(f"You are in {last.content[0].text}.")])
        return FauxResponse([tool_call("get_location", {}, id="loc_1")])

    model = faux_model(reply)
    app = chat_app(lambda: Agent(model=model, tools=[location]))
    async with serving(app) as url:
        first = await ask(node_oracle, url, "ext", [user("where am I?")])
        part = first["message"]["parts"][1]
        assert part["state"] == "input-available" and part["toolCallId"] == "loc_1"
        page = dict(first["message"])
        page["parts"] = [
            first["message"]["parts"][0],
            {**part, "state": "output-available", "output": "Lisbon"},
        ]
        second = await ask(node_oracle, url, "ext", [user("where am I?"), page], message=page)
        await same_as_transcript(url, "ext", second)
    assert parts(second["message"])[-1]["text"] == "You are in Lisbon."


async def test_reload_and_a_second_tab_see_the_same_chat(node_oracle: Path, tmp_path: Path) -> None:
    from tau.ui import SQLiteChatStore

    store = SQLiteChatStore(tmp_path / "chats.db")
    model = faux_model()  # echoes
    app = chat_app(lambda: Agent(model=model), store=store)
    async with serving(app) as url:
        await ask(node_oracle, url, "kept", [user("first")])
        await ask(node_oracle, url, "kept", [user("second", "u2")])
        chat = await transcript(url, "kept")
        async with httpx2.AsyncClient() as client:
            listed = (await client.get(f"{url}/api/chats")).json()
    store.close()
    reopened = SQLiteChatStore(tmp_path / "chats.db")
    again = await reopened.load("kept")
    reopened.close()
    assert [m["role"] for m in chat["messages"]] == ["user", "assistant", "user", "assistant"]
    assert [m["id"] for m in chat["messages"]] == ["m0", "m1", "m2", "m3"]
    assert listed[0]["id"] == "kept" and listed[0]["title"] == "first"
    assert again is not None and len(again.messages) == 4
    _ = asyncio  # the module's tests are async


async def test_tool_progress_streams_as_preliminary_output(node_oracle: Path) -> None:
    @agent_tool
    async def count(n: int, on_update: ToolUpdateCallback) -> str:
        """Count to n, reporting progress."""
        for i in range(1, n + 1):
            on_update(f"{i}/{n}")
            await asyncio.sleep(0)
        return f"counted to {n}"

    model = faux_model(
        [FauxResponse([tool_call("count", {"n": 3}, id="c1")]), FauxResponse([text("Done.")])]
    )
    app = chat_app(lambda: Agent(model=model, tools=[count]))
    async with serving(app) as url:
        answer = await ask(node_oracle, url, "progress", [user("count")])
        await same_as_transcript(url, "progress", answer)
    outputs = [c for c in answer["chunks"] if c["type"] == "tool-output-available"]
    assert [c["output"] for c in outputs] == ["1/3", "2/3", "3/3", "counted to 3"]
    assert [c.get("preliminary") for c in outputs] == [True, True, True, None]
    assert parts(answer["message"])[1]["output"] == "counted to 3"


async def test_regenerate_replaces_the_answer(node_oracle: Path) -> None:
    # useChat's regenerate(): the page drops the answer (and all after it) and posts the
    # messages up to its user message with trigger "regenerate-message".
    model = faux_model(
        [
            FauxResponse([text("First answer.")]),
            FauxResponse([text("Second answer.")]),
            FauxResponse([text("Third answer.")]),
            FauxResponse([text("Answer to the follow-up.")]),
            FauxResponse([text("Fourth answer.")]),
        ]
    )
    store = MemoryChatStore()
    app = chat_app(lambda: Agent(model=model), store=store)
    async with serving(app) as url:
        first = await ask(node_oracle, url, "re", [user("hi")])
        again = await ask(
            node_oracle, url, "re", [user("hi")], "regenerate-message", first["message"]["id"]
        )
        chat = await same_as_transcript(url, "re", again)
        assert again["message"]["id"] == first["message"]["id"]  # in the old answer's place
        assert [m["role"] for m in chat["messages"]] == ["user", "assistant"]
        assert parts(again["message"])[-1]["text"] == "Second answer."
        # With no messageId (regenerate() of the last message) the last answer is redone.
        third = await ask(node_oracle, url, "re", [user("hi")], "regenerate-message")
        chat = await same_as_transcript(url, "re", third)
        assert parts(third["message"])[-1]["text"] == "Third answer."
        # An earlier answer: everything after it goes, as on the page.
        follow = [user("hi"), third["message"], user("and then?", "u2")]
        await ask(node_oracle, url, "re", follow)
        assert len((await transcript(url, "re"))["messages"]) == 4
        fourth = await ask(
            node_oracle, url, "re", [user("hi")], "regenerate-message", third["message"]["id"]
        )
        chat = await same_as_transcript(url, "re", fourth)
    assert [m["role"] for m in chat["messages"]] == ["user", "assistant"]
    assert parts(fourth["message"])[-1]["text"] == "Fourth answer."
    saved = await store.load("re")
    assert saved is not None and len(saved.messages) == 2
