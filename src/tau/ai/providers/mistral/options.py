"""The options of the ``mistral-conversations`` adapter."""

from __future__ import annotations

from typing import Literal

from tau.ai.core.options import SimpleStreamOptions, StreamOptions, ToolChoiceOption


class MistralOptions(StreamOptions, ToolChoiceOption, total=False):
    """:class:`~tau.ai.StreamOptions` plus Mistral's own; ``tool_choice`` is ``"auto"``,
    ``"none"``, ``"any"``, ``"required"``, or a Mistral-shaped dict."""

    prompt_mode: Literal["reasoning"]
    """Mistral's reasoning system prompt for its reasoning (Magistral) models."""


class MistralSimpleOptions(SimpleStreamOptions, ToolChoiceOption, total=False):
    """What ``stream_simple`` takes: the simple options, and the tool choice passed on."""
