"""The Gemini provider records: ``google-generative-ai`` (the Gemini API), ``google-vertex``
(Gemini on Vertex AI) and ``google-gemini-cli`` (Cloud Code Assist, for the Gemini CLI and
Antigravity logins), one protocol with three endpoints."""

from __future__ import annotations

from typing import Any

from tau.ai.core.types import Model, ThinkingBudgets, ThinkingLevel
from tau.ai.lookup.provider import Provider, builder_decoder
from tau.ai.providers.google import gemini_cli, vertex
from tau.ai.providers.google.decoder import GoogleDecoder
from tau.ai.providers.google.options import (
    GoogleGeminiCliOptions,
    GoogleOptions,
    GoogleVertexOptions,
)
from tau.ai.providers.google.request import build_request, simple_thinking, streams_call_arguments

__all__ = ["GEMINI_CLI_PROVIDER", "PROVIDER", "VERTEX_PROVIDER", "reasoning"]


def reasoning(
    model: Model,
    options: dict[str, Any],
    level: ThinkingLevel | None,
    budgets: ThinkingBudgets | None,
) -> None:
    """``thinking`` for the level (off without one), and streamed call arguments where the
    model has them (:func:`~tau.ai.providers.google.request.streams_call_arguments`)."""
    options["thinking"] = simple_thinking(model, level, budgets)
    options["stream_function_call_arguments"] = streams_call_arguments(model)


PROVIDER = Provider(
    api="google-generative-ai",
    options=GoogleOptions,
    prefix="google_",
    env_keys={"google": ("GEMINI_API_KEY",)},
    build_request=build_request,
    decoder=builder_decoder(GoogleDecoder),
    reasoning=reasoning,
)
"""The Gemini API (``generativelanguage.googleapis.com``), the key in ``x-goog-api-key``."""

VERTEX_PROVIDER = Provider(
    api="google-vertex",
    options=GoogleVertexOptions,
    prefix="google_",
    env_keys={"google-vertex": ()},
    build_request=vertex.build_request,
    decoder=builder_decoder(GoogleDecoder),
    authorize=vertex.authorize,
    credentials=vertex.ambient_key,
    credential_hints=("GOOGLE_CLOUD_API_KEY", "GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION"),
    reasoning=reasoning,
)
"""Gemini on Vertex AI: an API key, or Application Default Credentials (the ``[vertex]`` extra)."""

GEMINI_CLI_PROVIDER = Provider(
    api="google-gemini-cli",
    options=GoogleGeminiCliOptions,
    prefix="google_",
    env_keys={"google-gemini-cli": (), "google-antigravity": ()},
    build_request=gemini_cli.build_request,
    decoder=builder_decoder(gemini_cli.GeminiCliDecoder),
    reasoning=reasoning,
)
"""Cloud Code Assist's ``streamGenerateContent`` (see :mod:`.gemini_cli`), keyed by a Google
login (``tau login google-gemini-cli`` / ``google-antigravity``)."""
