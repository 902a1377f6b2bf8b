"""Gemini / Vertex adapters: request conversion, configuration, stream mapping, errors."""

from __future__ import annotations

import json
import sys
from functools import partial
from typing import Any

import pytest
from google.genai import types as genai

from tau.ai import Context, UserMessage, stream, stream_simple
from tau.ai.core.types import (
    AssistantMessage,
    ImageContent,
    Model,
    TextContent,
    ThinkingContent,
    Tool,
    ToolCall,
)
from tau.ai.providers.google import request as shared
from tau.ai.providers.google import vertex as google_vertex
from tests import factories
from tests.ai.servers import SSE_HEADERS, LocalServer, Reply
from tests.ai.stream_checks import check_grammar, stream_aborting_at

SIG = "c2lnbmF0dXJl"  # valid base64
IMG = ImageContent("aGVsbG8=", "image/png")


def gemini(model_id: str = "gemini-2.5-flash", **kw: Any) -> Model:
    kw.setdefault("reasoning", True)
    kw.setdefault("input", ["text", "image"])
    base_url = kw.pop("base_url", "https://generativelanguage.googleapis.com/v1beta")
    return factories.model("google-generative-ai", "google", model_id, base_url, **kw)


assistant = factories.assistant
result = partial(factories.tool_result, name="get", image=IMG)


def validate_body(body: dict[str, Any]) -> None:
    """Check a request body against google-genai's own (extra-forbidding) pydantic types."""
    for content in body["contents"]:
        genai.Content.model_validate(content)
    if "systemInstruction" in body:
        genai.Content.model_validate(body["systemInstruction"])
    for tool in body.get("tools", []):
        genai.Tool.model_validate(tool)
    if "toolConfig" in body:
        genai.ToolConfig.model_validate(body["toolConfig"])
    if "generationConfig" in body:
        genai.GenerationConfig.model_validate(body["generationConfig"])
    assert set(body) <= {"contents", "systemInstruction", "tools", "toolConfig", "generationConfig"}


# --------------------------------------------------------------------------- conversion


def test_user_messages_text_images_and_text_only_models() -> None:
    model = gemini()
    msgs = [UserMessage("hi"), UserMessage([TextContent("look"), IMG]), UserMessage("")]
    assert shared.convert_messages(msgs, model) == [
        {"role": "user", "parts": [{"text": "hi"}]},
        {
            "role": "user",
            "parts": [
                {"text": "look"},
                {"inlineData": {"mimeType": "image/png", "data": "aGVsbG8="}},
            ],
        },
    ]
    text_only = gemini(input=["text"])
    assert shared.convert_messages(msgs[1:2], text_only) == [
        {"role": "user", "parts": [{"text": "look"}]}
    ]


def test_same_model_keeps_valid_signatures_and_thought_flag() -> None:
    model = gemini()
    msg = assistant(
        model,
        ThinkingContent("pondering", SIG),
        TextContent("answer", SIG),
        TextContent("   "),
        ToolCall("c1", "get", {"a": 1}, SIG),
        ToolCall("c2", "get", {}, "not base64!"),
    )
    assert shared.convert_messages([msg], model) == [
        {
            "role": "model",
            "parts": [
                {"thought": True, "text": "pondering", "thoughtSignature": SIG},
                {"text": "answer", "thoughtSignature": SIG},
                {"functionCall": {"name": "get", "args": {"a": 1}}, "thoughtSignature": SIG},
                {"functionCall": {"name": "get", "args": {}}},
            ],
        }
    ]


def test_signatures_only_replay_to_the_same_provider_and_model() -> None:
    model = gemini()
    other = assistant(
        model,
        ThinkingContent("t", SIG),
        TextContent("x", SIG),
        ToolCall("c", "f", {}, SIG),
        model_id="gemini-2.0-flash",
    )
    body = shared.request_body(model, Context([UserMessage("q"), other, result("c")]), {})
    # Another model's thinking is left out; its signatures are not replayed.
    assert body["contents"][1]["parts"] == [
        {"text": "x"},
        {"functionCall": {"name": "f", "args": {}}},
    ]


def test_handoff_from_claude_to_gemini3_and_gemini_with_explicit_ids() -> None:
    claude = AssistantMessage(
        [
            ThinkingContent("claude thinks", "anthropic-signature"),
            TextContent("calling"),
            ToolCall("toolu_01+/=", "get", {"q": 1}),
        ],
        api="anthropic-messages",
        provider="anthropic",
        model="claude-sonnet-4-5",
        stop_reason="toolUse",
    )
    aborted = AssistantMessage(
        [TextContent("half")], api="x", provider="y", model="z", stop_reason="aborted"
    )
    history = [UserMessage("q"), claude, result("toolu_01+/="), aborted, UserMessage("again")]
    g3 = shared.request_body(gemini("gemini-3-pro-preview"), Context(history), {})
    validate_body(g3)
    assert g3["contents"] == [
        {"role": "user", "parts": [{"text": "q"}]},
        {
            "role": "model",
            "parts": [
                {"text": "calling"},
                {
                    "functionCall": {"name": "get", "args": {"q": 1}},
                    "thoughtSignature": shared.SKIP_THOUGHT_SIGNATURE,
                },
            ],
        },
        {
            "role": "user",
            "parts": [{"functionResponse": {"name": "get", "response": {"output": "ok"}}}],
        },
        {"role": "user", "parts": [{"text": "again"}]},
    ]
    # A non-Gemini model behind Google's API gets explicit, sanitised ids on both sides.
    ids = shared.request_body(gemini("claude-sonnet-4"), Context(history), {})["contents"]
    assert ids[1]["parts"][1]["functionCall"]["id"] == "toolu_01___"
    assert ids[2]["parts"][0]["functionResponse"]["id"] == "toolu_01___"


def test_lone_surrogates_are_removed_from_outgoing_text() -> None:
    body = shared.request_body(
        gemini(), Context([UserMessage("a\ud800b"), result("c", "x\udfffy")], "sys\ud83d"), {}
    )
    assert body["contents"][0]["parts"] == [{"text": "ab"}]
    assert body["systemInstruction"] == {"parts": [{"text": "sys"}]}
    json.dumps(body).encode("utf-8")  # encodable: no lone surrogate left


def test_gemini3_unsigned_calls_get_the_skip_sentinel() -> None:
    model = gemini("gemini-3-pro-preview")
    msg = AssistantMessage(
        [ToolCall("c", "f", {})], api="anthropic-messages", provider="anthropic", model="claude"
    )
    part = shared.request_body(model, Context([msg]), {})["contents"][0]["parts"][0]
    assert part["thoughtSignature"] == shared.SKIP_THOUGHT_SIGNATURE


def test_gemini3_parallel_calls_keep_gemini_signing() -> None:
    model = gemini("gemini-3-pro-preview")
    msg = assistant(model, ToolCall("a", "f", {}, SIG), ToolCall("b", "f", {}))
    parts = shared.convert_messages([msg], model)[0]["parts"]
    assert [p.get("thoughtSignature") for p in parts] == [SIG, None]
    unsigned = assistant(model, ToolCall("a", "f", {}), ToolCall("b", "f", {}))
    parts = shared.convert_messages([unsigned], model)[0]["parts"]
    assert [p.get("thoughtSignature") for p in parts] == [shared.SKIP_THOUGHT_SIGNATURE] * 2


def test_tool_results_output_error_and_merging() -> None:
    model = gemini()
    contents = shared.convert_messages(
        [result("a", "sunny"), result("b", "boom", error=True)], model
    )
    assert contents == [
        {
            "role": "user",
            "parts": [
                {"functionResponse": {"name": "get", "response": {"output": "sunny"}}},
                {"functionResponse": {"name": "get", "response": {"error": "boom"}}},
            ],
        }
    ]


def test_tool_result_images_gemini3_inline_older_separate_message() -> None:
    msgs = [result("a", "", images=1), result("b", "two")]
    g3 = shared.convert_messages(msgs, gemini("gemini-3-flash-preview"))
    assert len(g3) == 1
    first = g3[0]["parts"][0]["functionResponse"]
    assert first["response"] == {"output": "(see attached image)"}
    assert first["parts"] == [{"inlineData": {"mimeType": "image/png", "data": "aGVsbG8="}}]
    old = shared.convert_messages(msgs, gemini("gemini-2.5-flash"))
    assert [c["parts"][0].get("text") for c in old] == [None, "Tool result image:", None]
    assert "parts" not in old[0]["parts"][0]["functionResponse"]
    text_only = shared.convert_messages(msgs, gemini(input=["text"]))
    assert len(text_only) == 1 and text_only[0]["parts"][0]["functionResponse"]["response"] == {
        "output": ""
    }


def test_explicit_ids_for_claude_and_gpt_oss_only() -> None:
    claude = gemini("claude-sonnet-4")
    msgs = [assistant(claude, ToolCall("c1", "f", {})), result("c1")]
    contents = shared.convert_messages(msgs, claude)
    assert contents[0]["parts"][0]["functionCall"]["id"] == "c1"
    assert contents[1]["parts"][0]["functionResponse"]["id"] == "c1"
    assert "id" not in shared.convert_messages(msgs, gemini())[1]["parts"][0]["functionResponse"]


# --------------------------------------------------------------------------- tools, config


WEATHER_SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "additionalProperties": False,
    "$defs": {
        "Unit": {"type": "string", "enum": ["c", "f"]},
        "Node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/Node"}}},
    },
    "properties": {
        "city": {"type": "string", "examples": ["Paris"]},
        "unit": {"$ref": "#/$defs/Unit"},
        "days": {"type": ["integer", "null"], "exclusiveMinimum": 0},
        "mode": {"const": "fast"},
        "either": {"oneOf": [{"type": "string"}, {"type": "number"}]},
        "mixed": {"type": ["string", "number"]},
        "tree": {"$ref": "#/$defs/Node"},
        "merged": {
            "allOf": [
                {"properties": {"a": {"type": "string"}}, "required": ["a"]},
                {"properties": {"b": {"type": "string"}}},
            ]
        },
    },
    "required": ["city"],
}


def test_tools_use_parameters_json_schema_untouched() -> None:
    tools = shared.convert_tools([Tool("weather", "Get weather", WEATHER_SCHEMA)])
    assert tools == [
        {
            "functionDeclarations": [
                {
                    "name": "weather",
                    "description": "Get weather",
                    "parametersJsonSchema": WEATHER_SCHEMA,
                }
            ]
        }
    ]
    genai.Tool.model_validate(tools[0])
    assert shared.convert_tools([]) == []


def test_legacy_schema_conversion_is_accepted_by_gemini_schema_type() -> None:
    legacy = shared.to_legacy_schema(WEATHER_SCHEMA)
    genai.Schema.model_validate(legacy)  # extra="forbid": any rejected keyword fails here
    props = legacy["properties"]
    assert "additionalProperties" not in legacy and "$schema" not in legacy
    assert props["unit"] == {"type": "string", "enum": ["c", "f"]}
    assert props["days"] == {"type": "integer", "nullable": True, "minimum": 0}
    assert props["mode"] == {"enum": ["fast"], "type": "string"}
    assert props["either"] == {"anyOf": [{"type": "string"}, {"type": "number"}]}
    assert props["mixed"] == {"anyOf": [{"type": "string"}, {"type": "number"}]}
    assert props["city"]["example"] == "Paris"
    assert props["tree"]["properties"]["next"]["type"] == "object"  # recursion cut
    assert props["merged"]["required"] == ["a"] and set(props["merged"]["properties"]) == {"a", "b"}


def test_legacy_parameters_for_non_gemini_models() -> None:
    body = shared.request_body(
        gemini("claude-sonnet-4"), Context([], tools=[Tool("w", "d", WEATHER_SCHEMA)]), {}
    )
    declaration = body["tools"][0]["functionDeclarations"][0]
    assert "parameters" in declaration and "parametersJsonSchema" not in declaration
    validate_body(body)


@pytest.mark.parametrize(
    ("choice", "config"),
    [
        ("auto", {"mode": "AUTO"}),
        ("none", {"mode": "NONE"}),
        ("any", {"mode": "ANY"}),
        ("get", {"mode": "ANY", "allowedFunctionNames": ["get"]}),
    ],
)
def test_tool_choice(choice: str, config: dict[str, Any]) -> None:
    context = Context([UserMessage("x")], tools=[Tool("get", "d")])
    body = shared.request_body(gemini(), context, {"tool_choice": choice})
    assert body["toolConfig"] == {"functionCallingConfig": config}
    validate_body(body)


def test_full_body_is_valid_for_google_genai_types() -> None:
    model = gemini("gemini-3-pro-preview")
    context = Context(
        [
            UserMessage([TextContent("hi"), IMG]),
            assistant(
                model,
                ThinkingContent("t", SIG),
                TextContent("a", SIG),
                ToolCall("c", "get", {"x": 1}, SIG),
            ),
            result("c", "done", images=1),
            UserMessage("next"),
        ],
        system_prompt="Be brief.",
        tools=[Tool("get", "Get it", WEATHER_SCHEMA)],
    )
    body = shared.request_body(
        model,
        context,
        {
            "temperature": 0.2,
            "max_tokens": 100,
            "tool_choice": "auto",
            "thinking": {"enabled": True, "level": "HIGH"},
        },
    )
    validate_body(body)
    assert body["systemInstruction"] == {"parts": [{"text": "Be brief."}]}
    assert body["generationConfig"] == {
        "temperature": 0.2,
        "maxOutputTokens": 100,
        "thinkingConfig": {"includeThoughts": True, "thinkingLevel": "HIGH"},
    }
    # Pydantic validation above would also accept snake_case: the wire must be camelCase.
    assert "function_call" not in json.dumps(body)


@pytest.mark.parametrize(
    ("model_id", "level", "expected"),
    [
        ("gemini-3-pro-preview", "minimal", {"level": "LOW"}),
        ("gemini-3-pro-preview", "medium", {"level": "HIGH"}),
        ("gemini-3.1-pro-preview", "xhigh", {"level": "HIGH"}),
        ("gemini-3-flash-preview", "minimal", {"level": "MINIMAL"}),
        ("gemini-3-flash-preview", "medium", {"level": "MEDIUM"}),
        ("gemini-2.5-pro", "minimal", {"budget_tokens": 128}),
        ("gemini-2.5-pro", "high", {"budget_tokens": 32768}),
        ("gemini-2.5-flash", "high", {"budget_tokens": 24576}),
        ("gemini-2.5-flash-lite", "low", {"budget_tokens": 2048}),
        ("gemini-2.0-flash-thinking", "low", {"budget_tokens": -1}),
    ],
)
def test_simple_thinking_per_family(model_id: str, level: Any, expected: dict[str, Any]) -> None:
    assert shared.simple_thinking(gemini(model_id), level, None) == {"enabled": True, **expected}


def test_simple_thinking_custom_budget_and_off() -> None:
    assert shared.simple_thinking(gemini("gemini-2.5-pro"), "low", {"low": 777}) == {
        "enabled": True,
        "budget_tokens": 777,
    }
    assert shared.simple_thinking(gemini(), None, None) == {"enabled": False}
    assert shared.thinking_config(gemini(), {"enabled": False}) is None
    assert (
        shared.thinking_config(gemini(reasoning=False), {"enabled": True, "budget_tokens": 5})
        is None
    )
    assert shared.thinking_config(gemini(), {"enabled": True, "budget_tokens": 0}) == {
        "includeThoughts": True,
        "thinkingBudget": 0,
    }


def test_signature_validity() -> None:
    assert shared.is_valid_signature(SIG)
    assert not shared.is_valid_signature("")
    assert not shared.is_valid_signature(None)
    assert not shared.is_valid_signature("abc")  # length not a multiple of 4
    assert not shared.is_valid_signature("ab-_")  # URL-safe alphabet


# --------------------------------------------------------------------------- streaming


def chunk(
    *parts: dict[str, Any],
    finish: str | None = None,
    usage: dict[str, Any] | None = None,
    finish_message: str | None = None,
) -> bytes:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": list(parts)}}
    if finish:
        candidate["finishReason"] = finish
    if finish_message:
        candidate["finishMessage"] = finish_message
    data: dict[str, Any] = {"candidates": [candidate]}
    if usage:
        data["usageMetadata"] = usage
    return b"data: " + json.dumps(data).encode() + b"\r\n\r\n"


async def run(
    body: list[Any],
    *,
    status: int = 200,
    model: Model | None = None,
    simple: bool = False,
    **options: Any,
) -> tuple[list[Any], AssistantMessage, Any]:
    headers = SSE_HEADERS if status == 200 else {"content-type": "application/json"}
    async with LocalServer([Reply(status, headers, body)]) as server:
        m = model or gemini(base_url=server.url + "/v1beta")
        options.setdefault("api_key", "k")
        options.setdefault("max_retries", 0)
        call = stream_simple if simple else stream
        s = call(m, Context([UserMessage("hi")]), **options)
        events = [e async for e in s]
        check_grammar(events, await s.result())
        if server.requests and server.requests[0].body and not options.get("on_payload"):
            validate_body(json.loads(server.requests[0].body))
        return events, await s.result(), server.requests[0] if server.requests else None


async def test_text_thinking_transitions_and_signature_retention() -> None:
    events, msg, request = await run(
        [
            chunk({"text": "hmm", "thought": True, "thoughtSignature": SIG}),
            chunk({"text": " more", "thought": True}),
            chunk({"text": "Hel"}, {"text": "lo", "thoughtSignature": "bmV3"}),
            chunk(
                {"text": ""},
                finish="STOP",
                usage={
                    "promptTokenCount": 10,
                    "cachedContentTokenCount": 4,
                    "candidatesTokenCount": 3,
                    "thoughtsTokenCount": 2,
                    "totalTokenCount": 15,
                },
            ),
        ]
    )
    assert request.path == "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
    assert [e.type for e in events] == [
        "start", "thinking_start", "thinking_delta", "thinking_delta", "thinking_end",
        "text_start", "text_delta", "text_delta", "text_end", "done",
    ]  # fmt: skip
    assert msg.content == [ThinkingContent("hmm more", SIG), TextContent("Hello", "bmV3")]
    u = msg.usage
    assert (u.input, u.output, u.cache_read, u.reasoning, u.total_tokens) == (6, 5, 4, 2, 15)


async def test_function_calls_ids_missing_and_duplicated_args_default() -> None:
    events, msg, _ = await run(
        [
            chunk({"functionCall": {"name": "a", "args": {"x": 1}, "id": "same"}}),
            chunk(
                {"functionCall": {"name": "b", "id": "same"}},
                {"functionCall": {"name": "c"}},
                finish="STOP",
            ),
        ]
    )
    calls = msg.tool_calls
    assert [c.name for c in calls] == ["a", "b", "c"]
    assert calls[0].id == "same" and len({c.id for c in calls}) == 3
    assert calls[1].id.startswith("b_") and calls[1].arguments == {}
    assert msg.stop_reason == "toolUse"
    assert [e.delta for e in events if e.type == "toolcall_delta"] == ['{"x": 1}', "{}", "{}"]


async def test_max_tokens_is_length() -> None:
    _, msg, _ = await run([chunk({"text": "cut"}, finish="MAX_TOKENS")])
    assert msg.stop_reason == "length" and msg.text == "cut"


async def test_safety_finish_is_an_error_with_the_reason() -> None:
    events, msg, _ = await run(
        [chunk({"text": "par"}, finish="SAFETY", finish_message="unsafe content")]
    )
    assert events[-1].type == "error"
    assert msg.stop_reason == "error" and msg.text == "par"
    assert msg.error_message == "Gemini stopped with SAFETY: unsafe content"


async def test_unknown_finish_reason_is_an_error() -> None:
    _, msg, _ = await run([chunk({"text": "x"}, finish="SOMETHING_NEW")])
    assert msg.stop_reason == "error" and "SOMETHING_NEW" in (msg.error_message or "")


async def test_blocked_prompt() -> None:
    body = b'data: {"promptFeedback": {"blockReason": "PROHIBITED_CONTENT"}, "usageMetadata": {"promptTokenCount": 3, "totalTokenCount": 3}}\n\n'
    _, msg, _ = await run([body])
    assert msg.stop_reason == "error"
    assert msg.error_message == "Gemini blocked the prompt: PROHIBITED_CONTENT"
    assert msg.usage.input == 3


async def test_truncated_stream_is_an_error_keeping_the_partial_text() -> None:
    _, msg, _ = await run([chunk({"text": "Hello"})])
    assert msg.stop_reason == "error"
    assert "ended before a finish reason" in (msg.error_message or "")
    assert msg.text == "Hello"


async def test_malformed_json_is_an_error() -> None:
    _, msg, _ = await run([chunk({"text": "ok"}), b'data: {"candidates": [\n\n'])
    assert msg.stop_reason == "error"
    assert "malformed JSON" in (msg.error_message or "")


async def test_error_event_inside_the_stream() -> None:
    _, msg, _ = await run(
        [
            chunk({"text": "a"}),
            b'data: {"error": {"code": 500, "message": "Internal error encountered.", "status": "INTERNAL"}}\n\n',
        ]
    )
    assert msg.stop_reason == "error"
    assert msg.error_message == "Google API error: Internal error encountered."


async def test_http_error_body_gives_the_provider_message_and_status() -> None:
    body = json.dumps(
        [{"error": {"code": 400, "message": "API key not valid.", "status": "INVALID_ARGUMENT"}}]
    ).encode()
    events, msg, _ = await run([body], status=400)
    assert [e.type for e in events] == ["start", "error"]
    assert msg.error_message == "400 INVALID_ARGUMENT: API key not valid."


async def test_missing_api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    s = stream(gemini(), Context([UserMessage("hi")]))
    msg = await s.result()
    assert msg.stop_reason == "error" and "GEMINI_API_KEY" in (msg.error_message or "")


async def test_headers_and_on_payload() -> None:
    seen = {}

    def hook(payload: dict[str, Any], model: Model) -> dict[str, Any]:
        seen.update(payload)
        return {**payload, "generationConfig": {"candidateCount": 1}}

    _, msg, request = await run(
        [chunk({"text": "x"}, finish="STOP")],
        headers={"x-extra": "1"},
        on_payload=hook,
        temperature=0.5,
    )
    assert msg.stop_reason == "stop"
    assert request.headers["x-extra"] == "1" and request.headers["x-goog-api-key"] == "k"
    assert seen["generationConfig"]["temperature"] == 0.5
    assert json.loads(request.body)["generationConfig"] == {"candidateCount": 1}


async def test_stream_simple_sends_thinking_config() -> None:
    async with LocalServer(
        [Reply(200, SSE_HEADERS, [chunk({"text": "x"}, finish="STOP")]) for _ in range(2)]
    ) as server:
        model = gemini("gemini-2.5-pro", base_url=server.url, max_tokens=65536)
        await stream_simple(
            model, Context([UserMessage("hi")]), api_key="k", reasoning="medium"
        ).result()
        await stream_simple(model, Context([UserMessage("hi")]), api_key="k").result()
        first, second = (json.loads(r.body) for r in server.requests)
    assert first["generationConfig"] == {
        "maxOutputTokens": 32000,
        "thinkingConfig": {"includeThoughts": True, "thinkingBudget": 8192},
    }
    assert second["generationConfig"] == {"maxOutputTokens": 32000}


# --------------------------------------------------------------------------- vertex


def vertex(base_url: str = "https://us-central1-aiplatform.googleapis.com") -> Model:
    return Model(
        id="gemini-2.5-flash",
        name="g",
        api="google-vertex",
        provider="google-vertex",
        base_url=base_url,
        reasoning=True,
    )


def test_vertex_urls() -> None:
    m = vertex()
    path = "publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
    assert (
        google_vertex.stream_url(m, "proj", "europe-west4")
        == f"https://europe-west4-aiplatform.googleapis.com/v1/projects/proj/locations/europe-west4/{path}"
    )
    assert (
        google_vertex.stream_url(m, "proj", "global")
        == f"https://aiplatform.googleapis.com/v1/projects/proj/locations/global/{path}"
    )
    assert google_vertex.stream_url(m, None, None) == f"https://aiplatform.googleapis.com/v1/{path}"


@pytest.fixture
def clean_gcp_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (
        "GOOGLE_CLOUD_API_KEY",
        "GOOGLE_CLOUD_PROJECT",
        "GCLOUD_PROJECT",
        "GOOGLE_CLOUD_LOCATION",
        "GOOGLE_APPLICATION_CREDENTIALS",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(google_vertex._Adc, "credentials", None)
    monkeypatch.setattr(google_vertex._Adc, "project", None)


async def test_vertex_api_key_from_env(
    clean_gcp_env: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GOOGLE_CLOUD_API_KEY", "vkey")
    monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", "proj")
    monkeypatch.setenv("GOOGLE_CLOUD_LOCATION", "us-central1")
    async with LocalServer(
        [Reply(200, SSE_HEADERS, [chunk({"text": "ok"}, finish="STOP")])]
    ) as server:
        msg = await stream(vertex(server.url), Context([UserMessage("hi")])).result()
        request = server.requests[0]
    assert msg.text == "ok"
    assert request.headers["x-goog-api-key"] == "vkey"
    assert (
        request.path
        == "/v1/projects/proj/locations/us-central1/publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
    )


class FakeCredentials:
    def __init__(self) -> None:
        self.token: str | None = None
        self.refreshes = 0

    @property
    def valid(self) -> bool:
        return self.token is not None

    def refresh(self, request: Any) -> None:
        self.refreshes += 1
        self.token = f"token-{self.refreshes}"


async def test_vertex_application_default_credentials(
    clean_gcp_env: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    import google.auth

    creds = FakeCredentials()
    calls = []

    def fake_default(scopes: list[str]) -> tuple[FakeCredentials, str]:
        calls.append(scopes)
        return creds, "adc-project"

    monkeypatch.setattr(google.auth, "default", fake_default)
    replies = [Reply(200, SSE_HEADERS, [chunk({"text": "ok"}, finish="STOP")]) for _ in range(2)]
    async with LocalServer(replies) as server:
        for _ in range(2):
            msg = await stream(
                vertex(server.url), Context([UserMessage("hi")]), location="global"
            ).result()
            assert msg.stop_reason == "stop", msg.error_message
        requests = server.requests
    assert calls == [["https://www.googleapis.com/auth/cloud-platform"]]  # loaded once
    assert creds.refreshes == 1  # still valid the second time
    assert requests[0].headers["authorization"] == "Bearer token-1"
    assert requests[0].path.startswith("/v1/projects/adc-project/locations/global/")


async def test_vertex_missing_location_and_project(
    clean_gcp_env: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    import google.auth

    monkeypatch.setattr(google.auth, "default", lambda scopes: (FakeCredentials(), None))
    msg = await stream(vertex(), Context([UserMessage("hi")]), location="global").result()
    assert msg.stop_reason == "error" and "needs a project" in (msg.error_message or "")
    msg = await stream(vertex(), Context([UserMessage("hi")]), project="p").result()
    assert "needs a location" in (msg.error_message or "") and "GOOGLE_CLOUD_LOCATION" in (
        msg.error_message or ""
    )


async def test_vertex_without_google_auth_names_the_extra(
    clean_gcp_env: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "google.auth", None)
    msg = await stream(
        vertex(), Context([UserMessage("hi")]), project="p", location="global"
    ).result()
    assert msg.stop_reason == "error"
    assert "tau[vertex]" in (msg.error_message or "") and "GOOGLE_CLOUD_API_KEY" in (
        msg.error_message or ""
    )


async def test_vertex_authenticated_marker_is_not_sent_as_a_key(
    clean_gcp_env: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    import google.auth

    monkeypatch.setattr(google.auth, "default", lambda scopes: (FakeCredentials(), "p"))
    async with LocalServer(
        [Reply(200, SSE_HEADERS, [chunk({"text": "ok"}, finish="STOP")])]
    ) as server:
        await stream(
            vertex(server.url),
            Context([UserMessage("hi")]),
            api_key="<authenticated>",
            location="global",
        ).result()
        request = server.requests[0]
    assert "x-goog-api-key" not in request.headers
    assert request.headers["authorization"] == "Bearer token-1"


def test_catalog_models_resolve_to_the_right_endpoints() -> None:
    from tau.ai.lookup.catalog import get_model
    from tau.ai.providers.google import gemini as google

    gem = get_model("google", "gemini-2.5-flash")
    assert google.stream_url(gem) == (
        "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash"
        ":streamGenerateContent?alt=sse"
    )
    vtx = get_model("google-vertex", "gemini-2.5-flash")
    assert google_vertex.stream_url(vtx, "p", "us-central1").startswith(
        "https://us-central1-aiplatform.googleapis.com/v1/projects/p/locations/us-central1/"
    )


async def test_cost_is_computed_even_when_the_stream_fails() -> None:
    from tau.ai.core.types import ModelCost

    usage = {
        "promptTokenCount": 1_000_000,
        "candidatesTokenCount": 500_000,
        "totalTokenCount": 1_500_000,
    }
    async with LocalServer(
        [Reply(200, SSE_HEADERS, [chunk({"text": "x"}, usage=usage)])]
    ) as server:
        m = gemini(base_url=server.url, cost=ModelCost(input=1.0, output=2.0))
        msg = await stream(m, Context([UserMessage("hi")]), api_key="k").result()
    assert msg.stop_reason == "error"  # truncated: no finish reason
    assert (
        msg.usage.cost.input == 1.0 and msg.usage.cost.output == 1.0 and msg.usage.cost.total == 2.0
    )


async def test_abort_mid_stream_keeps_the_partial_message() -> None:
    from tests.ai.servers import STALL

    async with LocalServer([Reply(200, SSE_HEADERS, [chunk({"text": "Hel"}), STALL])]) as server:
        events, msg = await stream_aborting_at(
            gemini(base_url=server.url), "text_delta", api_key="k"
        )
    check_grammar(events, msg)
    assert events[-1].type == "error" and msg.stop_reason == "aborted"
    assert msg.text == "Hel"
