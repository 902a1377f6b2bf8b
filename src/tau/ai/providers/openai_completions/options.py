"""The options of the ``openai-completions`` adapter."""

from __future__ import annotations

from tau.ai.options import SimpleStreamOptions, StreamOptions, ToolChoice
from tau.ai.types import ThinkingLevel


class OpenAICompletionsOptions(StreamOptions, total=False):
    """:class:`~tau.ai.StreamOptions` plus the chat-completions protocol's own."""

    reasoning_effort: ThinkingLevel
    """Sent in the endpoint's own form (``reasoning_effort``, ``reasoning``, ``thinking``…)."""
    tool_choice: ToolChoice
    """``"auto"``, ``"none"``, ``"required"``/``"any"``, a tool name, or an OpenAI-shaped dict."""
    service_tier: str
    """OpenAI's ``service_tier`` (``"flex"``, ``"priority"``…)."""


class OpenAICompletionsSimpleOptions(SimpleStreamOptions, total=False):
    """What ``stream_simple`` takes: the simple options, and the tool choice passed on."""

    tool_choice: ToolChoice
