"""The ``anthropic-messages`` entry points: ``stream`` and ``stream_simple``."""

from __future__ import annotations

from typing import cast

from tau.ai.core.types import Context, Model
from tau.ai.lookup.env_keys import resolve_api_key
from tau.ai.providers.anthropic.decoder import AnthropicDecoder
from tau.ai.providers.anthropic.options import AnthropicOptions, AnthropicSimpleOptions
from tau.ai.providers.anthropic.request import build_request, is_adaptive, is_oauth_token
from tau.ai.providers.simple_options import adjust_max_tokens_for_thinking, base_options
from tau.ai.streaming.adapter import launch_http
from tau.ai.streaming.builder import MessageBuilder
from tau.ai.streaming.event_stream import AssistantMessageEventStream

__all__ = ["OPTIONS", "SIMPLE_OPTIONS", "stream", "stream_simple"]

OPTIONS = AnthropicOptions
SIMPLE_OPTIONS = AnthropicSimpleOptions

_EFFORT = {"minimal": "low", "low": "low", "medium": "medium", "high": "high"}


def stream(
    model: Model, context: Context, options: AnthropicOptions
) -> AssistantMessageEventStream:
    """Stream one Messages API call (options: :class:`AnthropicOptions`)."""
    key = resolve_api_key(model, options)
    # With an OAuth token, tools go out under Claude Code's names and come back mapped.
    renamed = context.tools if key and is_oauth_token(key) else None

    def decoder(builder: MessageBuilder) -> AnthropicDecoder:
        return AnthropicDecoder(builder, renamed)

    return launch_http(model, context, options, build_request, decoder)


def stream_simple(
    model: Model, context: Context, options: AnthropicSimpleOptions
) -> AssistantMessageEventStream:
    """:func:`stream` with the unified ``reasoning`` level mapped to thinking options.

    Adaptive models (Opus/Sonnet 4.6) get adaptive thinking with an effort (``xhigh`` is
    ``max`` on Opus 4.6, ``high`` elsewhere); others a token budget added to ``max_tokens``.
    A level on a model without reasoning is ignored.
    """
    out = base_options(model, options)
    level = options.get("reasoning")
    if not level or not model.reasoning:
        out["thinking_enabled"] = False
    elif is_adaptive(model):
        out["thinking_enabled"] = True
        out["effort"] = _EFFORT.get(level) or (
            "max" if ("opus-4-6" in model.id or "opus-4.6" in model.id) else "high"
        )
    else:
        max_tokens, budget = adjust_max_tokens_for_thinking(
            out["max_tokens"], model.max_tokens, level, options.get("thinking_budgets")
        )
        out.update(thinking_enabled=True, thinking_budget_tokens=budget, max_tokens=max_tokens)
    return stream(model, context, cast(AnthropicOptions, out))
