"""Compat detection from provider id and base URL, and the field-by-field merge."""

from __future__ import annotations

import json
from dataclasses import fields

import pytest

from tau.ai.capabilities.serialization import dump_model, load_compat, load_model
from tau.ai.core.compat import OpenAICompletionsCompat
from tau.ai.core.types import Model
from tau.ai.providers.openai_completions.compat import detect_compat, resolve_compat
from tests import factories


def model(
    provider: str = "openai",
    base_url: str = "https://api.openai.com/v1",
    id: str = "gpt-4o-mini",
    compat: OpenAICompletionsCompat | None = None,
) -> Model:
    return factories.model("openai-completions", provider, id, base_url, compat=compat)


def test_openai_proper_defaults() -> None:
    c = detect_compat(model())
    assert c.supports_store and c.supports_developer_role and c.supports_reasoning_effort
    assert c.supports_usage_in_streaming and c.supports_strict_mode
    assert c.max_tokens_field == "max_completion_tokens"
    assert c.thinking_format == "openai"
    assert c.supports_prompt_cache_key
    assert not c.accepts_empty_tools
    assert not c.requires_tool_result_name and not c.requires_assistant_after_tool_result
    assert not c.requires_thinking_as_text
    assert c.reasoning_effort_map == {} and c.open_router_routing == {}


@pytest.mark.parametrize(
    ("provider", "url"),
    [
        ("cerebras", "https://api.cerebras.ai/v1"),
        ("custom", "https://api.cerebras.ai/v1"),
        ("xai", "https://proxy.example/v1"),
        ("custom", "https://api.x.ai/v1"),
        ("custom", "https://llm.chutes.ai/v1"),
        ("custom", "https://api.deepseek.com"),
        ("zai", "https://proxy.example/v1"),
        ("custom", "https://api.z.ai/api/paas/v4"),
        ("opencode", "https://proxy.example/v1"),
        ("custom", "https://opencode.ai/zen/go/v1"),
    ],
)
def test_non_standard_endpoints_drop_store_and_developer_role(provider: str, url: str) -> None:
    c = detect_compat(model(provider, url))
    assert not c.supports_store
    assert not c.supports_developer_role
    assert not c.supports_prompt_cache_key


def test_grok_and_zai_have_no_reasoning_effort() -> None:
    assert not detect_compat(model("xai", "https://api.x.ai/v1")).supports_reasoning_effort
    zai = detect_compat(model("zai", "https://api.z.ai/api/paas/v4"))
    assert not zai.supports_reasoning_effort
    assert zai.thinking_format == "zai"
    assert detect_compat(model("groq", "https://api.groq.com/openai/v1")).supports_reasoning_effort


def test_chutes_uses_max_tokens() -> None:
    assert (
        detect_compat(model("chutes", "https://llm.chutes.ai/v1")).max_tokens_field == "max_tokens"
    )


def test_groq_qwen3_effort_map() -> None:
    c = detect_compat(model("groq", "https://api.groq.com/openai/v1", id="qwen/qwen3-32b"))
    assert set(c.reasoning_effort_map.values()) == {"default"}
    assert "high" in c.reasoning_effort_map
    other = detect_compat(model("groq", "https://api.groq.com/openai/v1", id="openai/gpt-oss-20b"))
    assert other.reasoning_effort_map == {}


def test_openrouter_uses_its_reasoning_object() -> None:
    c = detect_compat(model("openrouter", "https://openrouter.ai/api/v1"))
    assert c.thinking_format == "openrouter"
    assert c.supports_store and c.accepts_empty_tools


def test_huggingface_and_mistral() -> None:
    hf = detect_compat(model("huggingface", "https://router.huggingface.co/v1"))
    assert not hf.supports_developer_role
    mistral = detect_compat(model("mistral", "https://api.mistral.ai/v1"))
    assert mistral.max_tokens_field == "max_tokens"
    assert not mistral.supports_usage_in_streaming and not mistral.supports_store


def test_merge_is_field_by_field() -> None:
    override = OpenAICompletionsCompat(
        supports_store=True,
        requires_tool_result_name=True,
        thinking_format="qwen",
        open_router_routing={"only": ["anthropic"]},
    )
    c = resolve_compat(model("xai", "https://api.x.ai/v1", compat=override))
    assert c.supports_store  # overridden
    assert c.requires_tool_result_name  # overridden
    assert c.thinking_format == "qwen"  # overridden
    assert c.open_router_routing == {"only": ["anthropic"]}
    assert not c.supports_developer_role  # still detected
    assert not c.supports_reasoning_effort  # still detected


def test_explicit_false_overrides_detected_true() -> None:
    override = OpenAICompletionsCompat(
        supports_usage_in_streaming=False, supports_strict_mode=False
    )
    c = resolve_compat(model(compat=override))
    assert not c.supports_usage_in_streaming
    assert not c.supports_strict_mode
    assert c.supports_store


# The pi JSON name of every compat field (camelCase, as pi's OpenAICompletionsCompat spells them).
PI_NAMES = {
    "supports_store": "supportsStore",
    "supports_developer_role": "supportsDeveloperRole",
    "supports_reasoning_effort": "supportsReasoningEffort",
    "reasoning_effort_map": "reasoningEffortMap",
    "supports_usage_in_streaming": "supportsUsageInStreaming",
    "max_tokens_field": "maxTokensField",
    "requires_tool_result_name": "requiresToolResultName",
    "requires_assistant_after_tool_result": "requiresAssistantAfterToolResult",
    "requires_thinking_as_text": "requiresThinkingAsText",
    "thinking_format": "thinkingFormat",
    "open_router_routing": "openRouterRouting",
    "vercel_gateway_routing": "vercelGatewayRouting",
    "supports_strict_mode": "supportsStrictMode",
    "supports_prompt_cache_key": "supportsPromptCacheKey",
    "accepts_empty_tools": "acceptsEmptyTools",
    "json_output": "jsonOutput",
}


def test_every_field_round_trips_through_json_in_pi_names() -> None:
    # Each field set to a value detection would not choose for api.openai.com.
    compat = OpenAICompletionsCompat(
        supports_store=False,
        supports_developer_role=False,
        supports_reasoning_effort=False,
        reasoning_effort_map={"high": "max"},
        supports_usage_in_streaming=False,
        max_tokens_field="max_tokens",
        requires_tool_result_name=True,
        requires_assistant_after_tool_result=True,
        requires_thinking_as_text=True,
        thinking_format="qwen",
        open_router_routing={"only": ["a"]},
        vercel_gateway_routing={"order": ["b"]},
        supports_strict_mode=False,
        supports_prompt_cache_key=False,
        accepts_empty_tools=True,
        json_output="json_object",
    )
    assert set(PI_NAMES) == {f.name for f in fields(OpenAICompletionsCompat)}
    data = json.loads(json.dumps(dump_model(model(compat=compat))))
    assert data["compat"] == {PI_NAMES[f.name]: getattr(compat, f.name) for f in fields(compat)}
    loaded = load_model(data)
    assert loaded.compat == compat
    # Every loaded value overrides detection.
    resolved = resolve_compat(loaded)
    assert all(getattr(resolved, f.name) == getattr(compat, f.name) for f in fields(compat))


def test_accepts_empty_tools_is_a_compat_field() -> None:
    assert load_compat({"acceptsEmptyTools": True}) == OpenAICompletionsCompat(
        accepts_empty_tools=True
    )
    assert not detect_compat(model()).accepts_empty_tools  # api.openai.com rejects tools: []
    assert resolve_compat(
        model(compat=OpenAICompletionsCompat(accepts_empty_tools=True))
    ).accepts_empty_tools


def test_detection_decides_every_field() -> None:
    for m in (model(), model("zai", "https://api.z.ai/api/paas/v4"), model("x", "http://h")):
        detected = detect_compat(m)
        assert [f.name for f in fields(detected) if getattr(detected, f.name) is None] == []


def test_json_output_is_detected_per_endpoint() -> None:
    assert detect_compat(model()).json_output == "json_schema"
    assert detect_compat(model(base_url="https://api.deepseek.com/v1")).json_output == "json_object"
    assert detect_compat(model(provider="zai", base_url="https://api.z.ai/api")).json_output == (
        "json_object"
    )
