"""``google-generative-ai``: the Gemini API (``generativelanguage.googleapis.com``).

``POST {base_url}/models/{id}:streamGenerateContent?alt=sse`` with the key in
``x-goog-api-key`` (the ``api_key`` option, else ``GEMINI_API_KEY``).

``stream_function_call_arguments=True`` asks for function-call arguments in pieces
(``toolConfig.functionCallingConfig.streamFunctionCallArguments``). Google documents it for
Vertex AI only, so :func:`stream_simple` leaves it off here; a server that sends
``partialArgs`` anyway is decoded all the same.
"""

from __future__ import annotations

from typing import cast

from tau.ai.core.errors import ProviderError
from tau.ai.core.types import Context, Model
from tau.ai.lookup.env_keys import resolve_api_key
from tau.ai.providers.google.decoder import GoogleDecoder
from tau.ai.providers.google.options import GoogleOptions, GoogleSimpleOptions
from tau.ai.providers.google.request import request_body, simple_options
from tau.ai.streaming.adapter import ProviderRequest, launch_http
from tau.ai.streaming.event_stream import AssistantMessageEventStream
from tau.ai.streaming.headers import request_headers

__all__ = ["OPTIONS", "SIMPLE_OPTIONS", "build_request", "stream", "stream_simple", "stream_url"]

OPTIONS = GoogleOptions
SIMPLE_OPTIONS = GoogleSimpleOptions
DEFAULT_BASE_URL = "https://generativelanguage.googleapis.com/v1beta"


def stream_url(model: Model) -> str:
    """The streaming endpoint of ``model`` (its base URL already names the API version)."""
    base = (model.base_url or DEFAULT_BASE_URL).rstrip("/")
    return f"{base}/models/{model.id}:streamGenerateContent?alt=sse"


def build_request(model: Model, context: Context, options: GoogleOptions) -> ProviderRequest:
    """The streaming request with the key in ``x-goog-api-key``."""
    key = resolve_api_key(model, options)
    if not key:
        raise ProviderError(
            f"No API key for provider {model.provider!r}: set GEMINI_API_KEY or pass api_key"
        )
    headers = request_headers(model, options, {"x-goog-api-key": key})
    return ProviderRequest(stream_url(model), headers, request_body(model, context, options))


def stream(model: Model, context: Context, options: GoogleOptions) -> AssistantMessageEventStream:
    """Stream one Gemini response (options: :class:`GoogleOptions`)."""
    return launch_http(model, context, options, build_request, GoogleDecoder)


def stream_simple(
    model: Model, context: Context, options: GoogleSimpleOptions
) -> AssistantMessageEventStream:
    """:func:`stream` with the unified ``reasoning`` level mapped to Gemini thinking."""
    return stream(model, context, cast(GoogleOptions, simple_options(model, options)))
