"""The decoder of ``google-gemini-cli``: each chunk's ``response`` through the Gemini decoder."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tau.ai.providers.google.decoder import GoogleDecoder

__all__ = ["GeminiCliDecoder"]


class GeminiCliDecoder(GoogleDecoder):
    """Feeds Cloud Code Assist chunks (``{"response": <GenerateContentResponse>, "traceId"}``)
    into a builder; an ``error`` chunk is an error as in the Gemini API."""

    __slots__ = ()

    def apply(self, chunk: Mapping[str, Any]) -> None:
        """Apply one decoded chunk."""
        inner = chunk.get("response")
        super().apply(inner if isinstance(inner, Mapping) else chunk)
