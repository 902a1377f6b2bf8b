"""Cross-provider handoff: a conversation with Anthropic thinking and tool calls continued by an
OpenAI-compatible model, then handed back to Anthropic, including an aborted assistant turn.

Each request body is captured and asserted: what each API receives from the other's turns.
"""

from __future__ import annotations

import json
from typing import Any

import httpx2

from tau.ai import Context, UserMessage, complete
from tau.ai.core.types import (
    AssistantMessage,
    Message,
    Model,
    TextContent,
    ThinkingContent,
    Tool,
    ToolCall,
    ToolResultMessage,
)
from tests.ai.openai_sdk_check import check_openai_body
from tests.factories import sse

CLAUDE = Model(
    id="claude-sonnet-4-5",
    name="Claude Sonnet 4.5",
    api="anthropic-messages",
    provider="anthropic",
    base_url="https://api.anthropic.com",
    reasoning=True,
    max_tokens=64_000,
)
GPT_OSS = Model(
    id="openai/gpt-oss-120b",
    name="gpt-oss-120b",
    api="openai-completions",
    provider="groq",
    base_url="https://api.groq.com/openai/v1",
    reasoning=True,
)
WEATHER = Tool(
    "get_weather",
    "Weather for a city",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
SIGNATURE = "EqQBCkYIBxgCKkDsignature-of-claude"


def _chunks(*chunks: dict[str, Any]) -> bytes:
    return sse(*chunks, "[DONE]")


GROQ_REPLY = _chunks(
    {"choices": [{"index": 0, "delta": {"reasoning": "Rome is next."}, "finish_reason": None}]},
    {"choices": [{"index": 0, "delta": {"content": "Paris is sunny. Checking Rome."}}]},
    {
        "choices": [
            {
                "index": 0,
                "delta": {
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": "fc_9c1b7a2e-rome",
                            "type": "function",
                            "function": {"name": "get_weather", "arguments": '{"city": "Rome"}'},
                        }
                    ]
                },
            }
        ]
    },
    {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
    {"choices": [], "usage": {"prompt_tokens": 200, "completion_tokens": 30}},
)

CLAUDE_REPLY = sse(
    {
        "type": "message_start",
        "message": {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": CLAUDE.id,
            "content": [],
            "stop_reason": None,
            "usage": {"input_tokens": 300, "output_tokens": 1},
        },
    },
    {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
    {
        "type": "content_block_delta",
        "index": 0,
        "delta": {"type": "text_delta", "text": "Both done."},
    },
    {"type": "content_block_stop", "index": 0},
    {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 5}},
    {"type": "message_stop"},
)


async def _call(
    model: Model, messages: list[Message], reply: bytes
) -> tuple[AssistantMessage, dict[str, Any]]:
    seen: list[httpx2.Request] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        seen.append(request)
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=reply)

    async with httpx2.AsyncClient(transport=httpx2.MockTransport(handler)) as client:
        ctx = Context(list(messages), system_prompt="You are helpful.", tools=[WEATHER])
        message = await complete(model, ctx, api_key="k", client=client)
    assert len(seen) == 1
    return message, json.loads(seen[0].content)


def _claude_history() -> list[Message]:
    def claude(*content: Any, stop: str) -> AssistantMessage:
        return AssistantMessage(
            content=list(content), api=CLAUDE.api, provider=CLAUDE.provider, model=CLAUDE.id,
            stop_reason=stop,  # type: ignore[arg-type]
        )  # fmt: skip

    return [
        UserMessage("What's the weather in Paris, then Rome?"),
        claude(
            ThinkingContent("The user wants Paris first.", SIGNATURE),
            TextContent("Checking Paris."),
            ToolCall("toolu_01Paris", "get_weather", {"city": "Paris"}),
            stop="toolUse",
        ),
        ToolResultMessage("toolu_01Paris", "get_weather", [TextContent("Sunny, 21°C")]),
        # An aborted turn: partial text and a thinking block whose signature never arrived.
        claude(ThinkingContent("Now Ro", ""), TextContent("Interrupted answ"), stop="aborted"),
        UserMessage("Go on."),
    ]


async def test_anthropic_history_to_openai_compatible() -> None:
    history = _claude_history()

    reply, body = await _call(GPT_OSS, history, GROQ_REPLY)
    check_openai_body(body)
    messages = body["messages"]
    assert [m["role"] for m in messages] == ["developer", "user", "assistant", "tool", "user"]
    assistant = messages[2]
    # Foreign thinking is never replayed as reasoning, and its signature never leaves Anthropic.
    assert not any(k.startswith("reasoning") for k in assistant)
    assert SIGNATURE not in json.dumps(body)
    assert "Checking Paris." in assistant["content"]
    assert assistant["tool_calls"] == [
        {
            "id": "toolu_01Paris",
            "type": "function",
            "function": {"name": "get_weather", "arguments": json.dumps({"city": "Paris"})},
        }
    ]
    assert messages[3] == {
        "role": "tool",
        "content": "Sunny, 21°C",
        "tool_call_id": "toolu_01Paris",
    }
    # The aborted turn is not sent at all.
    assert "Interrupted answ" not in json.dumps(body) and "Now Ro" not in json.dumps(body)
    assert messages[4] == {"role": "user", "content": "Go on."}

    # The OpenAI-compatible model's turn, decoded.
    assert reply.stop_reason == "toolUse"
    assert isinstance(reply.content[0], ThinkingContent)
    assert reply.content[0].thinking_signature == "reasoning"
    assert reply.tool_calls[0].arguments == {"city": "Rome"}


async def test_responses_style_ids_are_normalised_for_chat_completions() -> None:
    responses_turn = AssistantMessage(
        content=[ToolCall("call_pAYb+/=|fc_t5nnb2q+/YMFW==", "get_weather", {"city": "Oslo"})],
        api="openai-responses",
        provider="openai",
        model="gpt-5",
        stop_reason="toolUse",
    )
    history: list[Message] = [
        UserMessage("Oslo?"),
        responses_turn,
        ToolResultMessage("call_pAYb+/=|fc_t5nnb2q+/YMFW==", "get_weather", [TextContent("Snow")]),
    ]
    _, body = await _call(GPT_OSS, history, GROQ_REPLY)
    call_id = body["messages"][2]["tool_calls"][0]["id"]
    assert "|" not in call_id and len(call_id) <= 40
    assert call_id.startswith("call_pAYb")
    assert body["messages"][3]["tool_call_id"] == call_id


async def test_openai_compatible_turn_handed_back_to_anthropic() -> None:
    history = _claude_history()
    reply, _ = await _call(GPT_OSS, history, GROQ_REPLY)
    history += [
        reply,
        ToolResultMessage(reply.tool_calls[0].id, "get_weather", [TextContent("Cloudy")]),
    ]

    # Back to Anthropic.
    final, body = await _call(CLAUDE, history, CLAUDE_REPLY)
    assert final.text == "Both done." and final.stop_reason == "stop"
    sent = body["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "user", "user", "assistant", "user"]
    first = sent[1]["content"]
    # Claude's own signed thinking goes back to Claude as it was.
    assert first[0] == {
        "type": "thinking",
        "thinking": "The user wants Paris first.",
        "signature": SIGNATURE,
    }
    assert first[-1]["type"] == "tool_use" and first[-1]["id"] == "toolu_01Paris"
    foreign = sent[4]["content"]
    # The other model's reasoning arrives, at most, as plain text; never as a thinking block.
    assert all(block["type"] in ("text", "tool_use") for block in foreign)
    assert any(block.get("text") == "Paris is sunny. Checking Rome." for block in foreign)
    tool_use = foreign[-1]
    assert tool_use["type"] == "tool_use" and tool_use["name"] == "get_weather"
    assert tool_use["input"] == {"city": "Rome"}
    # Anthropic accepts only [A-Za-z0-9_-]{1,64} ids: the Groq id is normalised consistently.
    result = sent[5]["content"][0]
    assert result["type"] == "tool_result" and result["tool_use_id"] == tool_use["id"]
    assert all(c.isalnum() or c in "_-" for c in tool_use["id"]) and len(tool_use["id"]) <= 64
    assert "Interrupted answ" not in json.dumps(body)
