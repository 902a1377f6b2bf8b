"""The typed settings of every built-in provider: GENERATED from the provider records by
``scripts/generate_settings.py`` (do not edit; a test fails when this file is stale).

Each provider's own options are its settings under its prefix; :class:`Settings` is
their union with :class:`CommonSettings`. See :mod:`tau.ai.core.settings`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, TypedDict

from tau.ai.core.options import SimpleStreamOptions, ToolChoiceOption

if TYPE_CHECKING:
    from tau.ai.core.types import ThinkingLevel
    from tau.ai.providers.google.options import GoogleThinking


class CommonSettings(SimpleStreamOptions, ToolChoiceOption, total=False):
    """The keys every provider reads (one that a provider has no use for is ignored)."""


class AnthropicSettings(TypedDict, total=False):
    """The own settings of ``anthropic-messages`` (prefix ``anthropic_``)."""

    anthropic_effort: Literal["low", "medium", "high", "max"]
    anthropic_interleaved_thinking: bool
    anthropic_thinking_budget_tokens: int
    anthropic_thinking_enabled: bool


class AzureSettings(TypedDict, total=False):
    """The own settings of ``azure-openai-responses`` (prefix ``azure_``)."""

    azure_api_version: str
    azure_base_url: str
    azure_deployment_name: str
    azure_reasoning_effort: ThinkingLevel
    azure_reasoning_summary: Literal["auto", "detailed", "concise"] | None
    azure_resource_name: str


class BedrockSettings(TypedDict, total=False):
    """The own settings of ``bedrock-converse-stream`` (prefix ``bedrock_``)."""

    bedrock_interleaved_thinking: bool
    bedrock_profile: str
    bedrock_region: str


class CodexSettings(TypedDict, total=False):
    """The own settings of ``openai-codex-responses`` (prefix ``codex_``)."""

    codex_reasoning_effort: ThinkingLevel
    codex_reasoning_summary: Literal["auto", "detailed", "concise"] | None
    codex_text_verbosity: Literal["low", "medium", "high"]


class GoogleSettings(TypedDict, total=False):
    """The own settings of ``google-generative-ai``, ``google-vertex``, ``google-gemini-cli`` (prefix ``google_``)."""

    google_location: str
    google_project: str
    google_project_id: str
    google_stream_function_call_arguments: bool
    google_thinking: GoogleThinking


class MistralSettings(TypedDict, total=False):
    """The own settings of ``mistral-conversations`` (prefix ``mistral_``)."""

    mistral_prompt_mode: Literal["reasoning"]


class OpenAISettings(TypedDict, total=False):
    """The own settings of ``openai-completions``, ``openai-responses`` (prefix ``openai_``)."""

    openai_reasoning_effort: ThinkingLevel
    openai_reasoning_summary: Literal["auto", "detailed", "concise"] | None
    openai_service_tier: str


class Settings(
    CommonSettings,
    AnthropicSettings,
    AzureSettings,
    BedrockSettings,
    CodexSettings,
    GoogleSettings,
    MistralSettings,
    OpenAISettings,
    total=False,
):
    """One typed settings object for every provider: the common keys, and each
    provider's own under its prefix (another provider's are ignored, so one object serves
    a fallback across providers)."""


__all__ = [
    "AnthropicSettings",
    "AzureSettings",
    "BedrockSettings",
    "CodexSettings",
    "CommonSettings",
    "GoogleSettings",
    "MistralSettings",
    "OpenAISettings",
    "Settings",
]
