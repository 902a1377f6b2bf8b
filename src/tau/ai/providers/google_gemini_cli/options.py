"""The options of ``google-gemini-cli``."""

from __future__ import annotations

from tau.ai.providers.google.options import GoogleOptions


class GoogleGeminiCliOptions(GoogleOptions, total=False):
    """The Gemini options plus the Cloud project (else the one the login found)."""

    project_id: str
