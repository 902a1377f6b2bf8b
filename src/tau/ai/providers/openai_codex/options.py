"""The options of ``openai-codex-responses``."""

from __future__ import annotations

from typing import Literal

from tau.ai.providers.openai_responses.options import ResponsesOptions


class OpenAICodexResponsesOptions(ResponsesOptions, total=False):
    """The Responses options plus Codex's ``text.verbosity`` (``medium`` when not given)."""

    text_verbosity: Literal["low", "medium", "high"]
