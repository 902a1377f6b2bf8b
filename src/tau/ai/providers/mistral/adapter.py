"""The ``mistral-conversations`` entry points: ``stream`` and ``stream_simple``."""

from __future__ import annotations

from typing import cast

from tau.ai.core.errors import ProviderError, ProviderHTTPError
from tau.ai.core.types import Context, Model
from tau.ai.providers.mistral.decoder import MistralDecoder
from tau.ai.providers.mistral.options import MistralOptions, MistralSimpleOptions
from tau.ai.providers.mistral.request import build_request
from tau.ai.providers.simple_options import base_options, clamp_reasoning
from tau.ai.streaming.adapter import launch_http
from tau.ai.streaming.event_stream import AssistantMessageEventStream

__all__ = ["OPTIONS", "SIMPLE_OPTIONS", "explain_http_error", "stream", "stream_simple"]

OPTIONS = MistralOptions
SIMPLE_OPTIONS = MistralSimpleOptions

_ERROR_BODY_LIMIT = 4000


def explain_http_error(exc: ProviderHTTPError) -> ProviderError:
    """pi's error text: ``Mistral API error (<status>): <body, cut at 4000 chars>``."""
    if exc.body.strip():
        body = exc.body
        if len(body) > _ERROR_BODY_LIMIT:
            extra = len(body) - _ERROR_BODY_LIMIT
            body = f"{body[:_ERROR_BODY_LIMIT]}... [truncated {extra} chars]"
        return ProviderError(f"Mistral API error ({exc.status}): {body}")
    return ProviderError(f"Mistral API error ({exc.status}): {exc}")


def stream(model: Model, context: Context, options: MistralOptions) -> AssistantMessageEventStream:
    """Stream one response from a Mistral model."""
    return launch_http(
        model, context, options, build_request, MistralDecoder, explain=explain_http_error
    )


def stream_simple(
    model: Model, context: Context, options: MistralSimpleOptions
) -> AssistantMessageEventStream:
    """:func:`stream` with ``prompt_mode: "reasoning"`` when a reasoning level is asked."""
    out = base_options(model, options)
    if model.reasoning and clamp_reasoning(options.get("reasoning")):
        out["prompt_mode"] = "reasoning"
    return stream(model, context, cast(MistralOptions, out))
