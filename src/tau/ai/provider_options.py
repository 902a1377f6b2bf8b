"""The options of every built-in adapter, and their union.

Loaded only when one of these names is first used (``tau.ai`` resolves them lazily), so
``import tau.ai`` imports no adapter package.
"""

from __future__ import annotations

from typing import Any, Literal

from tau.ai.providers.anthropic.options import AnthropicOptions, AnthropicSimpleOptions
from tau.ai.providers.openai_completions.options import (
    OpenAICompletionsOptions,
    OpenAICompletionsSimpleOptions,
)
from tau.ai.types import ThinkingBudgets, ThinkingLevel

__all__ = [
    "AnthropicOptions",
    "AnthropicSimpleOptions",
    "OpenAICompletionsOptions",
    "OpenAICompletionsSimpleOptions",
    "ProviderStreamOptions",
]


class _Pending(AnthropicOptions, OpenAICompletionsOptions, total=False):
    reasoning_summary: Literal["auto", "detailed", "concise"] | None
    azure_api_version: str
    azure_resource_name: str
    azure_base_url: str
    azure_deployment_name: str
    thinking: dict[str, Any]
    project: str
    location: str
    stream_function_call_arguments: bool
    prompt_mode: Literal["reasoning"]
    region: str
    profile: str
    thinking_budgets: ThinkingBudgets
    reasoning: ThinkingLevel


class ProviderStreamOptions(_Pending, total=False):
    """Every option any built-in adapter takes (for typing :func:`tau.ai.stream`'s keywords).

    Each adapter accepts only its own (``AnthropicOptions``…); this union is what a caller
    that does not know the api yet may pass.
    """
