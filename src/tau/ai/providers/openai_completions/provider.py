"""The ``openai-completions`` provider record: Chat Completions and every server that speaks it."""

from __future__ import annotations

import json

from tau.ai.core.errors import ProviderError, ProviderHTTPError
from tau.ai.core.types import Model
from tau.ai.lookup.env_keys import resolve_api_key
from tau.ai.lookup.provider import Provider, builder_decoder
from tau.ai.providers.openai_completions.decoder import OpenAICompletionsDecoder
from tau.ai.providers.openai_completions.options import OpenAICompletionsOptions
from tau.ai.providers.openai_completions.request import build_request
from tau.ai.providers.simple_options import reasoning_effort

__all__ = ["PROVIDER", "explain_http_error"]


def explain_http_error(
    exc: ProviderHTTPError, model: Model, options: OpenAICompletionsOptions
) -> ProviderError:
    """The error's text, with OpenRouter's explanation of an upstream failure
    (``error.metadata.raw``) when the body has one, and a hint when no key was sent."""
    text = str(exc)
    if exc.body:
        try:
            parsed = json.loads(exc.body)
        except ValueError:
            parsed = None
        error = parsed.get("error") if isinstance(parsed, dict) else None
        if isinstance(error, dict) and isinstance(error.get("metadata"), dict):
            raw = error["metadata"].get("raw")
            if raw:
                text = f"{text}\n{raw if isinstance(raw, str) else json.dumps(raw)}"
    if exc.status == 401 and not resolve_api_key(model, options):
        text += f" (no API key was sent: set the {model.provider} key variable or pass api_key=)"
    return ProviderError(text)


PROVIDER = Provider(
    api="openai-completions",
    options=OpenAICompletionsOptions,
    prefix="openai_",
    env_keys={
        "github-copilot": ("COPILOT_GITHUB_TOKEN", "GH_TOKEN", "GITHUB_TOKEN"),
        "groq": ("GROQ_API_KEY",),
        "cerebras": ("CEREBRAS_API_KEY",),
        "xai": ("XAI_API_KEY",),
        "openrouter": ("OPENROUTER_API_KEY",),
        "zai": ("ZAI_API_KEY",),
        "huggingface": ("HF_TOKEN",),
        "deepseek": ("DEEPSEEK_API_KEY",),
    },
    build_request=build_request,
    decoder=builder_decoder(OpenAICompletionsDecoder),
    explain=explain_http_error,
    reasoning=reasoning_effort,
)
"""OpenAI Chat Completions, and Groq, Cerebras, xAI, OpenRouter, DeepSeek, local servers…"""
