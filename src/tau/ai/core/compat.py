"""The differences between chat-completions endpoints: :class:`OpenAICompletionsCompat`.

Its own module, loaded on first use: only models of the ``openai-completions`` api carry one,
and building this dataclass (sixteen fields) cost ``import tau.ai`` about 1.5 ms.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Literal, Never, TypeAlias

if TYPE_CHECKING:
    from typing_extensions import TypeVar

    Unset = TypeVar("Unset", default=None)
else:
    from typing import TypeVar

    # The default (None: a compat as users write it) matters to type checkers only.
    Unset = TypeVar("Unset")

__all__ = [
    "JsonOutputSupport",
    "MaxTokensField",
    "OpenAICompletionsCompat",
    "ResolvedCompat",
    "ThinkingFormat",
]

ThinkingFormat: TypeAlias = Literal["openai", "openrouter", "zai", "qwen", "qwen-chat-template"]
"""How a chat-completions endpoint switches reasoning on (see ``OpenAICompletionsCompat``)."""
MaxTokensField: TypeAlias = Literal["max_completion_tokens", "max_tokens"]
"""The request field a chat-completions endpoint reads the output limit from."""

JsonOutputSupport: TypeAlias = Literal["json_schema", "json_object_schema", "json_object", "none"]
"""What a chat-completions endpoint's ``response_format`` takes: OpenAI's ``json_schema``,
``json_object`` with a ``schema`` beside it (llama-cpp-python's server, Anyscale), the JSON
mode alone, or nothing."""

_DETECTED: Any = None  # a field's default: decided by detection when the call is made


@dataclass(slots=True)
class OpenAICompletionsCompat(Generic[Unset]):
    """Per-endpoint differences of the OpenAI chat-completions protocol.

    Every field left as None is auto-detected from the provider id and base URL; a value set
    here overrides detection field by field. This is the one declaration of the fields: the
    resolved form, :data:`ResolvedCompat`, is this same class with every field decided (its
    type parameter says no field is None), and the JSON form uses pi's camelCase names.
    """

    supports_store: bool | Unset = _DETECTED
    """Whether the endpoint takes ``store`` (tau sends ``store: false``)."""
    supports_developer_role: bool | Unset = _DETECTED
    """Whether a reasoning model's system prompt goes in the ``developer`` role."""
    supports_reasoning_effort: bool | Unset = _DETECTED
    """Whether ``reasoning_effort`` is sent at all."""
    reasoning_effort_map: dict[str, str] | Unset = _DETECTED
    """Reasoning levels renamed for the endpoint (Groq's Qwen3 takes ``default``)."""
    supports_usage_in_streaming: bool | Unset = _DETECTED
    """Whether ``stream_options: {include_usage: true}`` is sent."""
    max_tokens_field: MaxTokensField | Unset = _DETECTED
    """Which field carries the output limit."""
    requires_tool_result_name: bool | Unset = _DETECTED
    """Whether a tool result carries its tool's ``name``."""
    requires_assistant_after_tool_result: bool | Unset = _DETECTED
    """Whether a user turn after tool results needs an assistant turn between."""
    requires_thinking_as_text: bool | Unset = _DETECTED
    """Whether replayed thinking goes in front of the text instead of its own field."""
    thinking_format: ThinkingFormat | Unset = _DETECTED
    """How reasoning is switched on (``reasoning_effort``, OpenRouter, z.ai, Qwen…)."""
    open_router_routing: dict[str, list[str]] | Unset = _DETECTED
    """OpenRouter's ``provider`` routing (``only``, ``order``)."""
    vercel_gateway_routing: dict[str, list[str]] | Unset = _DETECTED
    """Vercel AI Gateway's routing (``only``, ``order``)."""
    supports_strict_mode: bool | Unset = _DETECTED
    """Whether each tool carries ``strict: false``."""
    supports_prompt_cache_key: bool | Unset = _DETECTED
    """Whether the session id is sent as ``prompt_cache_key``."""
    accepts_empty_tools: bool | Unset = _DETECTED
    """Whether ``tools: []`` may be sent (api.openai.com rejects an empty list)."""
    json_output: JsonOutputSupport | Unset = _DETECTED
    """Native structured output (see :data:`JsonOutputSupport`); with the JSON mode alone the
    schema goes in a system message."""


ResolvedCompat: TypeAlias = "OpenAICompletionsCompat[Never]"
"""An :class:`OpenAICompletionsCompat` with every field decided (none is None)."""
