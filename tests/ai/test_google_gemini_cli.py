"""``google-gemini-cli``: Cloud Code Assist's ``streamGenerateContent`` (Gemini CLI and
Antigravity). Streams written from the documented ``GenerateContentResponse`` shape inside
Cloud Code Assist's ``{"response": …}`` envelope; request bodies checked against pi's
``packages/ai/src/providers/google-gemini-cli.ts`` (``buildRequest``, its headers and
``extractRetryDelay``)."""

from __future__ import annotations

import json
from typing import Any

from tau.ai import Context, Tool, UserMessage, get_model, stream
from tau.ai.core.types import TextContent, ThinkingContent, ToolCall
from tests import factories
from tests.ai.servers import SSE_HEADERS, LocalServer, Reply
from tests.ai.stream_checks import check_grammar

KEY = json.dumps({"token": "ya29.access-token", "projectId": "proj-1"})
TOOL = Tool("get", "Get a thing", {"type": "object", "properties": {"q": {"type": "string"}}})


def model(
    base_url: str, provider: str = "google-gemini-cli", model_id: str = "gemini-2.5-pro"
) -> Any:
    return factories.model("google-gemini-cli", provider, model_id, base_url, reasoning=True)


def chunk(
    *parts: dict[str, Any], finish: str | None = None, usage: dict[str, Any] | None = None
) -> bytes:
    response: dict[str, Any] = {"responseId": "resp-1", "modelVersion": "gemini-2.5-pro"}
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": list(parts)}}
    if finish:
        candidate["finishReason"] = finish
    response["candidates"] = [candidate]
    if usage:
        response["usageMetadata"] = usage
    return factories.sse({"response": response, "traceId": "t-1"})


async def run(
    replies: list[Reply],
    context: Context | None = None,
    *,
    provider: str = "google-gemini-cli",
    **options: Any,
) -> Any:
    async with LocalServer(replies) as server:
        options.setdefault("api_key", KEY)
        options.setdefault("max_retries", 0)
        s = stream(
            model(server.url, provider),
            context or Context([UserMessage("hi")], tools=[TOOL]),
            **options,
        )
        events = [e async for e in s]
        message = await s.result()
        check_grammar(events, message)
        return events, message, server.requests


async def test_thinking_text_parallel_calls_and_usage_out_of_the_envelope() -> None:
    body = [
        chunk({"text": "Let me see", "thought": True, "thoughtSignature": "c2ln"}),
        chunk({"text": "Both, then."}),
        chunk(
            {"functionCall": {"name": "get", "args": {"q": "a"}}},
            {"functionCall": {"name": "get", "args": {"q": "b"}}},
            finish="STOP",
            usage={"promptTokenCount": 50, "cachedContentTokenCount": 10,
                   "candidatesTokenCount": 7, "thoughtsTokenCount": 5, "totalTokenCount": 62},
        ),
    ]  # fmt: skip
    _, message, requests = await run([Reply(200, SSE_HEADERS, body)])
    assert message.stop_reason == "toolUse", message.error_message
    assert [type(b) for b in message.content] == [ThinkingContent, TextContent, ToolCall, ToolCall]
    assert message.content[0].thinking == "Let me see"
    calls = [b for b in message.content if isinstance(b, ToolCall)]
    assert [c.arguments for c in calls] == [{"q": "a"}, {"q": "b"}]
    assert calls[0].id != calls[1].id
    assert message.usage.input == 40 and message.usage.cache_read == 10
    assert message.usage.output == 12
    assert requests[0].path == "/v1internal:streamGenerateContent?alt=sse"
    headers = requests[0].headers
    # google-gemini-cli.ts: GEMINI_CLI_HEADERS and the bearer token from the JSON key.
    assert headers["authorization"] == "Bearer ya29.access-token"
    assert headers["user-agent"] == "google-cloud-sdk vscode_cloudshelleditor/0.1"
    assert json.loads(headers["client-metadata"])["pluginType"] == "GEMINI"


async def test_the_envelope_matches_pis_build_request() -> None:
    context = Context([UserMessage("hi")], system_prompt="Be brief.", tools=[TOOL])
    done = chunk({"text": "ok"}, finish="STOP")
    _, _, requests = await run(
        [Reply(200, SSE_HEADERS, [done])],
        context,
        session_id="sess-1",
        temperature=0.3,
        max_tokens=100,
    )
    body = json.loads(requests[0].body)
    # buildRequest: {project, model, request: {contents, sessionId, systemInstruction,
    # generationConfig, tools}, userAgent, requestId}; tau names itself where pi does.
    assert set(body) == {"project", "model", "request", "userAgent", "requestId"}
    assert body["project"] == "proj-1" and body["model"] == "gemini-2.5-pro"
    assert body["userAgent"] == "tau" and body["requestId"].startswith("tau-")
    request = body["request"]
    assert request["contents"] == [{"role": "user", "parts": [{"text": "hi"}]}]
    assert request["sessionId"] == "sess-1"
    assert request["systemInstruction"] == {"parts": [{"text": "Be brief."}]}
    assert request["generationConfig"] == {"temperature": 0.3, "maxOutputTokens": 100}
    declaration = request["tools"][0]["functionDeclarations"][0]
    assert declaration["name"] == "get" and declaration["description"] == "Get a thing"


async def test_antigravity_requests_are_an_agents_with_its_instruction_first() -> None:
    context = Context([UserMessage("hi")], system_prompt="Mine.")
    done = chunk({"text": "ok"}, finish="STOP")
    _, _, requests = await run(
        [Reply(200, SSE_HEADERS, [done])], context, provider="google-antigravity"
    )
    body = json.loads(requests[0].body)
    assert body["requestType"] == "agent" and body["userAgent"] == "antigravity"
    parts = body["request"]["systemInstruction"]["parts"]
    assert body["request"]["systemInstruction"]["role"] == "user"
    assert parts[0]["text"].startswith("You are Antigravity") and parts[-1] == {"text": "Mine."}
    assert requests[0].headers["user-agent"].startswith("antigravity/")


async def test_an_error_chunk_mid_stream_keeps_the_text() -> None:
    body = [
        chunk({"text": "partial"}),
        factories.sse({"error": {"code": 500, "message": "backend fell over"}}),
    ]
    _, message, _ = await run([Reply(200, SSE_HEADERS, body)])
    assert message.stop_reason == "error"
    assert "backend fell over" in (message.error_message or "")
    assert message.content[0].text == "partial"


QUOTA = {
    "error": {
        "code": 429,
        "message": "You have exhausted your capacity on this model. Your quota will reset after 0s.",
        "status": "RESOURCE_EXHAUSTED",
        "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "0.01s"}],
    }
}


async def test_a_429_is_retried_after_the_delay_its_body_names() -> None:
    done = chunk({"text": "ok"}, finish="STOP")
    _, message, requests = await run(
        [Reply(429, {"content-type": "application/json"}, [json.dumps(QUOTA).encode()]),
         Reply(200, SSE_HEADERS, [done])],
        max_retries=1,
    )  # fmt: skip
    assert message.stop_reason == "stop" and len(requests) == 2


async def test_a_delay_longer_than_the_cap_is_reported_not_waited() -> None:
    long = json.loads(json.dumps(QUOTA))
    long["error"]["details"][0]["retryDelay"] = "3600s"
    _, message, requests = await run(
        [Reply(429, {"content-type": "application/json"}, [json.dumps(long).encode()])],
        max_retries=2,
    )
    assert len(requests) == 1 and message.stop_reason == "error"
    assert "3600" in (message.error_message or "")


def test_body_named_delays_in_pis_three_spellings() -> None:
    from tau.ai.streaming.http._retry import retry_delay_from_body

    assert retry_delay_from_body(b'{"retryDelay": "1.5s"}') == 1.5
    assert retry_delay_from_body(b'{"retryDelay": "250ms"}') == 0.25
    assert retry_delay_from_body(b"Please retry in 2s.") == 2.0
    assert retry_delay_from_body(b"Your quota will reset after 1h2m3s.") == 3723.0
    assert retry_delay_from_body(b"no delay here") is None


async def test_an_api_key_instead_of_a_login_is_a_clear_error() -> None:
    _, message, requests = await run([], api_key="AIza-not-a-login")
    assert requests == [] and "tau login google-gemini-cli" in (message.error_message or "")


def test_the_catalog_lists_both_providers_with_pis_ids() -> None:
    assert get_model("google-gemini-cli", "gemini-2.5-pro").api == "google-gemini-cli"
    antigravity = get_model("google-antigravity", "gemini-3-flash")
    assert antigravity.api == "google-gemini-cli"
    assert antigravity.base_url == "https://daily-cloudcode-pa.sandbox.googleapis.com"
