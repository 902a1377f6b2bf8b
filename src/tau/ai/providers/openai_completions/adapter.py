"""The ``openai-completions`` entry points: ``stream`` and ``stream_simple``."""

from __future__ import annotations

import json
from typing import cast

from tau.ai.core.errors import ProviderError, ProviderHTTPError
from tau.ai.core.types import Context, Model
from tau.ai.lookup.env_keys import resolve_api_key
from tau.ai.providers.openai_completions.decoder import OpenAICompletionsDecoder
from tau.ai.providers.openai_completions.options import (
    OpenAICompletionsOptions,
    OpenAICompletionsSimpleOptions,
)
from tau.ai.providers.openai_completions.request import build_request
from tau.ai.providers.simple_options import base_options, clamp_reasoning, supports_xhigh
from tau.ai.streaming.adapter import launch_http
from tau.ai.streaming.event_stream import AssistantMessageEventStream

__all__ = ["OPTIONS", "SIMPLE_OPTIONS", "stream", "stream_simple"]

OPTIONS = OpenAICompletionsOptions
SIMPLE_OPTIONS = OpenAICompletionsSimpleOptions


def stream(
    model: Model, context: Context, options: OpenAICompletionsOptions
) -> AssistantMessageEventStream:
    """Stream one chat-completions response (options: :class:`OpenAICompletionsOptions`)."""

    def explain(exc: ProviderHTTPError) -> ProviderError:
        text = str(exc)
        if exc.body:
            # OpenRouter explains upstream failures in error.metadata.raw.
            try:
                parsed = json.loads(exc.body)
            except ValueError:
                parsed = None
            error = parsed.get("error") if isinstance(parsed, dict) else None
            if isinstance(error, dict) and isinstance(error.get("metadata"), dict):
                raw = error["metadata"].get("raw")
                if raw:
                    text = f"{text}\n{raw if isinstance(raw, str) else json.dumps(raw)}"
        if exc.status == 401 and not resolve_api_key(model, options):
            text += (
                f" (no API key was sent: set the {model.provider} key variable or pass api_key=)"
            )
        return ProviderError(text)

    return launch_http(
        model, context, options, build_request, OpenAICompletionsDecoder, explain=explain
    )


def stream_simple(
    model: Model, context: Context, options: OpenAICompletionsSimpleOptions
) -> AssistantMessageEventStream:
    """:func:`stream` with the unified ``reasoning`` level mapped to ``reasoning_effort``.

    ``xhigh`` is sent only to models that have it (else ``high``); a level given to a model
    without reasoning is ignored. ``tool_choice`` is passed on.
    """
    opts = base_options(model, options)
    level = options.get("reasoning")
    if level and model.reasoning:
        opts["reasoning_effort"] = level if supports_xhigh(model) else clamp_reasoning(level)
    return stream(model, context, cast(OpenAICompletionsOptions, opts))
