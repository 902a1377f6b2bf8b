"""The openai-completions adapter end to end over an injected transport: requests, errors, simple options."""

from __future__ import annotations

import json
from typing import Any

import httpx2

from tau.ai import Context, UserMessage, complete, complete_simple
from tau.ai.core.types import AssistantMessage, Model
from tests import factories

SSE = (
    'data: {"choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}]}\n\n'
    'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n'
    "data: [DONE]\n\n"
)


def model(
    provider: str = "openai",
    base_url: str = "https://api.openai.com/v1",
    id: str = "gpt-4o-mini",
    reasoning: bool = False,
) -> Model:
    return factories.model("openai-completions", provider, id, base_url, reasoning=reasoning)


class Recorder:
    def __init__(
        self, status: int = 200, body: str = SSE, content_type: str = "text/event-stream"
    ) -> None:
        self.status = status
        self.body = body
        self.content_type = content_type
        self.requests: list[httpx2.Request] = []

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(request)
        return httpx2.Response(
            self.status, headers={"content-type": self.content_type}, content=self.body.encode()
        )

    @property
    def json(self) -> dict[str, Any]:
        return json.loads(self.requests[-1].content)


async def run(m: Model, rec: Recorder, simple: bool = False, **options: Any) -> AssistantMessage:
    async with httpx2.AsyncClient(transport=httpx2.MockTransport(rec)) as client:
        fn = complete_simple if simple else complete
        return await fn(m, Context([UserMessage("hello")]), client=client, max_retries=0, **options)


async def test_request_url_headers_and_body() -> None:
    rec = Recorder()
    m = model()
    m.headers = {"x-model": "1", "x-both": "model"}
    msg = await run(m, rec, api_key="sk-1", headers={"x-both": "option"})
    assert msg.text == "Hi" and msg.stop_reason == "stop"
    request = rec.requests[0]
    assert str(request.url) == "https://api.openai.com/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer sk-1"
    assert request.headers["x-model"] == "1" and request.headers["x-both"] == "option"
    assert rec.json["stream"] is True and rec.json["messages"] == [
        {"role": "user", "content": "hello"}
    ]


async def test_on_payload_can_replace_the_body() -> None:
    rec = Recorder()

    def hook(payload: dict[str, Any], m: Model) -> dict[str, Any]:
        return {**payload, "seed": 7}

    await run(model(), rec, api_key="k", on_payload=hook)
    assert rec.json["seed"] == 7


async def test_http_error_carries_status_and_provider_message() -> None:
    body = json.dumps({"error": {"message": "Invalid model", "type": "invalid_request_error"}})
    msg = await run(model(), Recorder(400, body, "application/json"), api_key="k")
    assert msg.stop_reason == "error"
    assert msg.error_message is not None
    assert msg.error_message.startswith("400") and "Invalid model" in msg.error_message


async def test_openrouter_metadata_raw_is_appended() -> None:
    body = json.dumps(
        {
            "error": {
                "message": "Provider returned error",
                "code": 400,
                "metadata": {"raw": "upstream: bad tool schema"},
            }
        }
    )
    m = model("openrouter", "https://openrouter.ai/api/v1", "anthropic/claude-sonnet-4.5")
    msg = await run(m, Recorder(400, body, "application/json"), api_key="k")
    assert msg.error_message is not None
    assert "Provider returned error" in msg.error_message
    assert msg.error_message.endswith("\nupstream: bad tool schema")


async def test_401_without_a_key_says_so(monkeypatch: Any) -> None:
    monkeypatch.delenv("GROQ_API_KEY", raising=False)
    body = json.dumps({"error": {"message": "Invalid API Key"}})
    msg = await run(
        model("groq", "https://api.groq.com/openai/v1"), Recorder(401, body, "application/json")
    )
    assert msg.error_message is not None
    assert "401" in msg.error_message and "no API key was sent" in msg.error_message


async def test_empty_200_body_is_an_error() -> None:
    msg = await run(model(), Recorder(200, ""), api_key="k")
    assert msg.stop_reason == "error"
    assert "empty response" in (msg.error_message or "")


async def test_context_overflow_status_error_is_recognised() -> None:
    from tau.ai.capabilities.overflow import is_context_overflow

    body = json.dumps(
        {
            "error": {
                "message": "This model's maximum context length is 128000 tokens. However, you requested 130000 tokens."
            }
        }
    )
    msg = await run(model(), Recorder(400, body, "application/json"), api_key="k")
    assert is_context_overflow(msg)


async def test_simple_reasoning_levels() -> None:
    rec = Recorder()
    await run(model(id="o4-mini", reasoning=True), rec, simple=True, api_key="k", reasoning="xhigh")
    assert rec.json["reasoning_effort"] == "high"  # clamped: no xhigh on this model
    await run(model(id="gpt-5.2", reasoning=True), rec, simple=True, api_key="k", reasoning="xhigh")
    assert rec.json["reasoning_effort"] == "xhigh"
    await run(model(id="gpt-4o"), rec, simple=True, api_key="k", reasoning="high")
    assert "reasoning_effort" not in rec.json  # ignored silently on a non-reasoning model
    await run(model(id="o4-mini", reasoning=True), rec, simple=True, api_key="k")
    assert "reasoning_effort" not in rec.json
    assert rec.json["max_completion_tokens"] == 16_384  # min(model.max_tokens, 32000)


async def test_simple_forwards_tool_choice() -> None:
    rec = Recorder()
    await run(model(), rec, simple=True, api_key="k", tool_choice="none")
    assert rec.json["tool_choice"] == "none"


async def test_copilot_dynamic_headers() -> None:
    from tau.ai import ImageContent, TextContent

    rec = Recorder()
    m = model("github-copilot", "https://api.individual.githubcopilot.com", "gpt-4.1")
    async with httpx2.AsyncClient(transport=httpx2.MockTransport(rec)) as client:
        ctx = Context([UserMessage([TextContent("see"), ImageContent("aGk=", "image/png")])])
        await complete(m, ctx, client=client, api_key="k")
    headers = rec.requests[0].headers
    assert headers["x-initiator"] == "user"
    assert headers["openai-intent"] == "conversation-edits"
    assert headers["copilot-vision-request"] == "true"
    # Not sent to other providers.
    await run(model(), rec, api_key="k")
    assert "x-initiator" not in rec.requests[-1].headers


async def test_retry_after_429_then_success_over_a_local_server() -> None:
    from tests.ai.servers import SSE_HEADERS, LocalServer, Reply

    replies = [
        Reply(
            429,
            {"content-type": "application/json", "retry-after-ms": "10"},
            [b'{"error":{"message":"slow down"}}'],
        ),
        Reply(200, SSE_HEADERS, [SSE.encode()]),
    ]
    async with LocalServer(replies) as server:
        m = model("vllm", server.url + "/v1", "local-model")
        msg = await complete(m, Context([UserMessage("hi")]), api_key="k")
    assert msg.stop_reason == "stop" and msg.text == "Hi"
    assert len(server.requests) == 2


async def test_abort_mid_stream_keeps_partial_text() -> None:
    from tau.ai import AbortController, stream
    from tests.ai.servers import SSE_HEADERS, STALL, LocalServer, Reply

    first = (
        b'data: {"choices":[{"index":0,"delta":{"content":"Partial"},"finish_reason":null}]}\n\n'
    )
    async with LocalServer([Reply(200, SSE_HEADERS, [first, STALL])]) as server:
        m = model("vllm", server.url + "/v1", "local-model")
        controller = AbortController()
        s = stream(m, Context([UserMessage("hi")]), api_key="k", signal=controller.signal)
        async for event in s:
            if event.type == "text_delta":
                controller.abort()
        msg = await s.result()
    assert msg.stop_reason == "aborted"
    assert msg.text == "Partial"


async def test_truncated_stream_over_a_local_server() -> None:
    from tests.ai.servers import CLOSE, SSE_HEADERS, LocalServer, Reply

    first = b'data: {"choices":[{"index":0,"delta":{"content":"Cut"},"finish_reason":null}]}\n\n'
    async with LocalServer([Reply(200, SSE_HEADERS, [first, CLOSE])]) as server:
        m = model("vllm", server.url + "/v1", "local-model")
        msg = await complete(m, Context([UserMessage("hi")]), api_key="k")
    assert msg.stop_reason == "error" and msg.text == "Cut"
    assert msg.error_message
