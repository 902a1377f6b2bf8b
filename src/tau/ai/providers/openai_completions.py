"""``openai-completions``: OpenAI Chat Completions and every server that speaks it.

OpenAI itself, Groq, Cerebras, xAI, OpenRouter, DeepSeek, Mistral's chat endpoint, z.ai,
Together, Hugging Face, Ollama, vLLM, LM Studio, llama.cpp server… The per-endpoint dialect
comes from :mod:`tau.ai.providers.openai_compat`; the request is built by
:mod:`~tau.ai.providers.openai_completions_request` and the stream decoded by
:mod:`~tau.ai.providers.openai_completions_stream`. The wire protocol is spoken directly over
the shared HTTP client (no SDK at run time).

Options (besides the common ones): ``reasoning_effort``, ``tool_choice`` (``"auto"``,
``"none"``, ``"required"``/``"any"``, a tool name, or an OpenAI-shaped dict), ``service_tier``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from tau.ai.adapter import apply_on_payload
from tau.ai.builder import MessageBuilder, launch_stream
from tau.ai.env_keys import resolve_api_key
from tau.ai.errors import ProviderError
from tau.ai.event_stream import AssistantMessageEventStream
from tau.ai.headers import JSON_EVENT_STREAM, request_headers
from tau.ai.providers.copilot_headers import COPILOT_PROVIDER, copilot_dynamic_headers
from tau.ai.providers.openai_compat import is_endpoint, resolve_compat
from tau.ai.providers.openai_completions_request import build_params
from tau.ai.providers.openai_completions_stream import ChunkMapper
from tau.ai.providers.simple_options import base_options, clamp_reasoning, supports_xhigh
from tau.ai.types import Context, Model
from tau.ai.utils.transform_messages import (
    MistralIdNormalizer,
    ToolCallIdNormalizer,
    normalize_id_openai_completions,
    transform_messages,
)

__all__ = ["stream", "stream_simple"]


def _headers(
    model: Model, context: Context, options: Mapping[str, Any], key: str
) -> dict[str, str]:
    defaults = JSON_EVENT_STREAM
    if model.provider == COPILOT_PROVIDER:
        defaults = {**defaults, **copilot_dynamic_headers(context)}
    auth = {"authorization": f"Bearer {key}"} if key else None
    return request_headers(model, options, auth, defaults)


def _id_normalizer(model: Model) -> ToolCallIdNormalizer:
    # Mistral's chat endpoint takes only 9-alphanumeric tool-call ids.
    if is_endpoint(model, "mistral", "api.mistral.ai"):
        return MistralIdNormalizer()
    return normalize_id_openai_completions


def _http_error(exc: ProviderError, key: str, model: Model) -> str:
    text = str(exc)
    status = getattr(exc, "status", None)
    body = getattr(exc, "body", "")
    if body:
        # OpenRouter explains upstream failures in error.metadata.raw.
        try:
            parsed = json.loads(body)
        except ValueError:
            parsed = None
        error = parsed.get("error") if isinstance(parsed, dict) else None
        if isinstance(error, dict) and isinstance(error.get("metadata"), dict):
            raw = error["metadata"].get("raw")
            if raw:
                text = f"{text}\n{raw if isinstance(raw, str) else json.dumps(raw)}"
    if status == 401 and not key:
        text += f" (no API key was sent: set the {model.provider} key variable or pass api_key=)"
    return text


def stream(
    model: Model, context: Context, options: Mapping[str, Any]
) -> AssistantMessageEventStream:
    """Stream one chat-completions response (see the module docstring for options)."""

    async def run(builder: MessageBuilder) -> None:
        from tau.ai.http import ProviderHTTPError, open_stream

        compat = resolve_compat(model)
        messages = transform_messages(context.messages, model, _id_normalizer(model))
        body = build_params(model, context, messages, compat, options)
        body = await apply_on_payload(options, body, model)
        key = resolve_api_key(model, options) or ""
        url = model.base_url.rstrip("/") + "/chat/completions"
        mapper = ChunkMapper(builder)
        feed = mapper.feed_data
        try:
            async with open_stream(
                options, "POST", url, headers=_headers(model, context, options, key), json=body
            ) as response:
                async for event in response:
                    if not feed(event.data, event.event):
                        break
        except ProviderHTTPError as exc:
            raise ProviderError(_http_error(exc, key, model)) from exc
        mapper.finish()

    return launch_stream(model, options, run)


def stream_simple(
    model: Model, context: Context, options: Mapping[str, Any]
) -> AssistantMessageEventStream:
    """:func:`stream` with the unified ``reasoning`` level mapped to ``reasoning_effort``.

    ``xhigh`` is sent only to models that have it (else ``high``); a level given to a model
    without reasoning is ignored. ``tool_choice`` is passed on.
    """
    opts = base_options(model, options)
    level = options.get("reasoning")
    if level and model.reasoning:
        opts["reasoning_effort"] = level if supports_xhigh(model) else clamp_reasoning(level)
    if options.get("tool_choice") is not None:
        opts["tool_choice"] = options["tool_choice"]
    return stream(model, context, opts)
