"""The options of the Gemini adapters (``google-generative-ai``, ``google-vertex``)."""

from __future__ import annotations

from typing import TypedDict

from tau.ai.core.options import SimpleStreamOptions, StreamOptions, ToolChoiceOption


class GoogleThinking(TypedDict, total=False):
    """Gemini thinking: on or off, and a budget (2.5) or a level (3)."""

    enabled: bool
    budget_tokens: int
    """-1 for a dynamic budget, 0 for none."""
    level: str
    """``"low"``, ``"high"``… (Gemini 3); wins over a budget."""


class GoogleOptions(StreamOptions, ToolChoiceOption, total=False):
    """:class:`~tau.ai.StreamOptions` plus Gemini's own (the Gemini API); ``tool_choice`` is
    ``"auto"``, ``"none"``, ``"any"``/``"required"``, a function name, or a
    ``functionCallingConfig`` dict."""

    thinking: GoogleThinking
    stream_function_call_arguments: bool
    """Stream function-call arguments as they are written (``streamFunctionCallArguments``);
    ``stream_simple`` turns it on for Gemini 3 and later on Vertex AI."""


class GoogleVertexOptions(GoogleOptions, total=False):
    """:class:`GoogleOptions` plus where the Vertex AI project is."""

    project: str
    """Vertex project (else ``GOOGLE_CLOUD_PROJECT`` / ``GCLOUD_PROJECT`` / the ADC's)."""
    location: str
    """Vertex location, e.g. ``us-central1`` or ``global`` (else ``GOOGLE_CLOUD_LOCATION``)."""


class GoogleGeminiCliOptions(GoogleOptions, total=False):
    """:class:`GoogleOptions` plus the Cloud project (``google-gemini-cli``; else the one the
    login found)."""

    project_id: str


class GoogleSimpleOptions(SimpleStreamOptions, ToolChoiceOption, total=False):
    """What ``stream_simple`` of the Gemini API takes: the tool choice and the streaming of
    call arguments are passed on."""

    stream_function_call_arguments: bool


class GoogleVertexSimpleOptions(GoogleSimpleOptions, total=False):
    """What ``stream_simple`` of Vertex AI takes: also where the project is."""

    project: str
    location: str
