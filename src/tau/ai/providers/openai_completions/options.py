"""The options of the ``openai-completions`` adapter."""

from __future__ import annotations

from tau.ai.core.options import SimpleStreamOptions, StreamOptions, ToolChoiceOption
from tau.ai.core.types import ThinkingLevel


class OpenAICompletionsOptions(StreamOptions, ToolChoiceOption, total=False):
    """:class:`~tau.ai.StreamOptions` plus the chat-completions protocol's own; ``tool_choice``
    is ``"auto"``, ``"none"``, ``"required"``/``"any"``, a tool name, or an OpenAI-shaped dict."""

    reasoning_effort: ThinkingLevel
    """Sent in the endpoint's own form (``reasoning_effort``, ``reasoning``, ``thinking``…)."""
    service_tier: str
    """OpenAI's ``service_tier`` (``"flex"``, ``"priority"``…)."""


class OpenAICompletionsSimpleOptions(SimpleStreamOptions, ToolChoiceOption, total=False):
    """What ``stream_simple`` takes: the simple options, and the tool choice passed on."""
