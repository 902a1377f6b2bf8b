"""Per-endpoint differences of the OpenAI chat-completions protocol.

Every OpenAI-compatible server accepts a slightly different dialect (which role carries the
system prompt, which max-tokens field, whether ``store`` or ``stream_options`` are accepted,
how reasoning is switched on…). :func:`resolve_compat` detects the dialect from the provider id
and the base URL (both are checked, so a proxy URL still works when the provider is set) and
lets ``model.compat`` override any field.
"""

from __future__ import annotations

from dataclasses import fields, replace

from tau.ai.core.compat import OpenAICompletionsCompat, ResolvedCompat, ThinkingFormat
from tau.ai.core.types import Model


def is_endpoint(model: Model, provider: str, *url_parts: str) -> bool:
    """Whether ``model`` is ``provider``'s, by id or by any of ``url_parts`` in its base URL."""
    url = model.base_url.lower()
    return model.provider == provider or any(part in url for part in url_parts)


def detect_compat(model: Model) -> ResolvedCompat:
    """The dialect implied by ``model.provider`` and ``model.base_url`` alone."""
    url = model.base_url.lower()
    is_zai = is_endpoint(model, "zai", "api.z.ai")
    is_grok = is_endpoint(model, "xai", "api.x.ai")
    is_openrouter = is_endpoint(model, "openrouter", "openrouter.ai")
    is_groq = is_endpoint(model, "groq", "groq.com")
    # Mistral's chat endpoint validates strictly and rejects OpenAI-only fields.
    is_mistral = is_endpoint(model, "mistral", "api.mistral.ai")
    is_openai = is_endpoint(model, "openai", "api.openai.com")
    non_standard = (
        is_endpoint(model, "cerebras", "cerebras.ai")
        or is_grok
        or "chutes.ai" in url
        or "deepseek.com" in url
        or is_zai
        or is_endpoint(model, "opencode", "opencode.ai")
        or is_mistral
    )
    effort_map: dict[str, str] = {}
    if is_groq and model.id == "qwen/qwen3-32b":
        # Groq's Qwen3 only knows "none" and "default".
        effort_map = dict.fromkeys(("minimal", "low", "medium", "high", "xhigh"), "default")
    thinking_format: ThinkingFormat = "openai"
    if is_zai:
        thinking_format = "zai"
    elif is_openrouter:
        thinking_format = "openrouter"
    return OpenAICompletionsCompat(
        supports_store=not non_standard,
        supports_developer_role=not non_standard
        and not is_endpoint(model, "huggingface", "huggingface.co"),
        supports_reasoning_effort=not (is_grok or is_zai),
        reasoning_effort_map=effort_map,
        # Mistral always reports usage and rejects ``stream_options``.
        supports_usage_in_streaming=not is_mistral,
        max_tokens_field="max_tokens"
        if ("chutes.ai" in url or is_mistral)
        else ("max_completion_tokens"),
        requires_tool_result_name=False,
        requires_assistant_after_tool_result=False,
        requires_thinking_as_text=False,
        thinking_format=thinking_format,
        open_router_routing={},
        vercel_gateway_routing={},
        supports_strict_mode=True,
        supports_prompt_cache_key=is_openai,
        accepts_empty_tools=not is_openai,
        # DeepSeek and z.ai have only the JSON mode; everyone else takes a json_schema.
        json_output="json_object" if ("deepseek.com" in url or is_zai) else "json_schema",
    )


def resolve_compat(model: Model) -> ResolvedCompat:
    """Detected compat, overridden field by field by whatever ``model.compat`` sets."""
    detected = detect_compat(model)
    override = model.compat
    if override is None:
        return detected
    overridden = {
        f.name: value for f in fields(override) if (value := getattr(override, f.name)) is not None
    }
    return replace(detected, **overridden)


__all__ = [
    "OpenAICompletionsCompat",
    "ResolvedCompat",
    "detect_compat",
    "is_endpoint",
    "resolve_compat",
]
