"""``openai-responses``: OpenAI's Responses API (``POST {base_url}/responses``, streamed)."""

from __future__ import annotations

from typing import Any, cast

from tau.ai.core.options import SimpleStreamOptions
from tau.ai.core.types import Context, Model
from tau.ai.lookup.env_keys import require_api_key
from tau.ai.providers.openai_responses.decoder import OpenAIResponsesDecoder
from tau.ai.providers.openai_responses.options import (
    OpenAIResponsesOptions,
    OpenAIResponsesSimpleOptions,
)
from tau.ai.providers.openai_responses.request import responses_body
from tau.ai.providers.simple_options import base_options, clamp_reasoning, supports_xhigh
from tau.ai.streaming.adapter import ProviderRequest, launch_http
from tau.ai.streaming.builder import MessageBuilder
from tau.ai.streaming.event_stream import AssistantMessageEventStream
from tau.ai.streaming.headers import request_headers

__all__ = [
    "OPTIONS",
    "SIMPLE_OPTIONS",
    "build_request",
    "request_body",
    "simple_reasoning_options",
    "stream",
    "stream_simple",
]

OPTIONS = OpenAIResponsesOptions
SIMPLE_OPTIONS = OpenAIResponsesSimpleOptions


def request_body(model: Model, context: Context, options: OpenAIResponsesOptions) -> dict[str, Any]:
    """The request body for ``model`` (before the ``on_payload`` hook)."""
    body = responses_body(model, context, options)
    # The 24-hour cache is OpenAI's own feature; look-alike servers reject the field.
    if options.get("cache_retention") == "long" and "api.openai.com" in model.base_url:
        body["prompt_cache_retention"] = "24h"
    service_tier = options.get("service_tier")
    if service_tier:
        body["service_tier"] = service_tier
    return body


def build_request(
    model: Model, context: Context, options: OpenAIResponsesOptions
) -> ProviderRequest:
    """``POST {base_url}/responses`` with the key as a bearer token."""
    auth = {"authorization": f"Bearer {require_api_key(model, options)}"}
    return ProviderRequest(
        model.base_url.rstrip("/") + "/responses",
        request_headers(model, options, auth),
        request_body(model, context, options),
    )


def stream(
    model: Model, context: Context, options: OpenAIResponsesOptions
) -> AssistantMessageEventStream:
    """Stream one response from an ``openai-responses`` model."""

    def decoder(builder: MessageBuilder) -> OpenAIResponsesDecoder:
        return OpenAIResponsesDecoder(builder, service_tier=options.get("service_tier"))

    return launch_http(model, context, options, build_request, decoder)


def simple_reasoning_options(model: Model, options: SimpleStreamOptions) -> dict[str, Any]:
    """``stream_simple`` options for the Responses APIs: the level becomes the effort."""
    out = base_options(model, options)
    level = options.get("reasoning")
    if level and model.reasoning:
        out["reasoning_effort"] = level if supports_xhigh(model) else clamp_reasoning(level)
    return out


def stream_simple(
    model: Model, context: Context, options: OpenAIResponsesSimpleOptions
) -> AssistantMessageEventStream:
    """:func:`stream` with the unified ``reasoning`` level mapped to ``reasoning_effort``."""
    out = simple_reasoning_options(model, options)
    return stream(model, context, cast(OpenAIResponsesOptions, out))
