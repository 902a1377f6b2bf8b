"""The options of the Responses adapters (``openai-responses``, ``azure-openai-responses``,
``openai-codex-responses``)."""

from __future__ import annotations

from typing import Literal

from tau.ai.core.options import SimpleStreamOptions, StreamOptions, ToolChoiceOption
from tau.ai.core.types import ThinkingLevel


class ResponsesOptions(StreamOptions, ToolChoiceOption, total=False):
    """What both Responses adapters take: :class:`~tau.ai.StreamOptions` plus reasoning;
    ``tool_choice`` is ``"auto"``, ``"none"``, ``"required"``, or a Responses-shaped dict."""

    reasoning_effort: ThinkingLevel
    reasoning_summary: Literal["auto", "detailed", "concise"] | None


class OpenAIResponsesOptions(ResponsesOptions, total=False):
    """The options of ``openai-responses``."""

    service_tier: str
    """OpenAI's ``service_tier``; its price factor applies to the cost."""


class AzureOpenAIResponsesOptions(ResponsesOptions, total=False):
    """The options of ``azure-openai-responses``: where the deployment is."""

    azure_api_version: str
    """The ``api-version`` query parameter (else ``AZURE_OPENAI_API_VERSION``, else ``v1``)."""
    azure_resource_name: str
    """The resource, ``https://<name>.openai.azure.com`` (else ``AZURE_OPENAI_RESOURCE_NAME``)."""
    azure_base_url: str
    """The resource's ``…/openai/v1`` URL (else ``AZURE_OPENAI_BASE_URL``)."""
    azure_deployment_name: str
    """The deployment sent as ``model`` (else ``AZURE_OPENAI_DEPLOYMENT_NAME_MAP``, else the id)."""


class OpenAICodexResponsesOptions(ResponsesOptions, total=False):
    """The options of ``openai-codex-responses``: the Responses ones plus Codex's
    ``text.verbosity`` (``medium`` when not given)."""

    text_verbosity: Literal["low", "medium", "high"]


class OpenAIResponsesSimpleOptions(SimpleStreamOptions, ToolChoiceOption, total=False):
    """What ``stream_simple`` of ``openai-responses`` takes: the tool choice is passed on."""


class AzureOpenAIResponsesSimpleOptions(SimpleStreamOptions, ToolChoiceOption, total=False):
    """What ``stream_simple`` of ``azure-openai-responses`` takes: the tool choice and where
    the deployment is are passed on."""

    azure_api_version: str
    azure_resource_name: str
    azure_base_url: str
    azure_deployment_name: str
