"""The Responses provider records: ``openai-responses`` (OpenAI), ``azure-openai-responses``
(an Azure OpenAI resource) and ``openai-codex-responses`` (ChatGPT's Codex backend), one
protocol with three endpoints."""

from __future__ import annotations

from tau.ai.core.types import Context, Model
from tau.ai.lookup.provider import Provider, builder_decoder
from tau.ai.providers.openai_responses import codex
from tau.ai.providers.openai_responses.decoder import OpenAIResponsesDecoder
from tau.ai.providers.openai_responses.options import (
    AzureOpenAIResponsesOptions,
    OpenAICodexResponsesOptions,
    OpenAIResponsesOptions,
)
from tau.ai.providers.openai_responses.request import build_azure_request, build_request
from tau.ai.providers.simple_options import reasoning_effort
from tau.ai.streaming.builder import MessageBuilder

__all__ = ["AZURE_PROVIDER", "CODEX_PROVIDER", "PROVIDER"]


def decoder(
    builder: MessageBuilder, model: Model, context: Context, options: OpenAIResponsesOptions
) -> OpenAIResponsesDecoder:
    """The decoder of one response; the service tier prices its usage."""
    return OpenAIResponsesDecoder(builder, service_tier=options.get("service_tier"))


PROVIDER = Provider(
    api="openai-responses",
    options=OpenAIResponsesOptions,
    prefix="openai_",
    env_keys={"openai": ("OPENAI_API_KEY",)},
    build_request=build_request,
    decoder=decoder,
    reasoning=reasoning_effort,
)
"""OpenAI's Responses API (``POST {base_url}/responses``)."""

AZURE_PROVIDER = Provider(
    api="azure-openai-responses",
    options=AzureOpenAIResponsesOptions,
    prefix="azure_",
    env_keys={"azure-openai-responses": ("AZURE_OPENAI_API_KEY",)},
    build_request=build_azure_request,
    decoder=decoder,
    reasoning=reasoning_effort,
)
"""The Responses API of an Azure OpenAI resource (see :mod:`.azure` for where it sends)."""

CODEX_PROVIDER = Provider(
    api="openai-codex-responses",
    options=OpenAICodexResponsesOptions,
    prefix="codex_",
    env_keys={"openai-codex": ()},
    build_request=codex.build_request,
    decoder=builder_decoder(OpenAIResponsesDecoder),
    explain=codex.explain,
    reasoning=reasoning_effort,
)
"""ChatGPT's Codex backend (``POST {base_url}/codex/responses``), keyed by ``tau login
openai-codex`` (see :mod:`.codex`); it ends a response with ``response.done``."""
