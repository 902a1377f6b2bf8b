"""Names and values of the OpenTelemetry GenAI semantic conventions (v1.41) that tau emits.

Kept as plain strings: the conventions' Python constants live in the incubating part of
``opentelemetry-semantic-conventions``, which ``tau[otel]`` does not require.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

from tau.ai import AssistantMessage, Model, StopReason

OPERATION = "gen_ai.operation.name"
PROVIDER = "gen_ai.provider.name"
REQUEST_MODEL = "gen_ai.request.model"
REQUEST_MAX_TOKENS = "gen_ai.request.max_tokens"
REQUEST_TEMPERATURE = "gen_ai.request.temperature"
REQUEST_STREAM = "gen_ai.request.stream"
CONVERSATION_ID = "gen_ai.conversation.id"
RESPONSE_MODEL = "gen_ai.response.model"
RESPONSE_ID = "gen_ai.response.id"
FINISH_REASONS = "gen_ai.response.finish_reasons"
TIME_TO_FIRST_CHUNK = "gen_ai.response.time_to_first_chunk"
INPUT_TOKENS = "gen_ai.usage.input_tokens"
OUTPUT_TOKENS = "gen_ai.usage.output_tokens"
CACHE_READ_TOKENS = "gen_ai.usage.cache_read.input_tokens"
CACHE_CREATION_TOKENS = "gen_ai.usage.cache_creation.input_tokens"
REASONING_TOKENS = "gen_ai.usage.reasoning.output_tokens"
INPUT_MESSAGES = "gen_ai.input.messages"
OUTPUT_MESSAGES = "gen_ai.output.messages"
SYSTEM_INSTRUCTIONS = "gen_ai.system_instructions"
AGENT_NAME = "gen_ai.agent.name"
TOOL_NAME = "gen_ai.tool.name"
TOOL_CALL_ID = "gen_ai.tool.call.id"
TOOL_TYPE = "gen_ai.tool.type"
TOOL_DESCRIPTION = "gen_ai.tool.description"
TOOL_ARGUMENTS = "gen_ai.tool.call.arguments"
TOOL_RESULT = "gen_ai.tool.call.result"
TOKEN_TYPE = "gen_ai.token.type"
ERROR_TYPE = "error.type"
SERVER_ADDRESS = "server.address"
SERVER_PORT = "server.port"
RESEND_COUNT = "http.request.resend_count"
STATUS_CODE = "http.response.status_code"

# tau's own attributes and events (the conventions have no name for these).
COST = "tau.usage.cost"
"""The call's (or run's) cost in USD, from the catalog's prices."""
API = "tau.api"
RETRY_EVENT = "tau.http.retry"
RETRY_DELAY = "tau.retry.delay"
TURN_START_EVENT = "tau.turn.start"
TURN_END_EVENT = "tau.turn.end"
TURN = "tau.turn"
TURN_TOOL_CALLS = "tau.turn.tool_calls"

TOKEN_USAGE_METRIC = "gen_ai.client.token.usage"
DURATION_METRIC = "gen_ai.client.operation.duration"
TIME_TO_FIRST_CHUNK_METRIC = "gen_ai.client.operation.time_to_first_chunk"
# The bucket boundaries the conventions give for each histogram.
TOKEN_BUCKETS = tuple(float(4**i) for i in range(14))
SECONDS_BUCKETS = tuple(0.01 * 2**i for i in range(14))

_PROVIDERS = {
    "openai": "openai",
    "anthropic": "anthropic",
    "google": "gcp.gemini",
    "google-vertex": "gcp.vertex_ai",
    "amazon-bedrock": "aws.bedrock",
    "mistral": "mistral_ai",
    "azure-openai-responses": "azure.ai.openai",
    "xai": "x_ai",
    "groq": "groq",
    "deepseek": "deepseek",
    "perplexity": "perplexity",
    "cohere": "cohere",
}
_APIS = {
    "google-generative-ai": "gcp.gemini",
    "google-vertex": "gcp.vertex_ai",
    "bedrock-converse-stream": "aws.bedrock",
    "azure-openai-responses": "azure.ai.openai",
    "mistral-conversations": "mistral_ai",
}


def provider_name(model: Model) -> str:
    """``gen_ai.provider.name``: the well-known value for the provider (or, for a provider of
    its own, the API it speaks when that names a vendor), else tau's provider id."""
    return _PROVIDERS.get(model.provider) or _APIS.get(model.api) or model.provider


def server_attributes(url: str) -> dict[str, Any]:
    """``server.address`` and ``server.port`` of an http(s) URL; empty for anything else (a
    template such as Vertex's ``{location}``, a local model)."""
    if "{" in url:
        return {}
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return {}
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return {}
    return {
        SERVER_ADDRESS: parts.hostname,
        SERVER_PORT: port if port is not None else (443 if parts.scheme == "https" else 80),
    }


_FINISH_REASONS: dict[StopReason, str] = {
    "stop": "stop",
    "length": "length",
    "toolUse": "tool_call",
    "error": "error",
    "aborted": "error",
}


def finish_reason(reason: StopReason) -> str:
    """The conventions' finish reason for a tau stop reason."""
    return _FINISH_REASONS.get(reason, "error")


_STATUS = re.compile(r"(\d{3}) ")


def error_type(message: AssistantMessage) -> str:
    """``error.type`` of a failed response: ``aborted``; the HTTP status (``"429"``) when the
    error came from one; ``timeout`` for tau's connect/first-byte/idle timeouts; else
    ``_OTHER``."""
    if message.stop_reason == "aborted":
        return "aborted"
    text = message.error_message or ""
    status = _STATUS.match(text)
    if status is not None:
        return status.group(1)
    if "timeout" in text:
        return "timeout"
    return "_OTHER"


def usage_attributes(message: AssistantMessage) -> dict[str, Any]:
    """Token counts (input counts cached tokens too, as the conventions ask) and cost."""
    usage = message.usage
    attributes: dict[str, Any] = {
        INPUT_TOKENS: usage.input + usage.cache_read + usage.cache_write,
        OUTPUT_TOKENS: usage.output,
        COST: usage.cost.total,
    }
    if usage.cache_read:
        attributes[CACHE_READ_TOKENS] = usage.cache_read
    if usage.cache_write:
        attributes[CACHE_CREATION_TOKENS] = usage.cache_write
    if usage.reasoning is not None:
        attributes[REASONING_TOKENS] = usage.reasoning
    return attributes
