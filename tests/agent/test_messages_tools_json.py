"""Custom message types, function tools and the JSON form of agent events."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, Field

from tau.agent import (
    AgentContext,
    AgentLoopConfig,
    AgentToolResult,
    agent_loop,
    agent_tool,
    as_tool_result,
    default_convert_to_llm,
    dump_agent_message,
    dump_event,
    event_to_json,
    load_agent_message,
    register_message_type,
    tool_from_function,
    unregister_message_type,
)
from tau.ai import (
    AbortSignal,
    AssistantMessage,
    ImageContent,
    SerializationError,
    TextContent,
    ToolResultMessage,
    UserMessage,
)
from tau.ai.core.types import now_ms
from tau.ai.providers.faux import FauxResponse, faux_model, text, thinking, tool_call

from .helpers import collect, result_text


@dataclass
class Notification:
    text: str
    level: str = "info"
    timestamp: int = field(default_factory=now_ms)
    role: Literal["notification"] = "notification"


class Artifact(BaseModel):
    role: Literal["artifact"] = "artifact"
    title: str
    body: str
    tags: list[str] = []


@pytest.fixture(autouse=True)
def _registered() -> Any:
    register_message_type("notification", Notification)
    register_message_type("artifact", Artifact)
    yield
    unregister_message_type("notification")
    unregister_message_type("artifact")


# --------------------------------------------------------------------------- messages


def test_custom_messages_round_trip_through_json_text() -> None:
    transcript: list[Any] = [
        UserMessage("hello"),
        Notification("build ok", level="success", timestamp=123),
        AssistantMessage([TextContent("hi")], "faux", "faux", "m", timestamp=456),
        Artifact(title="plan", body="1. do it", tags=["a"]),
        ToolResultMessage("c1", "echo", [TextContent("r")], details={"k": 1}, timestamp=789),
    ]
    wire = json.dumps([dump_agent_message(m) for m in transcript])
    loaded = [load_agent_message(d) for d in json.loads(wire)]
    assert [type(m) for m in loaded] == [type(m) for m in transcript]
    assert loaded[1] == Notification("build ok", level="success", timestamp=123)
    assert loaded[3] == transcript[3]
    assert json.loads(wire)[1]["role"] == "notification"
    assert json.loads(wire)[3] == {
        "role": "artifact",
        "title": "plan",
        "body": "1. do it",
        "tags": ["a"],
    }
    assert loaded[4].details == {"k": 1} and loaded[4].timestamp == 789


def test_unknown_role_and_invalid_custom_data_give_clear_errors() -> None:
    with pytest.raises(SerializationError, match="unknown message role 'memo'"):
        load_agent_message({"role": "memo", "text": "x"})
    with pytest.raises(SerializationError, match="invalid 'artifact' message"):
        load_agent_message({"role": "artifact", "title": 3})

    @dataclass
    class Unregistered:
        role: str = "unregistered"

    with pytest.raises(TypeError, match="register its type"):
        dump_agent_message(Unregistered())


def test_registration_rules() -> None:
    with pytest.raises(ValueError, match="LLM message role"):
        register_message_type("user", Notification)
    with pytest.raises(TypeError, match="'role' field"):
        register_message_type("plain", dict)
    register_message_type("notification", Notification)  # same class again: fine
    with pytest.raises(ValueError, match="already registered"):
        register_message_type("notification", Artifact)


def test_default_convert_to_llm_keeps_only_llm_roles() -> None:
    messages: list[Any] = [UserMessage("a"), Notification("n"), Artifact(title="t", body="b")]
    assert default_convert_to_llm(messages) == [messages[0]]


# --------------------------------------------------------------------------- function tools


class Point(BaseModel):
    x: int
    y: int


def test_function_tool_schema_from_signature_and_docstring() -> None:
    @agent_tool
    def move(
        to: Point,
        speed: Annotated[float, Field(gt=0)] = 1.0,
        mode: Literal["walk", "run"] = "walk",
        signal: AbortSignal | None = None,
    ) -> str:
        """Move the robot to a point.

        Longer explanation that belongs to the description.

        Args:
            to: Where to go.
            speed: Metres per second,
                strictly positive.
            mode: How to move.

        Returns:
            A status line.
        """
        return "moved"

    assert move.name == "move" and move.label == "move"
    assert move.description == (
        "Move the robot to a point.\n\nLonger explanation that belongs to the description."
    )
    schema = move.json_schema
    assert set(schema["properties"]) == {"to", "speed", "mode"}  # signal is injected, not shown
    assert schema["required"] == ["to"]
    assert schema["properties"]["speed"]["description"] == "Metres per second, strictly positive."
    assert schema["properties"]["mode"]["enum"] == ["walk", "run"]
    assert schema["properties"]["to"]["$ref"].endswith("Point")


def test_sphinx_docstrings_and_overrides() -> None:
    def lookup(key: str, default: str = "") -> str:
        """Look a key up.

        :param key: The key.
        :param default: Returned when missing.
        """
        return key

    tool = tool_from_function(lookup, name="kv_get", label="Key lookup", description="Get a key")
    assert tool.name == "kv_get" and tool.label == "Key lookup" and tool.description == "Get a key"
    assert tool.json_schema["properties"]["key"]["description"] == "The key."
    assert tool.json_schema["properties"]["default"]["description"] == "Returned when missing."


def test_bad_function_signatures_are_rejected() -> None:
    def star(*args: int) -> str:
        return ""

    with pytest.raises(TypeError, match="ordinary named parameter"):
        tool_from_function(star)
    with pytest.raises(ValueError, match="invalid tool name"):
        tool_from_function(lambda x: x)


async def test_function_tools_run_in_the_loop_with_coercion_and_injection() -> None:
    seen: dict[str, Any] = {}

    @agent_tool(label="Adder")
    async def add(a: int, b: int, tool_call_id: str, signal: AbortSignal) -> dict[str, int]:
        """Add two integers."""
        seen["call"] = tool_call_id
        seen["signal"] = signal
        return {"sum": a + b}

    @agent_tool
    def shout(words: list[str]) -> list[str]:
        """Shout each word."""
        return [w.upper() for w in words]

    model = faux_model(
        [
            FauxResponse(
                [
                    tool_call("add", {"a": "2", "b": 3}, id="c1"),
                    tool_call("shout", {"words": ["hi", "yo"]}, id="c2"),
                    tool_call("add", {"a": "two", "b": 3}, id="c3"),
                ]
            ),
            FauxResponse(["ok"]),
        ]
    )
    stream = agent_loop(
        [UserMessage("go")], AgentContext("", [], [add, shout]), AgentLoopConfig(model=model)
    )
    events = await collect(stream)
    ends = [e for e in events if e.type == "tool_execution_end"]
    assert result_text(ends[0].result) == '{"sum":5}'  # type: ignore[union-attr]
    assert ends[0].result.details == {"sum": 5}  # type: ignore[union-attr]
    assert [b.text for b in ends[1].result.content] == ["HI", "YO"]  # type: ignore[union-attr]
    assert ends[2].is_error  # type: ignore[union-attr]
    assert seen["call"] == "c1" and isinstance(seen["signal"], AbortSignal)
    assert add.label == "Adder"


def test_as_tool_result_normalisation() -> None:
    image = ImageContent("AAAA", "image/png")
    assert as_tool_result("x").content == [TextContent("x")]
    assert as_tool_result(None).content == []
    assert as_tool_result(["a", image]).content == [TextContent("a"), image]
    result = AgentToolResult([TextContent("r")], {"d": 1})
    assert as_tool_result(result) is result
    assert as_tool_result(42).content == [TextContent("42")]


# --------------------------------------------------------------------------- event JSON


async def test_every_event_serialises_to_stable_json() -> None:
    def execute(cid: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        on_update("halfway")
        return AgentToolResult([TextContent("done")], {"object": object()})

    from tau.agent import AgentTool

    tool = AgentTool("job", "job", None, execute=execute)
    model = faux_model(
        [
            FauxResponse(
                [thinking("hm"), text("ok"), tool_call("job", {"n": 1}, id="c1")], chunk_size=0
            ),
            FauxResponse(["fin"], chunk_size=0),
        ]
    )
    events = await collect(
        agent_loop(
            [UserMessage("go"), Notification("note")],
            AgentContext("", [], [tool]),
            AgentLoopConfig(model=model),
        )
    )
    lines = [event_to_json(e) for e in events]
    decoded = [json.loads(line) for line in lines]
    assert [d["type"] for d in decoded] == [e.type for e in events]
    by_type = {d["type"]: d for d in decoded}
    assert decoded[2]["message"] == {
        "role": "user",
        "content": "go",
        "timestamp": events[2].message.timestamp,  # type: ignore[union-attr]
    }
    assert decoded[4]["message"]["role"] == "notification"
    update = next(d for d in decoded if d["type"] == "message_update")
    assert update["assistantMessageEvent"] == {"type": "thinking_start", "contentIndex": 0}
    assert update["message"]["role"] == "assistant"
    assert "partial" not in update["assistantMessageEvent"]
    toolcall_end = next(
        d
        for d in decoded
        if d["type"] == "message_update" and d["assistantMessageEvent"]["type"] == "toolcall_end"
    )
    assert toolcall_end["assistantMessageEvent"]["toolCall"] == {
        "type": "toolCall",
        "id": "c1",
        "name": "job",
        "arguments": {"n": 1},
    }
    assert by_type["tool_execution_start"] == {
        "type": "tool_execution_start",
        "toolCallId": "c1",
        "toolName": "job",
        "args": {"n": 1},
    }
    assert by_type["tool_execution_update"]["partialResult"] == {
        "content": [{"type": "text", "text": "halfway"}],
        "details": None,
    }
    end = by_type["tool_execution_end"]
    assert end["isError"] is False and end["result"]["content"] == [
        {"type": "text", "text": "done"}
    ]
    assert end["result"]["details"]["object"].startswith("<object object")
    assert [m["role"] for m in by_type["turn_end"]["toolResults"]] == []  # last turn_end
    assert [m["role"] for m in by_type["agent_end"]["messages"]] == [
        "user",
        "notification",
        "assistant",
        "toolResult",
        "assistant",
    ]
    compact = dump_event(next(e for e in events if e.type == "message_update"), compact=True)
    assert "message" not in compact and compact["assistantMessageEvent"]["type"] == "thinking_start"
