"""One conversation handed between openai-responses, azure-openai-responses and Mistral: each
request body, built by the real adapter over HTTP, says what that API must be told."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest

from tau.ai import Context, Model, UserMessage, stream
from tau.ai.core.types import (
    AssistantMessage,
    ImageContent,
    TextContent,
    ThinkingContent,
    Tool,
    ToolCall,
    ToolResultMessage,
)
from tau.ai.lookup.catalog import get_model
from tau.ai.providers.mistral.decoder import THINKING_SIGNATURE
from tau.ai.providers.openai_responses.request import encode_text_signature
from tests.ai.responses_sdk import validate_with_sdk
from tests.ai.servers import SSE_HEADERS, LocalServer, Reply

PNG = "iVBORw0KGgo="
REASONING = {
    "type": "reasoning",
    "id": "rs_1",
    "summary": [{"type": "summary_text", "text": "Need a screenshot."}],
    "encrypted_content": "gAAAA-enc",
}
OK_RESPONSES = b'data: {"type":"response.completed","response":{"status":"completed"}}\n\n'
OK_MISTRAL = b'data: {"choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}]}\n\n'


def catalog(provider: str, model_id: str) -> Model:
    model = get_model(provider, model_id)
    assert model is not None
    return model


GPT = catalog("openai", "gpt-5-mini")
AZURE = catalog("azure-openai-responses", "gpt-4.1")
MAGISTRAL = catalog("mistral", "magistral-medium-latest")


def conversation() -> Context:
    openai_turn = AssistantMessage(
        [
            ThinkingContent("Need a screenshot.", json.dumps(REASONING)),
            TextContent("Taking one.", encode_text_signature("msg_1", "commentary")),
            ToolCall("call_A|fc_A", "shot", {"zoom": 2}),
        ],
        api=GPT.api,
        provider=GPT.provider,
        model=GPT.id,
        stop_reason="toolUse",
    )
    mistral_turn = AssistantMessage(
        [
            ThinkingContent("Look closer.", THINKING_SIGNATURE),
            TextContent("Again."),
            ToolCall("abcDEF123", "shot", {}),
        ],
        api=MAGISTRAL.api,
        provider=MAGISTRAL.provider,
        model=MAGISTRAL.id,
        stop_reason="toolUse",
    )
    aborted = AssistantMessage(
        [TextContent("Half a sen")],
        api=AZURE.api,
        provider=AZURE.provider,
        model=AZURE.id,
        stop_reason="aborted",
    )
    return Context(
        [
            UserMessage([TextContent("What is on screen?"), ImageContent(PNG, "image/png")]),
            openai_turn,
            ToolResultMessage(
                "call_A|fc_A", "shot", [TextContent("a cat"), ImageContent(PNG, "image/png")]
            ),
            mistral_turn,
            ToolResultMessage("abcDEF123", "shot", [TextContent("a dog")]),
            aborted,
            UserMessage("Go on."),
        ],
        system_prompt="Be brief.",
        tools=[Tool("shot", "Take a screenshot.", {"type": "object", "properties": {}})],
    )


async def request_body(model: Model, reply: bytes, **options: Any) -> dict[str, Any]:
    async with LocalServer([Reply(200, SSE_HEADERS, [reply])]) as server:
        base = server.url + ("" if model.api == "mistral-conversations" else "/v1")
        s = stream(replace(model, base_url=base), conversation(), api_key="k", **options)
        message = await s.result()
    assert message.stop_reason == "stop", message.error_message
    body: dict[str, Any] = json.loads(server.requests[0].body)
    return body


async def test_to_openai_responses() -> None:
    body = await request_body(GPT, OK_RESPONSES)
    validate_with_sdk(body)
    items = body["input"]
    image = {"type": "input_image", "detail": "auto", "image_url": f"data:image/png;base64,{PNG}"}
    assert items[0] == {"role": "developer", "content": "Be brief."}
    assert items[1]["content"][1] == image
    # Its own turn comes back exactly: the reasoning item, then the item that followed it.
    assert items[2] == REASONING
    assert items[3]["id"] == "msg_1" and items[3]["phase"] == "commentary"
    assert items[4] == {
        "type": "function_call",
        "call_id": "call_A",
        "name": "shot",
        "arguments": '{"zoom": 2}',
        "id": "fc_A",
    }
    assert items[5] == {
        "type": "function_call_output",
        "call_id": "call_A",
        "output": [{"type": "input_text", "text": "a cat"}, image],
    }
    # Mistral's turn: its thinking is foreign here and left out; its call has no item id.
    mistral_items = items[6:-2]
    texts = [i["content"][0]["text"] for i in mistral_items if i.get("type") == "message"]
    assert texts == ["Again."]
    assert "Look closer." not in json.dumps(body)
    call = next(i for i in mistral_items if i.get("type") == "function_call")
    assert call["call_id"] == "abcDEF123" and "id" not in call
    assert items[-2] == {"type": "function_call_output", "call_id": "abcDEF123", "output": "a dog"}
    # The aborted turn is gone; the last user message closes the input.
    assert items[-1] == {"role": "user", "content": [{"type": "input_text", "text": "Go on."}]}
    assert "Half a sen" not in json.dumps(body)


async def test_to_azure_openai_responses(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AZURE_OPENAI_DEPLOYMENT_NAME_MAP", raising=False)
    async with LocalServer([Reply(200, SSE_HEADERS, [OK_RESPONSES])]) as server:
        s = stream(AZURE, conversation(), api_key="k", azure_base_url=server.url)
        message = await s.result()
    assert message.stop_reason == "stop", message.error_message
    body = json.loads(server.requests[0].body)
    validate_with_sdk(body)
    assert body["store"] is False
    dumped = json.dumps(body)
    # OpenAI's reasoning is foreign to this model: never sent as an encrypted item.
    assert "gAAAA-enc" not in dumped and '"type": "reasoning"' not in dumped
    calls = [i for i in body["input"] if i.get("type") == "function_call"]
    assert [c["call_id"] for c in calls] == ["call_A", "abcDEF123"]
    outputs = [i["call_id"] for i in body["input"] if i.get("type") == "function_call_output"]
    assert outputs == ["call_A", "abcDEF123"]


async def test_to_mistral() -> None:
    body = await request_body(MAGISTRAL, OK_MISTRAL)
    messages = body["messages"]
    assert [m["role"] for m in messages] == [
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "user",
    ]
    openai_call = messages[2]["tool_calls"][0]
    call_id = openai_call["id"]
    assert len(call_id) == 9 and call_id.isalnum()
    assert messages[3]["tool_call_id"] == call_id
    # Its own turn keeps native thinking and its id.
    assert messages[4]["content"][0] == {
        "type": "thinking",
        "thinking": [{"type": "text", "text": "Look closer."}],
    }
    assert messages[4]["tool_calls"][0]["id"] == "abcDEF123"
    assert messages[5]["tool_call_id"] == "abcDEF123"
    assert "gAAAA-enc" not in json.dumps(body)
    assert "Need a screenshot." not in json.dumps(body)  # OpenAI's thinking is foreign here
