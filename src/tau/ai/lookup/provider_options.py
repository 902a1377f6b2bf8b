"""The union of every built-in adapter's options.

Loaded when ``tau.ai.ProviderStreamOptions`` is first used (``tau.ai`` resolves it lazily),
so ``import tau.ai`` imports no adapter package.
"""

from __future__ import annotations

from tau.ai.providers.anthropic.options import AnthropicOptions
from tau.ai.providers.bedrock.options import BedrockOptions
from tau.ai.providers.google.options import GoogleVertexOptions
from tau.ai.providers.mistral.options import MistralOptions
from tau.ai.providers.openai_completions.options import OpenAICompletionsOptions
from tau.ai.providers.openai_responses.options import (
    AzureOpenAIResponsesOptions,
    OpenAIResponsesOptions,
)

__all__ = ["ProviderStreamOptions"]


class ProviderStreamOptions(
    AnthropicOptions,
    OpenAICompletionsOptions,
    OpenAIResponsesOptions,
    AzureOpenAIResponsesOptions,
    GoogleVertexOptions,
    MistralOptions,
    BedrockOptions,
    total=False,
):
    """Every option any built-in adapter takes (for typing :func:`tau.ai.stream`'s keywords).

    Each adapter accepts only its own (``AnthropicOptions``…); this union is what a caller
    that does not know the api yet may pass.
    """
