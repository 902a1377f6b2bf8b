"""The ``bedrock-converse-stream`` entry points: ``stream`` and ``stream_simple``."""

from __future__ import annotations

from typing import cast

from tau.ai.core.types import Context, Model
from tau.ai.providers.bedrock.auth import sign
from tau.ai.providers.bedrock.decoder import BedrockDecoder
from tau.ai.providers.bedrock.options import BedrockOptions, BedrockSimpleOptions
from tau.ai.providers.bedrock.request import (
    DEFAULT_HEADERS,
    build_request,
    is_adaptive_claude,
    is_claude,
)
from tau.ai.providers.simple_options import (
    adjust_max_tokens_for_thinking,
    base_options,
    clamp_reasoning,
)
from tau.ai.streaming.adapter import ProviderRequest, run_http_adapter
from tau.ai.streaming.builder import MessageBuilder
from tau.ai.streaming.event_stream import AssistantMessageEventStream
from tau.ai.streaming.launch import launch_stream

__all__ = ["OPTIONS", "SIMPLE_OPTIONS", "stream", "stream_simple"]

OPTIONS = BedrockOptions
SIMPLE_OPTIONS = BedrockSimpleOptions


def stream(model: Model, context: Context, options: BedrockOptions) -> AssistantMessageEventStream:
    """Stream one ConverseStream response (options: :class:`BedrockOptions`)."""

    async def authorize(request: ProviderRequest, body: bytes) -> ProviderRequest:
        return await sign(model, options, request, body, DEFAULT_HEADERS)

    async def run(builder: MessageBuilder) -> None:
        request = build_request(model, context, options)
        decoder = BedrockDecoder(builder)
        await run_http_adapter(builder, request, decoder, options, authorize=authorize)

    return launch_stream(model, options, run)


def stream_simple(
    model: Model, context: Context, options: BedrockSimpleOptions
) -> AssistantMessageEventStream:
    """:func:`stream` with the unified ``reasoning`` level mapped to Claude's thinking: an
    effort on adaptive models, else a budget added to ``max_tokens``."""
    out = base_options(model, options)
    level = options.get("reasoning")
    if level and is_claude(model) and model.reasoning:
        budgets = dict(options.get("thinking_budgets") or {})
        if not is_adaptive_claude(model):
            max_tokens, budget = adjust_max_tokens_for_thinking(
                out["max_tokens"], model.max_tokens, level, options.get("thinking_budgets")
            )
            out["max_tokens"] = max_tokens
            budgets[clamp_reasoning(level) or "high"] = budget
        out["reasoning"] = level
        out["thinking_budgets"] = budgets
    return stream(model, context, cast(BedrockOptions, out))
