"""The ``bedrock-converse-stream`` provider record: SigV4-signed JSON in, binary frames out."""

from __future__ import annotations

from typing import Any

from tau.ai.core.types import Model, ThinkingBudgets, ThinkingLevel
from tau.ai.lookup.provider import Provider, builder_decoder
from tau.ai.providers.bedrock.auth import ambient_key, sign
from tau.ai.providers.bedrock.decoder import BedrockDecoder
from tau.ai.providers.bedrock.options import BedrockOptions
from tau.ai.providers.bedrock.request import (
    DEFAULT_HEADERS,
    build_request,
    is_adaptive_claude,
    is_claude,
)
from tau.ai.providers.simple_options import adjust_max_tokens_for_thinking, clamp_reasoning
from tau.ai.streaming.adapter import Authorize, ProviderRequest

__all__ = ["PROVIDER", "reasoning"]


def authorize(model: Model, options: BedrockOptions) -> Authorize:
    """SigV4 over the final body (or the bearer token, already set)."""

    async def signed(request: ProviderRequest, body: bytes) -> ProviderRequest:
        return await sign(model, options, request, body, DEFAULT_HEADERS)

    return signed


def reasoning(
    model: Model,
    options: dict[str, Any],
    level: ThinkingLevel | None,
    budgets: ThinkingBudgets | None,
) -> None:
    """Claude's thinking: an effort on adaptive models, else a budget added to
    ``max_tokens``; other models have no setting."""
    if not (level and is_claude(model) and model.reasoning):
        return
    chosen = dict(budgets or {})
    if not is_adaptive_claude(model):
        max_tokens, budget = adjust_max_tokens_for_thinking(
            options["max_tokens"], model.max_tokens, level, budgets
        )
        options["max_tokens"] = max_tokens
        chosen[clamp_reasoning(level) or "high"] = budget
    options["reasoning"] = level
    options["thinking_budgets"] = chosen


PROVIDER = Provider(
    api="bedrock-converse-stream",
    options=BedrockOptions,
    prefix="bedrock_",
    env_keys={"amazon-bedrock": ()},
    credentials=ambient_key,
    credential_hints=("AWS_PROFILE", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"),
    build_request=build_request,
    decoder=builder_decoder(BedrockDecoder),
    framing="binary",
    authorize=authorize,
    reasoning=reasoning,
)
"""Amazon Bedrock's ConverseStream API."""
