"""``azure-openai-responses``: the Responses API of an Azure OpenAI resource.

Where to send, and as which deployment, comes from the options or the environment:
``azure_base_url`` / ``AZURE_OPENAI_BASE_URL``, else
``https://<resource>.openai.azure.com/openai/v1`` from ``azure_resource_name`` /
``AZURE_OPENAI_RESOURCE_NAME``, else ``model.base_url``; the deployment from
``azure_deployment_name``, else the ``AZURE_OPENAI_DEPLOYMENT_NAME_MAP`` entry for the model
(``model-id=deployment,…``), else the model id; ``api-version`` from ``azure_api_version`` /
``AZURE_OPENAI_API_VERSION``, else ``v1``. The key goes in the ``api-key`` header.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, cast
from urllib.parse import quote

from tau.ai.core.errors import ProviderError
from tau.ai.core.types import Context, Model
from tau.ai.lookup.env_keys import resolve_api_key
from tau.ai.providers.openai_responses.decoder import OpenAIResponsesDecoder
from tau.ai.providers.openai_responses.openai import simple_reasoning_options
from tau.ai.providers.openai_responses.options import (
    AzureOpenAIResponsesOptions,
    AzureOpenAIResponsesSimpleOptions,
)
from tau.ai.providers.openai_responses.request import responses_body
from tau.ai.streaming.adapter import ProviderRequest, launch_http
from tau.ai.streaming.event_stream import AssistantMessageEventStream
from tau.ai.streaming.headers import request_headers

__all__ = [
    "DEFAULT_API_VERSION",
    "OPTIONS",
    "SIMPLE_OPTIONS",
    "build_request",
    "parse_deployment_map",
    "request_body",
    "resolve_api_version",
    "resolve_base_url",
    "resolve_deployment",
    "stream",
    "stream_simple",
]

OPTIONS = AzureOpenAIResponsesOptions
SIMPLE_OPTIONS = AzureOpenAIResponsesSimpleOptions
DEFAULT_API_VERSION = "v1"


def _setting(options: Mapping[str, object], key: str, env: str) -> str | None:
    value = options.get(key)
    if isinstance(value, str) and value.strip():
        return value.strip()
    value = os.environ.get(env, "").strip()
    return value or None


def parse_deployment_map(text: str) -> dict[str, str]:
    """``"model-a=dep-a, model-b=dep-b"`` as a dict; malformed pairs are skipped."""
    mapping: dict[str, str] = {}
    for pair in text.split(","):
        model_id, sep, deployment = pair.partition("=")
        model_id, deployment = model_id.strip(), deployment.strip()
        if sep and model_id and deployment:
            mapping[model_id] = deployment
    return mapping


def resolve_deployment(model: Model, options: AzureOpenAIResponsesOptions) -> str:
    """The deployment name sent as ``model``."""
    explicit = options.get("azure_deployment_name")
    if isinstance(explicit, str) and explicit.strip():
        return explicit.strip()
    mapped = parse_deployment_map(os.environ.get("AZURE_OPENAI_DEPLOYMENT_NAME_MAP", ""))
    return mapped.get(model.id, model.id)


def resolve_base_url(model: Model, options: AzureOpenAIResponsesOptions) -> str:
    """The resource's ``…/openai/v1`` URL, without a trailing slash."""
    base = _setting(options, "azure_base_url", "AZURE_OPENAI_BASE_URL")
    if base is None:
        resource = _setting(options, "azure_resource_name", "AZURE_OPENAI_RESOURCE_NAME")
        if resource is not None:
            base = f"https://{quote(resource, safe='')}.openai.azure.com/openai/v1"
        elif model.base_url.strip():
            base = model.base_url.strip()
        else:
            raise ProviderError(
                "Azure OpenAI needs a resource: set AZURE_OPENAI_RESOURCE_NAME or "
                "AZURE_OPENAI_BASE_URL, or pass azure_resource_name / azure_base_url"
            )
    return base.rstrip("/")


def resolve_api_version(options: AzureOpenAIResponsesOptions) -> str:
    """The ``api-version`` query parameter."""
    return _setting(options, "azure_api_version", "AZURE_OPENAI_API_VERSION") or DEFAULT_API_VERSION


def request_body(
    model: Model, context: Context, options: AzureOpenAIResponsesOptions
) -> dict[str, Any]:
    """The request body for ``model`` (before the ``on_payload`` hook)."""
    return responses_body(model, context, options, model_name=resolve_deployment(model, options))


def build_request(
    model: Model, context: Context, options: AzureOpenAIResponsesOptions
) -> ProviderRequest:
    """``POST <resource>/responses?api-version=…`` with the key in the ``api-key`` header."""
    api_key = resolve_api_key(model, options) or os.environ.get("AZURE_OPENAI_API_KEY")
    if not api_key:
        raise ProviderError(
            "Azure OpenAI API key is required: set AZURE_OPENAI_API_KEY or pass api_key"
        )
    url = (
        f"{resolve_base_url(model, options)}/responses"
        f"?api-version={quote(resolve_api_version(options), safe='')}"
    )
    headers = request_headers(model, options, {"api-key": api_key})
    return ProviderRequest(url, headers, request_body(model, context, options))


def stream(
    model: Model, context: Context, options: AzureOpenAIResponsesOptions
) -> AssistantMessageEventStream:
    """Stream one response from an Azure OpenAI deployment."""
    return launch_http(model, context, options, build_request, OpenAIResponsesDecoder)


def stream_simple(
    model: Model, context: Context, options: AzureOpenAIResponsesSimpleOptions
) -> AssistantMessageEventStream:
    """:func:`stream` with the unified ``reasoning`` level mapped to ``reasoning_effort``
    (the ``azure_*`` options, which say where the deployment is, are passed on)."""
    out = simple_reasoning_options(model, options)
    return stream(model, context, cast(AzureOpenAIResponsesOptions, out))
