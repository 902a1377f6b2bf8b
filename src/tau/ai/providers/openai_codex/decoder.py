"""The decoder of ``openai-codex-responses``: the Responses decoder, with ChatGPT's terminal
event ``response.done`` read as ``response.completed`` (its status as it is)."""

from __future__ import annotations

from typing import Any

from tau.ai.providers.openai_responses.decoder import OpenAIResponsesDecoder

__all__ = ["OpenAICodexDecoder"]


class OpenAICodexDecoder(OpenAIResponsesDecoder):
    """Feeds Codex stream events into a builder (see :class:`OpenAIResponsesDecoder`)."""

    __slots__ = ()
    what = "Codex stream event"

    def apply(self, event: dict[str, Any]) -> None:
        """Apply one decoded event; ``response.done`` ends the response as completed does."""
        if event.get("type") == "response.done":
            event = {**event, "type": "response.completed"}
        super().apply(event)
