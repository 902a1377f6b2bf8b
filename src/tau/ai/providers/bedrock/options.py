"""The options of the ``bedrock-converse-stream`` adapter."""

from __future__ import annotations

from tau.ai.core.options import SimpleStreamOptions, StreamOptions, ToolChoiceOption
from tau.ai.core.types import ThinkingBudgets, ThinkingLevel


class BedrockOptions(StreamOptions, ToolChoiceOption, total=False):
    """:class:`~tau.ai.StreamOptions` plus Bedrock's own; ``tool_choice`` is ``"auto"``,
    ``"none"``, ``"any"``/``"required"``, a tool name, or ``{"type": "tool", "name": ...}``."""

    region: str
    """AWS region (else ``AWS_REGION`` / ``AWS_DEFAULT_REGION`` / the profile's / us-east-1)."""
    profile: str
    """AWS profile for credentials and region."""
    reasoning: ThinkingLevel
    """Claude's extended thinking at this level (other models have no setting)."""
    thinking_budgets: ThinkingBudgets
    """Token budgets per level for budget-based Claude models."""
    interleaved_thinking: bool
    """Thinking between tool calls (default True; adaptive models always do)."""


class BedrockSimpleOptions(SimpleStreamOptions, ToolChoiceOption, total=False):
    """What ``stream_simple`` takes: the tool choice, region and profile are passed on."""

    region: str
    profile: str
