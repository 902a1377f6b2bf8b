"""``openai-codex-responses``: ChatGPT's Codex backend. Streams written from the Responses
event shapes OpenAI documents (and Codex's ``response.done``), request bodies checked against
pi's ``packages/ai/src/providers/openai-codex-responses.ts`` (``buildRequestBody``,
``buildSSEHeaders``)."""

from __future__ import annotations

import json
from typing import Any

from tau.ai import Context, Tool, UserMessage, get_model, stream
from tau.ai.core.types import TextContent, ThinkingContent, ToolCall
from tests import factories
from tests.ai.oauth.fakes import make_jwt
from tests.ai.servers import SSE_HEADERS, LocalServer, Reply
from tests.ai.stream_checks import check_grammar

ACCOUNT = "acct-123"
TOKEN = make_jwt({"https://api.openai.com/auth": {"chatgpt_account_id": ACCOUNT}})
TOOL = Tool("get", "Get a thing", {"type": "object", "properties": {"q": {"type": "string"}}})


def codex(base_url: str, model_id: str = "gpt-5.2-codex") -> Any:
    return factories.model(
        "openai-codex-responses", "openai-codex", model_id, base_url, reasoning=True
    )


def usage() -> dict[str, Any]:
    return {
        "input_tokens": 120,
        "input_tokens_details": {"cached_tokens": 20},
        "output_tokens": 40,
        "output_tokens_details": {"reasoning_tokens": 12},
        "total_tokens": 160,
    }


def full_stream() -> bytes:
    """Reasoning, text, then two function calls in parallel, ended by ``response.done``."""
    return factories.sse(
        {"type": "response.created", "response": {"id": "resp_1", "status": "in_progress"}},
        {"type": "response.output_item.added", "output_index": 0,
         "item": {"type": "reasoning", "id": "rs_1", "summary": []}},
        {"type": "response.reasoning_summary_part.added", "output_index": 0, "item_id": "rs_1",
         "summary_index": 0, "part": {"type": "summary_text", "text": ""}},
        {"type": "response.reasoning_summary_text.delta", "output_index": 0, "item_id": "rs_1",
         "summary_index": 0, "delta": "Thinking it over."},
        {"type": "response.output_item.done", "output_index": 0,
         "item": {"type": "reasoning", "id": "rs_1", "encrypted_content": "enc",
                  "summary": [{"type": "summary_text", "text": "Thinking it over."}]}},
        {"type": "response.output_item.added", "output_index": 1,
         "item": {"type": "message", "id": "msg_1", "role": "assistant", "content": []}},
        {"type": "response.content_part.added", "output_index": 1, "item_id": "msg_1",
         "content_index": 0, "part": {"type": "output_text", "text": ""}},
        {"type": "response.output_text.delta", "output_index": 1, "item_id": "msg_1",
         "content_index": 0, "delta": "Looking "},
        {"type": "response.output_text.delta", "output_index": 1, "item_id": "msg_1",
         "content_index": 0, "delta": "both up."},
        {"type": "response.output_item.done", "output_index": 1,
         "item": {"type": "message", "id": "msg_1", "role": "assistant",
                  "content": [{"type": "output_text", "text": "Looking both up."}]}},
        {"type": "response.output_item.added", "output_index": 2,
         "item": {"type": "function_call", "id": "fc_1", "call_id": "call_a", "name": "get",
                  "arguments": ""}},
        {"type": "response.output_item.added", "output_index": 3,
         "item": {"type": "function_call", "id": "fc_2", "call_id": "call_b", "name": "get",
                  "arguments": ""}},
        {"type": "response.function_call_arguments.delta", "output_index": 2, "item_id": "fc_1",
         "delta": '{"q":'},
        {"type": "response.function_call_arguments.delta", "output_index": 3, "item_id": "fc_2",
         "delta": '{"q":"b"}'},
        {"type": "response.function_call_arguments.delta", "output_index": 2, "item_id": "fc_1",
         "delta": '"a"}'},
        {"type": "response.output_item.done", "output_index": 2,
         "item": {"type": "function_call", "id": "fc_1", "call_id": "call_a", "name": "get",
                  "arguments": '{"q":"a"}'}},
        {"type": "response.output_item.done", "output_index": 3,
         "item": {"type": "function_call", "id": "fc_2", "call_id": "call_b", "name": "get",
                  "arguments": '{"q":"b"}'}},
        {"type": "response.done",
         "response": {"id": "resp_1", "status": "completed", "usage": usage()}},
    )  # fmt: skip


async def run(replies: list[Reply], context: Context | None = None, **options: Any) -> Any:
    async with LocalServer(replies) as server:
        options.setdefault("api_key", TOKEN)
        options.setdefault("max_retries", 0)
        s = stream(
            codex(server.url), context or Context([UserMessage("hi")], tools=[TOOL]), **options
        )
        events = [e async for e in s]
        message = await s.result()
        check_grammar(events, message)
        return events, message, server.requests


async def test_text_thinking_parallel_tool_calls_and_usage() -> None:
    _, message, requests = await run([Reply(200, SSE_HEADERS, [full_stream()])])
    assert message.stop_reason == "toolUse", message.error_message
    kinds = [type(b) for b in message.content]
    assert kinds == [ThinkingContent, TextContent, ToolCall, ToolCall]
    assert message.content[0].thinking == "Thinking it over."
    assert message.content[1].text == "Looking both up."
    calls = [b for b in message.content if isinstance(b, ToolCall)]
    assert [c.arguments for c in calls] == [{"q": "a"}, {"q": "b"}]
    assert [c.id.split("|")[0] for c in calls] == ["call_a", "call_b"]
    assert (message.usage.input, message.usage.cache_read, message.usage.output) == (100, 20, 40)
    assert message.response_id == "resp_1"
    # pi's buildSSEHeaders: the bearer token, its account, the beta and the originator.
    headers = requests[0].headers
    assert requests[0].path == "/codex/responses"
    assert headers["authorization"] == f"Bearer {TOKEN}"
    assert headers["chatgpt-account-id"] == ACCOUNT
    assert headers["openai-beta"] == "responses=experimental"
    assert headers["originator"] == "tau" and headers["accept"] == "text/event-stream"


async def test_the_body_matches_pis_build_request_body() -> None:
    context = Context([UserMessage("hi")], system_prompt="Be brief.", tools=[TOOL])
    done = factories.sse({"type": "response.done", "response": {"id": "r", "status": "completed"}})
    _, _, requests = await run(
        [Reply(200, SSE_HEADERS, [done])],
        context,
        session_id="sess-1",
        reasoning_effort="minimal",
        temperature=0.5,
    )
    body = json.loads(requests[0].body)
    assert requests[0].headers["session_id"] == "sess-1"
    # openai-codex-responses.ts buildRequestBody: instructions hold the system prompt (not
    # input), verbosity medium, encrypted reasoning included, the session as cache key, auto
    # tool choice in parallel, tools with strict null, and minimal clamped to low on gpt-5.2+.
    assert body == {
        "model": "gpt-5.2-codex",
        "store": False,
        "stream": True,
        "instructions": "Be brief.",
        "input": [{"role": "user", "content": [{"type": "input_text", "text": "hi"}]}],
        "text": {"verbosity": "medium"},
        "include": ["reasoning.encrypted_content"],
        "prompt_cache_key": "sess-1",
        "tool_choice": "auto",
        "parallel_tool_calls": True,
        "temperature": 0.5,
        "tools": [
            {
                "type": "function",
                "name": "get",
                "description": "Get a thing",
                "parameters": TOOL.json_schema,
                "strict": None,
            }
        ],
        "reasoning": {"effort": "low", "summary": "auto"},
    }


def test_effort_clamping_follows_pi() -> None:
    from tau.ai.providers.openai_responses.codex import clamp_effort, codex_url

    assert clamp_effort("gpt-5.1", "xhigh") == "high"
    assert clamp_effort("gpt-5.1-codex-mini", "low") == "medium"
    assert clamp_effort("gpt-5.1-codex-mini", "xhigh") == "high"
    assert clamp_effort("openai/gpt-5.4", "minimal") == "low"
    assert (
        codex_url("https://chatgpt.com/backend-api/")
        == "https://chatgpt.com/backend-api/codex/responses"
    )
    assert codex_url("https://x/codex") == "https://x/codex/responses"


async def test_an_error_mid_stream_keeps_the_text_and_reports_the_error() -> None:
    body = factories.sse(
        {"type": "response.output_item.added", "output_index": 0,
         "item": {"type": "message", "id": "m", "role": "assistant", "content": []}},
        {"type": "response.output_text.delta", "output_index": 0, "item_id": "m",
         "content_index": 0, "delta": "partial"},
        {"type": "error", "code": "server_error", "message": "upstream died"},
    )  # fmt: skip
    _, message, _ = await run([Reply(200, SSE_HEADERS, [body])])
    assert message.stop_reason == "error"
    assert "upstream died" in (message.error_message or "")
    assert message.content and message.content[0].text == "partial"


async def test_a_429_is_retried_after_the_delay_named_and_a_usage_limit_said_plainly() -> None:
    done = factories.sse({"type": "response.done", "response": {"id": "r", "status": "completed"}})
    limited = json.dumps(
        {"error": {"type": "usage_limit_reached", "code": "usage_limit_reached",
                   "plan_type": "PLUS", "message": "limit"}}
    ).encode()  # fmt: skip
    _, message, requests = await run(
        [Reply(429, {"retry-after": "0", "content-type": "application/json"}, [limited]),
         Reply(200, SSE_HEADERS, [done])],
        max_retries=1,
    )  # fmt: skip
    assert message.stop_reason == "stop" and len(requests) == 2
    _, message, _ = await run([Reply(429, {"content-type": "application/json"}, [limited])])
    assert message.stop_reason == "error"
    assert "ChatGPT usage limit (plus plan)" in (message.error_message or "")


async def test_a_key_that_is_not_a_chatgpt_token_is_a_clear_error() -> None:
    _, message, requests = await run([], api_key="sk-plain-key")
    assert requests == [] and message.stop_reason == "error"
    assert "tau login openai-codex" in (message.error_message or "")


def test_the_catalog_lists_codex_models_with_pis_ids() -> None:
    model = get_model("openai-codex", "gpt-5.2-codex")
    assert model.api == "openai-codex-responses"
    assert model.base_url == "https://chatgpt.com/backend-api"
