"""pi-format JSON: hand-written pi fixtures load and dump back to exactly the same JSON."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tau.ai import (
    AssistantMessage,
    Context,
    ImageContent,
    SerializationError,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
    complete,
    dump_context,
    dump_message,
    dump_model,
    from_json,
    get_models,
    get_providers,
    load_context,
    load_message,
    load_model,
    to_json,
)
from tau.ai.providers.faux import FauxResponse, faux_model, text, thinking, tool_call

FIXTURES = Path(__file__).parents[1] / "fixtures"


def _fixture(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


def _same_json(a: Any, b: Any) -> None:
    # Equal values *and* equal JSON types (an int token count must not come back as a float).
    assert a == b
    assert json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def test_pi_context_round_trips_exactly() -> None:
    raw_text = (FIXTURES / "pi_context.json").read_text(encoding="utf-8")
    original = json.loads(raw_text)
    context = from_json(raw_text)
    _same_json(dump_context(context), original)
    _same_json(json.loads(to_json(context)), original)
    _same_json(dump_context(load_context(original)), original)


def test_pi_context_loads_into_the_right_types() -> None:
    context = load_context(_fixture("pi_context.json"))
    assert context.system_prompt == "You are a careful assistant."
    user, blocks, assistant, result, failed, aborted, last = context.messages
    assert isinstance(user, UserMessage) and isinstance(user.content, str)
    assert user.timestamp == 1767225600000
    assert isinstance(blocks, UserMessage) and isinstance(blocks.content, list)
    image = blocks.content[1]
    assert isinstance(image, ImageContent) and image.mime_type == "image/png"

    assert isinstance(assistant, AssistantMessage)
    think, redacted, txt, call = assistant.content
    assert isinstance(think, ThinkingContent) and think.thinking_signature
    assert not think.redacted
    assert isinstance(redacted, ThinkingContent) and redacted.redacted is True
    assert isinstance(txt, TextContent) and json.loads(txt.text_signature or "")["v"] == 1
    assert isinstance(call, ToolCall)
    assert call.arguments == {
        "city": "Paris",
        "units": "celsius",
        "days": 2,
        "detailed": False,
        "tags": ["now", None],
    }
    assert call.thought_signature == "CiQB0e2Kb7x9..."
    assert assistant.stop_reason == "toolUse"
    assert assistant.usage.cache_read == 5000 and assistant.usage.cost.total == 0.0132
    assert assistant.tool_calls == [call]

    assert isinstance(result, ToolResultMessage)
    assert result.is_error is True and result.details["attempts"] == [1, 2, 3]
    assert isinstance(failed, AssistantMessage) and failed.stop_reason == "error"
    assert failed.error_message == "429 Rate limit reached for gpt-5"
    assert isinstance(aborted, AssistantMessage) and aborted.stop_reason == "aborted"
    assert isinstance(last, UserMessage) and "😀" in last.content[0].text  # type: ignore[union-attr]
    assert context.tools is not None
    assert context.tools[0].json_schema["required"] == ["city"]


def test_redacted_false_is_preserved() -> None:
    block = {"type": "thinking", "thinking": "t", "redacted": False}
    message = {**_fixture("pi_context.json")["messages"][2], "content": [block]}
    _same_json(dump_message(load_message(message)), message)


def test_pi_model_round_trips_with_compat() -> None:
    original = _fixture("pi_model.json")
    model = load_model(original)
    assert model.compat is not None
    assert model.compat.thinking_format == "zai"
    assert model.compat.supports_developer_role is False
    assert model.compat.open_router_routing == {"only": ["z-ai"], "order": ["z-ai"]}
    assert model.headers == {"X-Title": "tau"}
    assert model.base_url == original["baseUrl"]
    _same_json(dump_model(model), original)
    assert load_model(dump_model(model)) == model


def test_catalog_models_round_trip() -> None:
    for provider in get_providers():
        for m in get_models(provider)[:3]:
            assert load_model(dump_model(m)) == m


async def test_a_streamed_conversation_round_trips() -> None:
    model = faux_model(
        [FauxResponse([thinking("hmm", signature="s"), text("hi"), tool_call("f", {"x": 1})])]
    )
    context = Context([UserMessage("go")], system_prompt="sys")
    reply = await complete(model, context)
    context.messages.append(reply)
    context.messages.append(
        ToolResultMessage(reply.tool_calls[0].id, "f", [TextContent("ok")], details={"n": 1})
    )
    data = dump_context(context)
    again = from_json(to_json(context))
    assert again == context
    _same_json(dump_context(again), data)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"messages": [{"role": "robot"}]}, "context.messages[0].role: unknown role 'robot'"),
        ({"messages": [{"role": "user"}]}, "context.messages[0]: missing field 'content'"),
        ({"messages": "nope"}, "context.messages: expected list, got str"),
        ({}, "context: missing field 'messages'"),
        (
            {"messages": [{"role": "user", "content": [{"type": "video"}]}]},
            "context.messages[0].content[0].type: unknown content type 'video'",
        ),
        (
            {
                "messages": [
                    {"role": "user", "content": [{"type": "toolCall", "id": "a", "name": "b"}]}
                ]
            },
            "context.messages[0].content[0]: 'toolCall' is not allowed here",
        ),
        (
            {"messages": [{"role": "user", "content": [{"type": "text", "text": 5}]}]},
            "context.messages[0].content[0].text: expected str, got int",
        ),
    ],
)
def test_bad_context_gives_a_clear_error(data: Any, message: str) -> None:
    with pytest.raises(SerializationError) as info:
        load_context(data)
    assert str(info.value) == message


def test_bad_assistant_fields() -> None:
    good = _fixture("pi_context.json")["messages"][2]
    with pytest.raises(
        SerializationError, match=r"message.stopReason: unknown stop reason 'paused'"
    ):
        load_message({**good, "stopReason": "paused"})
    bad_usage = {**good, "usage": {**good["usage"], "input": True}}
    with pytest.raises(SerializationError, match=r"message.usage.input: expected int, got bool"):
        load_message(bad_usage)
    with pytest.raises(SerializationError, match=r"message: expected an object, got list"):
        load_message([])


def test_invalid_json_text() -> None:
    with pytest.raises(SerializationError, match="invalid JSON"):
        from_json('{"messages": [')


def test_bad_model() -> None:
    original = _fixture("pi_model.json")
    with pytest.raises(SerializationError, match=r"model: missing field 'id'"):
        load_model({k: v for k, v in original.items() if k != "id"})
    with pytest.raises(SerializationError, match=r"model.input\[1\]: unknown modality 'audio'"):
        load_model({**original, "input": ["text", "audio"]})
    with pytest.raises(SerializationError, match=r"model.contextWindow: expected int, got str"):
        load_model({**original, "contextWindow": "big"})


def test_tool_schema_follows_reassigned_parameters() -> None:
    from pydantic import BaseModel

    from tau.ai import Tool

    class First(BaseModel):
        a: int

    class Second(BaseModel):
        b: str

    tool = Tool("t", "d", First)
    assert set(tool.json_schema["properties"]) == {"a"}
    tool.parameters = Second
    assert set(tool.json_schema["properties"]) == {"b"}
    tool.parameters = {"type": "object", "properties": {"c": {"type": "number"}}}
    assert set(tool.json_schema["properties"]) == {"c"}
