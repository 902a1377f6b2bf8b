"""The ``google-gemini-cli`` record: Cloud Code Assist (Gemini CLI and Antigravity logins)."""

from __future__ import annotations

from tau.ai.lookup.provider import Provider, builder_decoder
from tau.ai.providers.google.provider import reasoning
from tau.ai.providers.google_gemini_cli.decoder import GeminiCliDecoder
from tau.ai.providers.google_gemini_cli.options import GoogleGeminiCliOptions
from tau.ai.providers.google_gemini_cli.request import build_request

__all__ = ["PROVIDER"]

PROVIDER = Provider(
    api="google-gemini-cli",
    options=GoogleGeminiCliOptions,
    prefix="gemini_cli_",
    env_keys={"google-gemini-cli": (), "google-antigravity": ()},
    build_request=build_request,
    decoder=builder_decoder(GeminiCliDecoder),
    reasoning=reasoning,
)
"""Cloud Code Assist's ``streamGenerateContent``, keyed by a Google login."""
