"""Mapping the unified ``reasoning`` level of ``stream_simple`` to provider options."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from tau.ai.core.options import SIMPLE_ONLY_KEYS
from tau.ai.core.types import Model, ThinkingBudgets, ThinkingLevel

DEFAULT_THINKING_BUDGETS: ThinkingBudgets = {
    "minimal": 1024,
    "low": 2048,
    "medium": 8192,
    "high": 16384,
}
MIN_OUTPUT_TOKENS = 1024


def clamp_reasoning(level: ThinkingLevel | None) -> ThinkingLevel | None:
    """``xhigh`` becomes ``high`` for providers without an extra-high level."""
    return "high" if level == "xhigh" else level


def supports_xhigh(model: Model) -> bool:
    """Whether the model has a native extra-high reasoning level."""
    return any(tag in model.id for tag in ("gpt-5.2", "gpt-5.3", "gpt-5.4", "opus-4-6", "opus-4.6"))


def base_options(model: Model, options: Mapping[str, Any]) -> dict[str, Any]:
    """The options ``stream_simple`` passes on to ``stream``, with a default ``max_tokens``.

    That is every option but the reasoning ones, which each adapter maps to its own: the
    adapter's simple options type declares what it passes on, and ``stream_simple`` accepts
    nothing else (see :func:`tau.ai.core.options.check_options`).
    """
    out = {key: value for key, value in options.items() if key not in SIMPLE_ONLY_KEYS}
    out["max_tokens"] = options.get("max_tokens") or min(model.max_tokens, 32_000)
    return out


def adjust_max_tokens_for_thinking(
    base_max_tokens: int,
    model_max_tokens: int,
    level: ThinkingLevel,
    custom_budgets: ThinkingBudgets | None = None,
) -> tuple[int, int]:
    """``(max_tokens, thinking_budget)`` for a budget-based provider.

    The budget is added on top of the requested output, capped by the model's limit; when the
    cap leaves no room, the budget shrinks so that at least ``MIN_OUTPUT_TOKENS`` remain.
    """
    clamped = clamp_reasoning(level) or "high"
    budgets = cast(dict[str, int], {**DEFAULT_THINKING_BUDGETS, **(custom_budgets or {})})
    budget = budgets[clamped]
    max_tokens = min(base_max_tokens + budget, model_max_tokens)
    if max_tokens <= budget:
        budget = max(0, max_tokens - MIN_OUTPUT_TOKENS)
    return max_tokens, budget
