"""Chat-completions request building: messages, tools and params, checked against the SDK."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tau.ai.core.compat import OpenAICompletionsCompat
from tau.ai.core.types import (
    AssistantMessage,
    Context,
    ImageContent,
    Message,
    Modality,
    Model,
    StopReason,
    TextContent,
    ThinkingContent,
    Tool,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from tau.ai.providers.openai_completions.compat import resolve_compat
from tau.ai.providers.openai_completions.request import (
    BRIDGE_TEXT,
    TOOL_IMAGES_TEXT,
    convert_messages,
    request_body,
)
from tests import factories
from tests.ai.openai_sdk_check import EXTENSION_KEYS, check_openai_body

IMG = ImageContent("aGVsbG8=", "image/png")
WEATHER = Tool(
    "get_weather",
    "Weather for a city",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)


def model(
    provider: str = "openai",
    base_url: str = "https://api.openai.com/v1",
    id: str = "gpt-4o-mini",
    *,
    reasoning: bool = False,
    images: bool = True,
    compat: OpenAICompletionsCompat | None = None,
) -> Model:
    modalities: list[Modality] = ["text", "image"] if images else ["text"]
    return factories.model(
        "openai-completions",
        provider,
        id,
        base_url,
        reasoning=reasoning,
        input=modalities,
        compat=compat,
    )


def assistant(
    *content: Any, m: Model | None = None, stop: StopReason = "toolUse"
) -> AssistantMessage:
    return factories.assistant(m or model(), *content, stop_reason=stop)


def tool_history() -> list[Message]:
    return [
        UserMessage("What is the weather in Paris and Rome?"),
        assistant(
            TextContent("Let me check."),
            ToolCall("call_1", "get_weather", {"city": "Paris"}),
            ToolCall("call_2", "get_weather", {"city": "Rome"}),
        ),
        ToolResultMessage("call_1", "get_weather", [TextContent("Sunny"), IMG]),
        ToolResultMessage("call_2", "get_weather", [IMG]),
        UserMessage([TextContent("And tomorrow?"), IMG]),
    ]


def body(m: Model, context: Context, **options: Any) -> dict[str, Any]:
    return request_body(m, context, options, messages=context.messages, compat=resolve_compat(m))  # type: ignore[arg-type]


def test_minimal_body_for_openai() -> None:
    b = body(model(), Context([UserMessage("hi")], system_prompt="Be brief."), max_tokens=100)
    assert b == {
        "model": "gpt-4o-mini",
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "hi"},
        ],
        "stream": True,
        "stream_options": {"include_usage": True},
        "store": False,
        "max_completion_tokens": 100,
    }
    check_openai_body(b)


def test_developer_role_only_for_reasoning_models_that_support_it() -> None:
    ctx = Context([UserMessage("hi")], system_prompt="sys")
    assert body(model(reasoning=True), ctx)["messages"][0]["role"] == "developer"
    xai = model("xai", "https://api.x.ai/v1", "grok-4", reasoning=True)
    assert body(xai, ctx)["messages"][0]["role"] == "system"


def test_tool_history_roles_and_images() -> None:
    m = model()
    b = body(m, Context(tool_history(), tools=[WEATHER]))
    check_openai_body(b)
    roles = [msg["role"] for msg in b["messages"]]
    assert roles == ["user", "assistant", "tool", "tool", "user", "user"]
    call_msg = b["messages"][1]
    assert call_msg["content"] == "Let me check."
    assert [json.loads(c["function"]["arguments"]) for c in call_msg["tool_calls"]] == [
        {"city": "Paris"},
        {"city": "Rome"},
    ]
    assert b["messages"][2] == {"role": "tool", "content": "Sunny", "tool_call_id": "call_1"}
    assert b["messages"][3]["content"] == "(see attached image)"
    images = b["messages"][4]["content"]
    assert images[0] == {"type": "text", "text": TOOL_IMAGES_TEXT}
    assert [p["type"] for p in images[1:]] == ["image_url", "image_url"]
    assert images[1]["image_url"]["url"] == "data:image/png;base64,aGVsbG8="
    assert b["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": "Weather for a city",
                "parameters": WEATHER.json_schema,
                "strict": False,
            },
        }
    ]


def test_bridge_and_tool_result_name() -> None:
    compat = OpenAICompletionsCompat(
        requires_assistant_after_tool_result=True, requires_tool_result_name=True
    )
    m = model(compat=compat)
    b = body(m, Context(tool_history(), tools=[WEATHER]))
    # ``name`` on tool messages is what such endpoints (e.g. Gemini's) require.
    check_openai_body(b, message_extensions={"name"})
    roles = [msg["role"] for msg in b["messages"]]
    # The spec'd order: the image message after the results gets a bridge before it.
    assert roles == ["user", "assistant", "tool", "tool", "assistant", "user", "user"]
    assert b["messages"][4] == {"role": "assistant", "content": BRIDGE_TEXT}
    assert b["messages"][2]["name"] == "get_weather"
    # Without images in the results, the bridge sits before the next user message.
    history = [
        UserMessage("q"),
        assistant(ToolCall("c1", "get_weather", {"city": "Oslo"})),
        ToolResultMessage("c1", "get_weather", [TextContent("Rain")]),
        UserMessage("thanks"),
    ]
    roles = [msg["role"] for msg in body(m, Context(history, tools=[WEATHER]))["messages"]]
    assert roles == ["user", "assistant", "tool", "assistant", "user"]


def test_images_dropped_for_text_only_models() -> None:
    m = model(images=False)
    b = body(m, Context(tool_history(), tools=[WEATHER]))
    roles = [msg["role"] for msg in b["messages"]]
    assert roles == ["user", "assistant", "tool", "tool", "user"]
    assert b["messages"][-1]["content"] == [{"type": "text", "text": "And tomorrow?"}]
    # A user message of images only disappears entirely.
    only_image = body(m, Context([UserMessage([IMG]), UserMessage("hi")]))
    assert only_image["messages"] == [{"role": "user", "content": "hi"}]


def test_empty_tools_sent_when_history_has_tools_except_to_openai() -> None:
    ctx = Context(tool_history())
    groq = model("groq", "https://api.groq.com/openai/v1", "llama-3.3-70b")
    assert body(groq, ctx)["tools"] == []
    check_openai_body(body(groq, ctx))
    assert "tools" not in body(model(), ctx)
    assert "tools" not in body(groq, Context([UserMessage("hi")]))


def test_assistant_text_is_one_plain_string_and_blank_parts_are_dropped() -> None:
    a = assistant(TextContent("Hello "), TextContent("  "), TextContent("world"), stop="stop")
    msgs = convert_messages(model(), None, [UserMessage("x"), a], resolve_compat(model()))
    assert msgs[1] == {"role": "assistant", "content": "Hello world"}
    empty = assistant(TextContent(" "), stop="stop")
    assert convert_messages(model(), None, [empty], resolve_compat(model())) == []


def test_reasoning_replay_field_from_signature() -> None:
    m = model("llamacpp", "http://127.0.0.1:8080/v1", "qwen3", reasoning=True)
    a = assistant(
        ThinkingContent("step 1", "reasoning_content"),
        ThinkingContent("step 2", "reasoning_content"),
        TextContent("Answer"),
        m=m,
        stop="stop",
    )
    msgs = convert_messages(m, None, [a], resolve_compat(m))
    assert msgs == [
        {"role": "assistant", "content": "Answer", "reasoning_content": "step 1\nstep 2"}
    ]
    # An unknown signature is not a field name: nothing is replayed.
    b = assistant(ThinkingContent("t", "EqQBCkYIBxgCKkD..."), TextContent("A"), m=m, stop="stop")
    assert convert_messages(m, None, [b], resolve_compat(m)) == [
        {"role": "assistant", "content": "A"}
    ]


def test_thinking_as_text_with_and_without_text() -> None:
    # The reference crashes on the first case ("unshift is not a function").
    compat = OpenAICompletionsCompat(requires_thinking_as_text=True)
    m = model(compat=compat, reasoning=True)
    a = assistant(ThinkingContent("I think", "reasoning"), TextContent("Answer"), m=m, stop="stop")
    assert convert_messages(m, None, [a], resolve_compat(m)) == [
        {"role": "assistant", "content": "I think\n\nAnswer"}
    ]
    b = assistant(ThinkingContent("Only thoughts"), ToolCall("c", "f", {}), m=m)
    out = convert_messages(m, None, [b], resolve_compat(m))
    assert out[0]["content"] == "Only thoughts"
    assert "reasoning" not in out[0]


def test_openrouter_encrypted_reasoning_details_replayed_from_tool_calls() -> None:
    m = model("openrouter", "https://openrouter.ai/api/v1", "google/gemini-3-pro")
    detail = {"type": "reasoning.encrypted", "id": "tool_1", "data": "c2ln", "format": "google"}
    a = assistant(ToolCall("tool_1", "f", {"x": 1}, thought_signature=json.dumps(detail)), m=m)
    msgs = convert_messages(m, None, [a], resolve_compat(m))
    assert msgs[0]["reasoning_details"] == [detail]


def test_openrouter_anthropic_cache_control_on_last_text() -> None:
    m = model("openrouter", "https://openrouter.ai/api/v1", "anthropic/claude-sonnet-4.5")
    b = body(m, Context([UserMessage("first"), UserMessage("second")], system_prompt="s"))
    assert b["messages"][-1]["content"] == [
        {"type": "text", "text": "second", "cache_control": {"type": "ephemeral"}}
    ]
    assert b["messages"][1]["content"] == "first"
    parts = body(m, Context([UserMessage([TextContent("a"), IMG])]))
    assert parts["messages"][-1]["content"][0]["cache_control"] == {"type": "ephemeral"}
    # Not for other OpenRouter models.
    other = model("openrouter", "https://openrouter.ai/api/v1", "openai/gpt-4o")
    assert body(other, Context([UserMessage("x")]))["messages"][-1]["content"] == "x"


def test_surrogates_removed_from_outgoing_text() -> None:
    lone = "bad \ud83d text"
    b = body(
        model(),
        Context([UserMessage(lone), assistant(TextContent(lone), stop="stop")], system_prompt=lone),
    )
    for msg in b["messages"]:
        assert msg["content"] == "bad  text"
    json.dumps(b).encode("utf-8")


@pytest.mark.parametrize(
    ("provider", "url", "effort", "expected"),
    [
        ("openai", "https://api.openai.com/v1", "high", {"reasoning_effort": "high"}),
        ("openai", "https://api.openai.com/v1", None, {}),
        ("zai", "https://api.z.ai/api/paas/v4", "low", {"thinking": {"type": "enabled"}}),
        ("zai", "https://api.z.ai/api/paas/v4", None, {"thinking": {"type": "disabled"}}),
        (
            "openrouter",
            "https://openrouter.ai/api/v1",
            "medium",
            {"reasoning": {"effort": "medium"}},
        ),
        ("xai", "https://api.x.ai/v1", "high", {}),
    ],
)
def test_reasoning_parameters(
    provider: str, url: str, effort: str | None, expected: dict[str, Any]
) -> None:
    m = model(provider, url, "some-model", reasoning=True)
    b = body(m, Context([UserMessage("hi")]), reasoning_effort=effort)
    got = {k: b[k] for k in ("reasoning_effort", "thinking", "reasoning") if k in b}
    assert got == expected
    check_openai_body(b, extensions=EXTENSION_KEYS)


def test_qwen_formats_and_effort_map() -> None:
    qwen = model(compat=OpenAICompletionsCompat(thinking_format="qwen"), reasoning=True)
    assert body(qwen, Context([UserMessage("x")]), reasoning_effort="low")["enable_thinking"]
    assert body(qwen, Context([UserMessage("x")]))["enable_thinking"] is False
    tmpl = model(
        compat=OpenAICompletionsCompat(thinking_format="qwen-chat-template"), reasoning=True
    )
    assert body(tmpl, Context([UserMessage("x")]), reasoning_effort="high")[
        "chat_template_kwargs"
    ] == {"enable_thinking": True}
    groq = model("groq", "https://api.groq.com/openai/v1", "qwen/qwen3-32b", reasoning=True)
    assert body(groq, Context([UserMessage("x")]), reasoning_effort="high")["reasoning_effort"] == (
        "default"
    )
    # Reasoning parameters never go to a non-reasoning model.
    plain = model(compat=OpenAICompletionsCompat(thinking_format="qwen"))
    assert "enable_thinking" not in body(plain, Context([UserMessage("x")]), reasoning_effort="low")


def test_prompt_cache_key_routing_and_tool_choice() -> None:
    ctx = Context([UserMessage("x")], tools=[WEATHER])
    b = body(model(), ctx, session_id="sess-1", tool_choice="required", temperature=0.2)
    assert b["prompt_cache_key"] == "sess-1"
    assert b["tool_choice"] == "required" and b["temperature"] == 0.2
    check_openai_body(b)
    assert "prompt_cache_key" not in body(model(), ctx, session_id="s", cache_retention="none")
    groq = model("groq", "https://api.groq.com/openai/v1")
    assert "prompt_cache_key" not in body(groq, ctx, session_id="s")
    named = body(model(), ctx, tool_choice={"type": "tool", "name": "get_weather"})
    assert named["tool_choice"] == {"type": "function", "function": {"name": "get_weather"}}
    check_openai_body(named)
    assert body(model(), ctx, tool_choice="any")["tool_choice"] == "required"

    routing = OpenAICompletionsCompat(open_router_routing={"only": ["anthropic"], "order": ["a"]})
    orm = model("openrouter", "https://openrouter.ai/api/v1", "x/y", compat=routing)
    assert body(orm, ctx)["provider"] == {"only": ["anthropic"], "order": ["a"]}
    gateway = OpenAICompletionsCompat(vercel_gateway_routing={"order": ["bedrock"], "only": []})
    vm = model("vercel-ai-gateway", "https://ai-gateway.vercel.sh/v1", "x/y", compat=gateway)
    assert body(vm, ctx)["providerOptions"] == {"gateway": {"order": ["bedrock"]}}


def test_compat_fields_shape_the_body() -> None:
    compat = OpenAICompletionsCompat(
        supports_store=False,
        supports_usage_in_streaming=False,
        supports_strict_mode=False,
        max_tokens_field="max_tokens",
    )
    b = body(model(compat=compat), Context([UserMessage("x")], tools=[WEATHER]), max_tokens=5)
    assert "store" not in b and "stream_options" not in b
    assert b["max_tokens"] == 5 and "max_completion_tokens" not in b
    assert "strict" not in b["tools"][0]["function"]
    check_openai_body(b)
