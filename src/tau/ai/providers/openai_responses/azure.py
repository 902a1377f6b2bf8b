"""Where ``azure-openai-responses`` sends: the Responses API of an Azure OpenAI resource.

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
from urllib.parse import quote

from tau.ai.core.errors import ProviderError
from tau.ai.core.types import Model
from tau.ai.providers.openai_responses.options import AzureOpenAIResponsesOptions

__all__ = [
    "DEFAULT_API_VERSION",
    "parse_deployment_map",
    "resolve_api_version",
    "resolve_base_url",
    "resolve_deployment",
]

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
