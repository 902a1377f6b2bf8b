"""Cross-provider handoff through Gemini, Vertex and Bedrock.

One conversation (Anthropic thinking and a tool call with an odd id, a tool result with an
image, an aborted turn) is continued by Gemini 3 on the Gemini API, then by Gemini 2.5 on
Vertex AI, then by Claude on Bedrock; each answers through a local server and its turn joins
the history. Every request body is asserted, and validated against google-genai's types or
botocore's ConverseStream input shape.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

pytest.importorskip("botocore")

from tau.ai import Context, UserMessage, stream
from tau.ai.core.types import (
    AssistantMessage,
    ImageContent,
    Message,
    Model,
    TextContent,
    ThinkingContent,
    Tool,
    ToolCall,
    ToolResultMessage,
)
from tests.ai.servers import SSE_HEADERS, LocalServer, Reply
from tests.ai.stream_checks import check_grammar
from tests.ai.test_bedrock import validate as validate_bedrock
from tests.ai.test_google import validate_body as validate_google
from tests.factories import bedrock_event

IMG = ImageContent("aGVsbG8=", "image/png")
INLINE = {"inlineData": {"mimeType": "image/png", "data": "aGVsbG8="}}
SIG = "R2VtaW5pU2lnbmF0dXJl"
WEATHER = Tool(
    "get_weather",
    "Weather for a city",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)


def _model(id: str, api: str, provider: str, base_url: str) -> Model:
    return Model(id, id, api, provider, base_url, reasoning=True, input=["text", "image"])


def _history() -> list[Message]:
    claude = {"api": "anthropic-messages", "provider": "anthropic", "model": "claude-sonnet-4-5"}
    return [
        UserMessage([TextContent("Weather in Paris? Here is the sky:"), IMG]),
        AssistantMessage(
            [
                ThinkingContent("Need the weather tool.", "claude-signature"),
                TextContent("Checking Paris."),
                ToolCall("toolu_01A+b/c", "get_weather", {"city": "Paris"}),
            ],
            stop_reason="toolUse",
            **claude,
        ),
        ToolResultMessage("toolu_01A+b/c", "get_weather", [TextContent("Sunny, 24°C"), IMG]),
        AssistantMessage(
            [TextContent("Let me also"), ToolCall("toolu_02", "get_weather", {"city": "Lyon"})],
            stop_reason="aborted",
            error_message="Request was aborted",
            **claude,
        ),
        UserMessage("And Rome?"),
    ]


def _gemini_sse(*chunks: dict[str, Any]) -> bytes:
    return b"".join(b"data: " + json.dumps(c).encode() + b"\r\n\r\n" for c in chunks)


GEMINI3_REPLY = _gemini_sse(
    {
        "candidates": [
            {"content": {"role": "model", "parts": [{"text": "Rome next.", "thought": True}]}}
        ]
    },
    {
        "candidates": [
            {
                "content": {
                    "role": "model",
                    "parts": [
                        {
                            "functionCall": {"name": "get_weather", "args": {"city": "Rome"}},
                            "thoughtSignature": SIG,
                        }
                    ],
                },
                "finishReason": "STOP",
            }
        ],
        "usageMetadata": {
            "promptTokenCount": 90,
            "candidatesTokenCount": 9,
            "thoughtsTokenCount": 20,
            "totalTokenCount": 119,
        },
    },
)
VERTEX_REPLY = _gemini_sse(
    {
        "candidates": [
            {
                "content": {"role": "model", "parts": [{"text": "Paris and Rome are sunny."}]},
                "finishReason": "STOP",
            }
        ],
        "usageMetadata": {
            "promptTokenCount": 120,
            "candidatesTokenCount": 7,
            "totalTokenCount": 127,
        },
    }
)
BEDROCK_REPLY = b"".join(
    [
        bedrock_event("messageStart", {"role": "assistant"}),
        bedrock_event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "Enjoy!"}}),
        bedrock_event("contentBlockStop", {"contentBlockIndex": 0}),
        bedrock_event("messageStop", {"stopReason": "end_turn"}),
        bedrock_event(
            "metadata", {"usage": {"inputTokens": 10, "outputTokens": 2, "totalTokens": 12}}
        ),
    ]
)


async def _turn(
    model: Model, history: list[Message], reply: Reply, **options: Any
) -> tuple[AssistantMessage, dict[str, Any]]:
    async with LocalServer([reply]) as server:
        model.base_url = server.url + model.base_url
        s = stream(model, Context(list(history), "Be brief.", [WEATHER]), max_retries=0, **options)
        events = [e async for e in s]
        message = await s.result()
        body = json.loads(server.requests[0].body)
    check_grammar(events, message)
    assert message.stop_reason in ("stop", "toolUse"), message.error_message
    return message, body


async def test_one_conversation_through_gemini_vertex_and_bedrock(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("AWS_BEDROCK_SKIP_AUTH", raising=False)
    history = _history()

    # 1. Gemini 3 on the Gemini API.
    gemini3 = _model("gemini-3-pro-preview", "google-generative-ai", "google", "/v1beta")
    reply, body = await _turn(
        gemini3, history, Reply(200, SSE_HEADERS, [GEMINI3_REPLY]), api_key="g"
    )
    validate_google(body)
    assert body["contents"] == [
        {"role": "user", "parts": [{"text": "Weather in Paris? Here is the sky:"}, INLINE]},
        {
            "role": "model",
            "parts": [
                {"text": "Checking Paris."},  # Claude's thinking is left out
                {
                    "functionCall": {"name": "get_weather", "args": {"city": "Paris"}},
                    "thoughtSignature": "skip_thought_signature_validator",
                },
            ],
        },
        {
            "role": "user",
            "parts": [
                {
                    "functionResponse": {
                        "name": "get_weather",
                        "response": {"output": "Sunny, 24°C"},
                        "parts": [INLINE],  # Gemini 3: images inside the response
                    }
                }
            ],
        },
        {"role": "user", "parts": [{"text": "And Rome?"}]},  # the aborted turn is gone
    ]
    assert body["systemInstruction"] == {"parts": [{"text": "Be brief."}]}
    rome = reply.tool_calls[0]
    assert rome.name == "get_weather" and rome.thought_signature == SIG and rome.id
    assert reply.content[0] == ThinkingContent("Rome next.")
    history += [reply, ToolResultMessage(rome.id, "get_weather", [TextContent("Sunny, 27°C")])]

    # 2. Gemini 2.5 on Vertex AI (API key): another provider, so no Gemini signature goes back.
    vertex = _model("gemini-2.5-flash", "google-vertex", "google-vertex", "")
    reply, body = await _turn(
        vertex,
        history,
        Reply(200, SSE_HEADERS, [VERTEX_REPLY]),
        api_key="v",
        project="p",
        location="global",
    )
    validate_google(body)
    contents = body["contents"]
    assert [c["role"] for c in contents] == [
        "user",
        "model",
        "user",
        "user",
        "user",
        "model",
        "user",
    ]
    assert contents[2]["parts"][0]["functionResponse"] == {
        "name": "get_weather",
        "response": {"output": "Sunny, 24°C"},
    }
    assert contents[3] == {
        "role": "user",
        "parts": [{"text": "Tool result image:"}, INLINE],
    }  # pre-Gemini 3
    assert contents[5] == {
        "role": "model",
        "parts": [{"functionCall": {"name": "get_weather", "args": {"city": "Rome"}}}],
    }
    assert "thoughtSignature" not in json.dumps(body)
    assert contents[6]["parts"][0]["functionResponse"]["response"] == {"output": "Sunny, 27°C"}
    assert reply.text == "Paris and Rome are sunny."
    history += [reply, UserMessage("Thanks!")]

    # 3. Claude on Bedrock (bearer token): ids made valid, results with images, cache points.
    bedrock = _model(
        "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
        "bedrock-converse-stream",
        "amazon-bedrock",
        "",
    )
    events_reply = Reply(
        200, {"content-type": "application/vnd.amazon.eventstream"}, [BEDROCK_REPLY]
    )
    reply, body = await _turn(bedrock, history, events_reply, api_key="b")
    validate_bedrock(body, bedrock.id)
    messages = body["messages"]
    # Roles alternate (Converse requires it): the follow-up after the left-out aborted turn
    # joins the tool result's user message.
    assert [m["role"] for m in messages] == [
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
    ]
    assert messages[1]["content"] == [
        {"text": "Checking Paris."},
        {
            "toolUse": {
                "toolUseId": "toolu_01A_b_c",
                "name": "get_weather",
                "input": {"city": "Paris"},
            }
        },
    ]
    assert messages[2]["content"] == [
        {
            "toolResult": {
                "toolUseId": "toolu_01A_b_c",
                "content": [
                    {"text": "Sunny, 24°C"},
                    {"image": {"format": "png", "source": {"bytes": "aGVsbG8="}}},
                ],
                "status": "success",
            }
        },
        {"text": "And Rome?"},
    ]
    gemini_call = messages[3]["content"]
    assert gemini_call == [
        {"toolUse": {"toolUseId": rome.id, "name": "get_weather", "input": {"city": "Rome"}}}
    ]
    assert messages[4]["content"][0]["toolResult"]["toolUseId"] == rome.id
    assert messages[5]["content"] == [{"text": "Paris and Rome are sunny."}]
    assert messages[6]["content"] == [{"text": "Thanks!"}, {"cachePoint": {"type": "default"}}]
    assert body["system"] == [{"text": "Be brief."}, {"cachePoint": {"type": "default"}}]
    assert reply.text == "Enjoy!"
