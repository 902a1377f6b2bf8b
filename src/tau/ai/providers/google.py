"""``google-generative-ai``: the Gemini API (``generativelanguage.googleapis.com``).

``POST {base_url}/models/{id}:streamGenerateContent?alt=sse`` with the key in
``x-goog-api-key`` (the ``api_key`` option, else ``GEMINI_API_KEY``). The body and the stream
mapping are shared with Vertex AI (:mod:`tau.ai.providers.google_shared`,
:mod:`tau.ai.providers.google_stream`).

``stream_function_call_arguments=True`` asks for function-call arguments in pieces
(``toolConfig.functionCallingConfig.streamFunctionCallArguments``). Google documents it for
Vertex AI only, so :func:`stream_simple` leaves it off here; a server that sends
``partialArgs`` anyway is decoded all the same.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tau.ai.builder import MessageBuilder, ProviderError, launch_stream
from tau.ai.env_keys import resolve_api_key
from tau.ai.event_stream import AssistantMessageEventStream
from tau.ai.providers import google_shared as shared
from tau.ai.providers import google_stream
from tau.ai.types import Context, Model

DEFAULT_BASE_URL = "https://generativelanguage.googleapis.com/v1beta"


def stream_url(model: Model) -> str:
    """The streaming endpoint of ``model`` (its base URL already names the API version)."""
    base = (model.base_url or DEFAULT_BASE_URL).rstrip("/")
    return f"{base}/models/{model.id}:streamGenerateContent?alt=sse"


def build_request(model: Model, context: Context, options: Mapping[str, Any]) -> dict[str, Any]:
    """The request body for ``context`` (before the ``on_payload`` hook)."""
    return shared.build_request(model, context, options)


def stream(
    model: Model, context: Context, options: Mapping[str, Any]
) -> AssistantMessageEventStream:
    """Stream one Gemini response; options as in ``ProviderStreamOptions``."""

    async def run(builder: MessageBuilder) -> None:
        key = resolve_api_key(model, options)
        if not key:
            raise ProviderError(
                f"No API key for provider {model.provider!r}: set GEMINI_API_KEY or pass api_key"
            )
        headers = shared.request_headers(model, options, {"x-goog-api-key": key})
        body = build_request(model, context, options)
        await google_stream.run_stream(builder, stream_url(model), headers, body, options)

    return launch_stream(model, options, run)


def stream_simple(
    model: Model, context: Context, options: Mapping[str, Any]
) -> AssistantMessageEventStream:
    """:func:`stream` with the unified ``reasoning`` level mapped to Gemini thinking."""
    return stream(model, context, shared.simple_options(model, options))
