"""``openai-responses``: OpenAI's Responses API (``POST {base_url}/responses``, streamed).

Stateless by design: every request sends ``store: false`` and the whole conversation, with
the model's own reasoning handed back as encrypted reasoning items (see
:mod:`tau.ai.providers.responses_shared`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tau.ai.adapter import apply_on_payload
from tau.ai.builder import MessageBuilder, launch_stream
from tau.ai.env_keys import require_api_key
from tau.ai.event_stream import AssistantMessageEventStream
from tau.ai.headers import request_headers
from tau.ai.providers.responses_shared import (
    ResponsesStreamProcessor,
    base_payload,
)
from tau.ai.providers.simple_options import base_options, clamp_reasoning, supports_xhigh
from tau.ai.types import Context, Model

__all__ = [
    "build_payload",
    "simple_reasoning_options",
    "stream",
    "stream_responses",
    "stream_simple",
]


def build_payload(model: Model, context: Context, options: Mapping[str, Any]) -> dict[str, Any]:
    """The request body for ``model`` (before the ``on_payload`` hook)."""
    payload = base_payload(model, context, options)
    # The 24-hour cache is OpenAI's own feature; look-alike servers reject the field.
    if options.get("cache_retention") == "long" and "api.openai.com" in model.base_url:
        payload["prompt_cache_retention"] = "24h"
    service_tier = options.get("service_tier")
    if service_tier:
        payload["service_tier"] = service_tier
    return payload


async def stream_responses(
    builder: MessageBuilder,
    options: Mapping[str, Any],
    url: str,
    headers: Mapping[str, str],
    payload: dict[str, Any],
) -> None:
    """POST ``payload`` to a Responses endpoint and feed the stream into ``builder``."""
    from tau.ai.http import open_stream

    processor = ResponsesStreamProcessor(builder, service_tier=payload.get("service_tier"))
    handle_data = processor.handle_data
    async with open_stream(options, "POST", url, headers=headers, json=payload) as response:
        async for event in response:
            handle_data(event.data)
    processor.finish()


def stream(
    model: Model, context: Context, options: Mapping[str, Any] | None = None
) -> AssistantMessageEventStream:
    """Stream one response from an ``openai-responses`` model."""
    opts: Mapping[str, Any] = options or {}

    async def run(builder: MessageBuilder) -> None:
        api_key = require_api_key(model, opts)
        payload = await apply_on_payload(opts, build_payload(model, context, opts), model)
        headers = request_headers(model, opts, {"authorization": f"Bearer {api_key}"})
        url = model.base_url.rstrip("/") + "/responses"
        await stream_responses(builder, opts, url, headers, payload)

    return launch_stream(model, opts, run)


def simple_reasoning_options(model: Model, options: Mapping[str, Any]) -> dict[str, Any]:
    """``stream_simple`` options for the Responses APIs: the level becomes the effort."""
    out = base_options(model, options)
    level = options.get("reasoning")
    if level and model.reasoning:
        out["reasoning_effort"] = level if supports_xhigh(model) else clamp_reasoning(level)
    return out


def stream_simple(
    model: Model, context: Context, options: Mapping[str, Any] | None = None
) -> AssistantMessageEventStream:
    """:func:`stream` with the unified ``reasoning`` level mapped to ``reasoning_effort``."""
    return stream(model, context, simple_reasoning_options(model, options or {}))
