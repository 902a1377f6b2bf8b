"""The options of the ``anthropic-messages`` adapter."""

from __future__ import annotations

from typing import Literal

from tau.ai.core.options import SimpleStreamOptions, StreamOptions, ToolChoiceOption


class AnthropicOptions(StreamOptions, ToolChoiceOption, total=False):
    """:class:`~tau.ai.StreamOptions` plus the Messages API's own; ``tool_choice`` is
    ``"auto" | "any" | "none"`` or ``{"type": "tool", "name": ...}``."""

    thinking_enabled: bool
    """Extended thinking on (reasoning models only)."""
    thinking_budget_tokens: int
    """The thinking budget of a budget-based model (default 1024)."""
    effort: Literal["low", "medium", "high", "max"]
    """The effort of an adaptive model (Opus/Sonnet 4.6)."""
    interleaved_thinking: bool
    """Thinking between tool calls (default True; adaptive models always do)."""


class AnthropicSimpleOptions(SimpleStreamOptions, ToolChoiceOption, total=False):
    """What ``stream_simple`` takes: the simple options, and the tool choice passed on."""
