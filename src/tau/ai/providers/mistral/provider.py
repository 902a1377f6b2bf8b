"""The ``mistral-conversations`` provider record."""

from __future__ import annotations

from typing import Any

from tau.ai.core.errors import ProviderError, ProviderHTTPError
from tau.ai.core.types import Model, ThinkingBudgets, ThinkingLevel
from tau.ai.lookup.provider import Provider, builder_decoder
from tau.ai.providers.mistral.decoder import MistralDecoder
from tau.ai.providers.mistral.options import MistralOptions
from tau.ai.providers.mistral.request import build_request
from tau.ai.providers.simple_options import clamp_reasoning

__all__ = ["PROVIDER", "explain_http_error"]

_ERROR_BODY_LIMIT = 4000


def explain_http_error(exc: ProviderHTTPError, model: Model, options: object) -> ProviderError:
    """pi's error text: ``Mistral API error (<status>): <body, cut at 4000 chars>``."""
    if exc.body.strip():
        body = exc.body
        if len(body) > _ERROR_BODY_LIMIT:
            extra = len(body) - _ERROR_BODY_LIMIT
            body = f"{body[:_ERROR_BODY_LIMIT]}... [truncated {extra} chars]"
        return ProviderError(f"Mistral API error ({exc.status}): {body}")
    return ProviderError(f"Mistral API error ({exc.status}): {exc}")


def reasoning(
    model: Model,
    options: dict[str, Any],
    level: ThinkingLevel | None,
    budgets: ThinkingBudgets | None,
) -> None:
    """``prompt_mode: "reasoning"`` when a level is asked of a reasoning model."""
    if model.reasoning and clamp_reasoning(level):
        options["prompt_mode"] = "reasoning"


PROVIDER = Provider(
    api="mistral-conversations",
    options=MistralOptions,
    prefix="mistral_",
    env_keys={"mistral": ("MISTRAL_API_KEY",)},
    build_request=build_request,
    decoder=builder_decoder(MistralDecoder),
    explain=explain_http_error,
    reasoning=reasoning,
)
"""Mistral's Conversations API."""
