"""The ``anthropic-messages`` provider record, and its mapping of the unified reasoning level."""

from __future__ import annotations

from typing import Any

from tau.ai.core.types import Context, Model, ThinkingBudgets, ThinkingLevel
from tau.ai.lookup.env_keys import resolve_api_key
from tau.ai.lookup.provider import Provider
from tau.ai.providers.anthropic.decoder import AnthropicDecoder
from tau.ai.providers.anthropic.options import AnthropicOptions
from tau.ai.providers.anthropic.request import build_request, is_adaptive, is_oauth_token
from tau.ai.providers.simple_options import adjust_max_tokens_for_thinking
from tau.ai.streaming.builder import MessageBuilder

__all__ = ["PROVIDER"]

_EFFORT = {"minimal": "low", "low": "low", "medium": "medium", "high": "high"}


def decoder(
    builder: MessageBuilder, model: Model, context: Context, options: AnthropicOptions
) -> AnthropicDecoder:
    """The decoder of one response; with an OAuth token, tools went out under Claude Code's
    names and come back mapped to the context's."""
    key = resolve_api_key(model, options)
    return AnthropicDecoder(builder, context.tools if key and is_oauth_token(key) else None)


def reasoning(
    model: Model,
    options: dict[str, Any],
    level: ThinkingLevel | None,
    budgets: ThinkingBudgets | None,
) -> None:
    """Adaptive models (Opus/Sonnet 4.6) get adaptive thinking with an effort (``xhigh`` is
    ``max`` on Opus 4.6, ``high`` elsewhere); others a token budget added to ``max_tokens``.
    A level on a model without reasoning is ignored (thinking off)."""
    if not level or not model.reasoning:
        options["thinking_enabled"] = False
    elif is_adaptive(model):
        options["thinking_enabled"] = True
        options["effort"] = _EFFORT.get(level) or (
            "max" if ("opus-4-6" in model.id or "opus-4.6" in model.id) else "high"
        )
    else:
        max_tokens, budget = adjust_max_tokens_for_thinking(
            options["max_tokens"], model.max_tokens, level, budgets
        )
        options.update(thinking_enabled=True, thinking_budget_tokens=budget, max_tokens=max_tokens)


PROVIDER = Provider(
    api="anthropic-messages",
    options=AnthropicOptions,
    prefix="anthropic_",
    env_keys={
        "anthropic": ("ANTHROPIC_OAUTH_TOKEN", "ANTHROPIC_API_KEY"),
        "minimax": ("MINIMAX_API_KEY",),
        "minimax-cn": ("MINIMAX_CN_API_KEY",),
        "kimi-coding": ("KIMI_API_KEY",),
        "opencode": ("OPENCODE_API_KEY",),
        "opencode-go": ("OPENCODE_API_KEY",),
        "vercel-ai-gateway": ("AI_GATEWAY_API_KEY",),
    },
    build_request=build_request,
    decoder=decoder,
    reasoning=reasoning,
)
"""Anthropic's Messages API and the endpoints that speak it."""
