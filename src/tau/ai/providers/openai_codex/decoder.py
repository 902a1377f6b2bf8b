"""The decoder of ``openai-codex-responses``: the Responses decoder, which also reads Codex's
terminal event ``response.done`` as ``response.completed`` (its status as it is)."""

from __future__ import annotations

from tau.ai.providers.openai_responses.decoder import OpenAIResponsesDecoder

__all__ = ["OpenAICodexDecoder"]


class OpenAICodexDecoder(OpenAIResponsesDecoder):
    """Feeds Codex stream events into a builder (see :class:`OpenAIResponsesDecoder`)."""

    __slots__ = ()
    what = "Codex stream event"
