"""The Responses provider records: ``openai-responses`` (OpenAI) and ``azure-openai-responses``
(an Azure OpenAI resource), one protocol with two endpoints."""

from __future__ import annotations

from typing import Any

from tau.ai.core.types import Context, Model, ThinkingBudgets, ThinkingLevel
from tau.ai.lookup.provider import Provider
from tau.ai.providers.openai_responses.decoder import OpenAIResponsesDecoder
from tau.ai.providers.openai_responses.options import (
    AzureOpenAIResponsesOptions,
    OpenAIResponsesOptions,
)
from tau.ai.providers.openai_responses.request import build_azure_request, build_request
from tau.ai.providers.simple_options import clamp_reasoning, supports_xhigh
from tau.ai.streaming.builder import MessageBuilder

__all__ = ["AZURE_PROVIDER", "PROVIDER", "reasoning"]


def decoder(
    builder: MessageBuilder, model: Model, context: Context, options: OpenAIResponsesOptions
) -> OpenAIResponsesDecoder:
    """The decoder of one response; the service tier prices its usage."""
    return OpenAIResponsesDecoder(builder, service_tier=options.get("service_tier"))


def reasoning(
    model: Model,
    options: dict[str, Any],
    level: ThinkingLevel | None,
    budgets: ThinkingBudgets | None,
) -> None:
    """The level becomes ``reasoning_effort`` (``xhigh`` only where the model has it)."""
    if level and model.reasoning:
        options["reasoning_effort"] = level if supports_xhigh(model) else clamp_reasoning(level)


PROVIDER = Provider(
    api="openai-responses",
    options=OpenAIResponsesOptions,
    prefix="openai_",
    env_keys={"openai": ("OPENAI_API_KEY",)},
    build_request=build_request,
    decoder=decoder,
    reasoning=reasoning,
)
"""OpenAI's Responses API (``POST {base_url}/responses``)."""

AZURE_PROVIDER = Provider(
    api="azure-openai-responses",
    options=AzureOpenAIResponsesOptions,
    prefix="azure_",
    env_keys={"azure-openai-responses": ("AZURE_OPENAI_API_KEY",)},
    build_request=build_azure_request,
    decoder=decoder,
    reasoning=reasoning,
)
"""The Responses API of an Azure OpenAI resource (see :mod:`.azure` for where it sends)."""
