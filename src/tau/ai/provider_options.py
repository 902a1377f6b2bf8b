"""The options of every built-in adapter, and their union.

Loaded only when one of these names is first used (``tau.ai`` resolves them lazily), so
``import tau.ai`` imports no adapter package.
"""

from __future__ import annotations

from tau.ai.providers.anthropic.options import AnthropicOptions, AnthropicSimpleOptions
from tau.ai.providers.bedrock.options import BedrockOptions, BedrockSimpleOptions
from tau.ai.providers.google.options import (
    GoogleOptions,
    GoogleSimpleOptions,
    GoogleThinking,
    GoogleVertexOptions,
    GoogleVertexSimpleOptions,
)
from tau.ai.providers.mistral.options import MistralOptions, MistralSimpleOptions
from tau.ai.providers.openai_completions.options import (
    OpenAICompletionsOptions,
    OpenAICompletionsSimpleOptions,
)
from tau.ai.providers.openai_responses.options import (
    AzureOpenAIResponsesOptions,
    AzureOpenAIResponsesSimpleOptions,
    OpenAIResponsesOptions,
    OpenAIResponsesSimpleOptions,
)

__all__ = [
    "AnthropicOptions",
    "AnthropicSimpleOptions",
    "AzureOpenAIResponsesOptions",
    "AzureOpenAIResponsesSimpleOptions",
    "BedrockOptions",
    "BedrockSimpleOptions",
    "GoogleOptions",
    "GoogleSimpleOptions",
    "GoogleThinking",
    "GoogleVertexOptions",
    "GoogleVertexSimpleOptions",
    "MistralOptions",
    "MistralSimpleOptions",
    "OpenAICompletionsOptions",
    "OpenAICompletionsSimpleOptions",
    "OpenAIResponsesOptions",
    "OpenAIResponsesSimpleOptions",
    "ProviderStreamOptions",
]


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
