"""The union of every built-in provider's options: GENERATED from the provider records by
``scripts/generate_settings.py`` (do not edit; a test fails when this file is stale).

Loaded when ``tau.ai.ProviderStreamOptions`` is first used (``tau.ai`` resolves it lazily),
so ``import tau.ai`` imports no provider package.
"""

from __future__ import annotations

from tau.ai.providers.anthropic.options import AnthropicOptions
from tau.ai.providers.bedrock.options import BedrockOptions
from tau.ai.providers.google.options import (
    GoogleGeminiCliOptions,
    GoogleOptions,
    GoogleVertexOptions,
)
from tau.ai.providers.mistral.options import MistralOptions
from tau.ai.providers.openai_completions.options import OpenAICompletionsOptions
from tau.ai.providers.openai_responses.options import (
    AzureOpenAIResponsesOptions,
    OpenAICodexResponsesOptions,
    OpenAIResponsesOptions,
)

__all__ = ["ProviderStreamOptions"]


class ProviderStreamOptions(
    AnthropicOptions,
    OpenAICompletionsOptions,
    OpenAIResponsesOptions,
    AzureOpenAIResponsesOptions,
    GoogleOptions,
    GoogleVertexOptions,
    GoogleGeminiCliOptions,
    OpenAICodexResponsesOptions,
    MistralOptions,
    BedrockOptions,
    total=False,
):
    """Every option any built-in provider takes (for typing :func:`tau.ai.stream`'s
    keywords). Each provider accepts only its own; this union is what a caller that does
    not know the api yet may pass."""
