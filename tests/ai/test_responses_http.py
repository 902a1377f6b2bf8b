"""The Responses, Azure and Mistral adapters end to end over HTTP, against a 127.0.0.1 server:
URLs, headers, bodies, errors, truncated streams."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tau.ai import Context, UserMessage, complete, stream
from tau.ai.core.types import AssistantMessage, Model
from tau.ai.lookup.catalog import get_model
from tests.ai.servers import CLOSE, SSE_HEADERS, LocalServer, Reply
from tests.ai.stream_checks import check_grammar
from tests.factories import sse

HELLO = [
    {"type": "response.created", "response": {"status": "in_progress"}},
    {
        "type": "response.output_item.added",
        "output_index": 0,
        "item": {"type": "message", "id": "msg_1"},
    },
    {"type": "response.output_text.delta", "output_index": 0, "delta": "Hello"},
    {
        "type": "response.output_item.done",
        "output_index": 0,
        "item": {
            "type": "message",
            "id": "msg_1",
            "content": [{"type": "output_text", "text": "Hello"}],
        },
    },
    {
        "type": "response.completed",
        "response": {
            "status": "completed",
            "usage": {"input_tokens": 5, "output_tokens": 1, "total_tokens": 6},
        },
    },
]


def openai_model(url: str) -> Model:
    model = get_model("openai", "gpt-5-mini")
    assert model is not None
    model.base_url = url + "/v1"
    return model


def azure_model() -> Model:
    model = get_model("azure-openai-responses", "gpt-4.1")
    assert model is not None
    return model


def mistral_model(url: str) -> Model:
    model = get_model("mistral", "magistral-medium-latest")
    assert model is not None
    assert model.base_url == "https://api.mistral.ai"  # the catalog's: host only
    model.base_url = url
    return model


async def collect(model: Model, options: dict[str, Any]) -> tuple[list[Any], AssistantMessage]:
    s = stream(model, Context([UserMessage("hi")]), **options)
    seen = [e async for e in s]
    check_grammar(seen)
    return seen, await s.result()


async def test_openai_request_and_stream() -> None:
    async with LocalServer([Reply(200, SSE_HEADERS, [sse(*HELLO)])]) as server:
        _, message = await collect(
            openai_model(server.url),
            {"api_key": "sk-test", "session_id": "sess", "headers": {"x-extra": "1"}},
        )
    assert message.text == "Hello" and message.stop_reason == "stop"
    request = server.requests[0]
    assert (request.method, request.path) == ("POST", "/v1/responses")
    assert request.headers["authorization"] == "Bearer sk-test"
    assert request.headers["x-extra"] == "1"
    body = json.loads(request.body)
    assert body["store"] is False and body["stream"] is True
    assert body["prompt_cache_key"] == "sess"
    assert body["input"] == [{"role": "user", "content": [{"type": "input_text", "text": "hi"}]}]


async def test_openai_http_error_carries_the_provider_message() -> None:
    error = {"error": {"message": "Invalid 'input[1].id'", "type": "invalid_request_error"}}
    reply = Reply(400, {"content-type": "application/json"}, [json.dumps(error).encode()])
    async with LocalServer([reply]) as server:
        seen, message = await collect(openai_model(server.url), {"api_key": "k"})
    assert seen[-1].type == "error"
    assert message.error_message == "400 invalid_request_error: Invalid 'input[1].id'"


async def test_openai_missing_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    _, message = await collect(openai_model("http://127.0.0.1:9"), {})
    assert message.error_message == (
        "No API key for provider 'openai': set OPENAI_API_KEY or pass api_key"
    )


async def test_mistral_missing_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MISTRAL_API_KEY", raising=False)
    _, message = await collect(mistral_model("http://127.0.0.1:9"), {})
    assert message.error_message == (
        "No API key for provider 'mistral': set MISTRAL_API_KEY or pass api_key"
    )


async def test_truncated_http_stream_is_an_error() -> None:
    async with LocalServer([Reply(200, SSE_HEADERS, [sse(*HELLO[:3]), CLOSE])]) as server:
        seen, message = await collect(openai_model(server.url), {"api_key": "k"})
    assert seen[-1].type == "error"
    assert message.text == "Hello"


async def test_payload_hook_sees_and_replaces_the_body() -> None:
    def hook(payload: dict[str, Any], model: Model) -> dict[str, Any]:
        return {**payload, "metadata": {"k": "v"}}

    async with LocalServer([Reply(200, SSE_HEADERS, [sse(*HELLO)])]) as server:
        await collect(openai_model(server.url), {"api_key": "k", "on_payload": hook})
    assert json.loads(server.requests[0].body)["metadata"] == {"k": "v"}


# --------------------------------------------------------------------------- azure


async def test_azure_url_headers_and_deployment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AZURE_OPENAI_DEPLOYMENT_NAME_MAP", "gpt-4.1=prod-41")
    monkeypatch.delenv("AZURE_OPENAI_API_VERSION", raising=False)
    async with LocalServer([Reply(200, SSE_HEADERS, [sse(*HELLO)])]) as server:
        _, message = await collect(
            azure_model(),
            {"api_key": "az-key", "azure_base_url": server.url + "/openai/v1/", "session_id": "s"},
        )
    assert message.text == "Hello"
    request = server.requests[0]
    assert request.path == "/openai/v1/responses?api-version=v1"
    assert request.headers["api-key"] == "az-key"
    assert "authorization" not in request.headers
    body = json.loads(request.body)
    assert body["model"] == "prod-41"
    assert body["store"] is False and body["prompt_cache_key"] == "s"


async def test_azure_key_from_environment_and_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AZURE_OPENAI_API_KEY", raising=False)
    _, message = await collect(azure_model(), {"azure_base_url": "http://127.0.0.1:9"})
    assert (message.error_message or "").startswith("Azure OpenAI API key is required")
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", "from-env")
    monkeypatch.setenv("AZURE_OPENAI_API_VERSION", "2025-04-01-preview")
    async with LocalServer([Reply(200, SSE_HEADERS, [sse(*HELLO)])]) as server:
        await collect(azure_model(), {"azure_base_url": server.url + "/openai/v1"})
    assert server.requests[0].headers["api-key"] == "from-env"
    assert server.requests[0].path.endswith("?api-version=2025-04-01-preview")


# --------------------------------------------------------------------------- mistral

MISTRAL_BODY = (
    b'data: {"choices":[{"index":0,"delta":{"role":"assistant","content":"Hi"},"finish_reason":null}]}\n\n'
    b'data: {"choices":[{"index":0,"delta":{"content":" there"},"finish_reason":"stop"}],'
    b'"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}\n\n'
    b"data: [DONE]\n\n"
)


async def test_mistral_request_headers_and_affinity() -> None:
    replies = [Reply(200, SSE_HEADERS, [MISTRAL_BODY]), Reply(200, SSE_HEADERS, [MISTRAL_BODY])]
    async with LocalServer(replies) as server:
        model = mistral_model(server.url)
        _, message = await collect(model, {"api_key": "m-key", "session_id": "sess-9"})
        await collect(
            model, {"api_key": "m-key", "session_id": "sess-9", "headers": {"X-Affinity": "mine"}}
        )
    assert message.text == "Hi there" and message.usage.total_tokens == 5
    first, second = server.requests
    assert first.path == "/v1/chat/completions"
    assert first.headers["authorization"] == "Bearer m-key"
    assert first.headers["x-affinity"] == "sess-9"
    assert second.headers["x-affinity"] == "mine"
    assert json.loads(first.body)["messages"] == [{"role": "user", "content": "hi"}]


async def test_mistral_error_format() -> None:
    body = json.dumps(
        {"object": "error", "message": "x" * 5000, "type": "invalid_request"}
    ).encode()
    async with LocalServer([Reply(422, {"content-type": "application/json"}, [body])]) as server:
        seen, message = await collect(mistral_model(server.url), {"api_key": "k"})
    assert seen[-1].type == "error"
    text = message.error_message or ""
    assert text.startswith("Mistral API error (422): {")
    assert text.endswith(f"... [truncated {len(body) - 4000} chars]")


async def test_complete_returns_the_final_message() -> None:
    async with LocalServer([Reply(200, SSE_HEADERS, [MISTRAL_BODY])]) as server:
        message = await complete(
            mistral_model(server.url), Context([UserMessage("hi")]), api_key="k"
        )
    assert message.text == "Hi there"
