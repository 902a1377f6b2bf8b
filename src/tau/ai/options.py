"""Keyword options of the entry points, as ``TypedDict``s for ``Unpack``."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Literal, TypeAlias, TypedDict

from tau.ai.abort import AbortSignal
from tau.ai.types import CacheRetention, Model, ThinkingBudgets, ThinkingLevel

PayloadHook: TypeAlias = Callable[
    [dict[str, Any], Model], "dict[str, Any] | Awaitable[dict[str, Any] | None] | None"
]
"""Sees the provider request body before it is sent; a returned dict replaces it."""


class Timeouts(TypedDict, total=False):
    """Seconds to wait: for the connection, for the first byte, and between two events."""

    connect: float
    first_byte: float
    idle: float


class StreamOptions(TypedDict, total=False):
    """Options every provider accepts."""

    api_key: str
    """Overrides the key from the environment."""
    signal: AbortSignal
    """Fires to abort the call; the stream ends with ``error``/``aborted``."""
    max_tokens: int
    temperature: float
    headers: dict[str, str]
    """Extra HTTP headers, applied last."""
    session_id: str
    """Used for prompt-cache keys and routing affinity where the provider supports them."""
    cache_retention: CacheRetention
    on_payload: PayloadHook
    metadata: dict[str, Any]
    client: Any
    """An ``httpx2.AsyncClient`` to use instead of the shared per-loop one."""
    timeout: float | Timeouts
    """One number for all three phases, or each phase separately."""
    max_retries: int
    """Retries of 429/5xx/overloaded before the first byte (default 3)."""
    max_retry_delay_ms: int
    """Fail instead of waiting when the server asks for a longer delay (default 60 000; 0 = no cap)."""


class SimpleStreamOptions(StreamOptions, total=False):
    """:class:`StreamOptions` plus one unified reasoning level."""

    reasoning: ThinkingLevel
    thinking_budgets: ThinkingBudgets


class ProviderStreamOptions(StreamOptions, total=False):
    """:class:`StreamOptions` plus the provider-specific options of the built-in adapters.

    Each adapter reads the keys it understands and ignores the rest.
    """

    # anthropic-messages
    thinking_enabled: bool
    thinking_budget_tokens: int
    effort: Literal["low", "medium", "high", "max"]
    interleaved_thinking: bool
    # shared by several: "auto" | "none" | "any" | "required" | a provider-shaped dict
    tool_choice: Any
    # openai-completions / openai-responses / azure
    reasoning_effort: ThinkingLevel
    reasoning_summary: Literal["auto", "detailed", "concise"] | None
    service_tier: str
    azure_api_version: str
    azure_resource_name: str
    azure_base_url: str
    azure_deployment_name: str
    # google-generative-ai / google-vertex
    thinking: dict[str, Any]
    """``{"enabled": bool, "budget_tokens": int (-1 dynamic, 0 off), "level": "low"…}``."""
    project: str
    """Vertex project (else ``GOOGLE_CLOUD_PROJECT`` / ``GCLOUD_PROJECT`` / the ADC's)."""
    location: str
    """Vertex location, e.g. ``us-central1`` or ``global`` (else ``GOOGLE_CLOUD_LOCATION``)."""
    stream_function_call_arguments: bool
    """Stream function-call arguments as they are written (``streamFunctionCallArguments``);
    ``stream_simple`` turns it on for Gemini 3 and later on Vertex AI."""
    # mistral-conversations
    prompt_mode: Literal["reasoning"]
    # bedrock-converse-stream
    region: str
    """AWS region (else ``AWS_REGION`` / ``AWS_DEFAULT_REGION`` / the profile's / us-east-1)."""
    profile: str
    """AWS profile for credentials and region."""
    thinking_budgets: ThinkingBudgets
    reasoning: ThinkingLevel
