"""Validate chat-completions request bodies against the official ``openai`` SDK's types.

The SDK's ``CompletionCreateParamsStreaming`` is a TypedDict whose ``Iterable`` fields
pydantic validates lazily and whose unknown keys it ignores; :func:`check_openai_body`
forces every lazy iterator (so each message, part and tool call is validated) and also
rejects keys the SDK does not know, except the documented per-endpoint extensions.
"""

from __future__ import annotations

from typing import Any, get_type_hints

from openai.types.chat import (
    ChatCompletionAssistantMessageParam,
    ChatCompletionDeveloperMessageParam,
    ChatCompletionSystemMessageParam,
    ChatCompletionToolMessageParam,
    ChatCompletionUserMessageParam,
)
from openai.types.chat.completion_create_params import CompletionCreateParamsStreaming
from pydantic import TypeAdapter

_ADAPTER: TypeAdapter[Any] = TypeAdapter(CompletionCreateParamsStreaming)
_TOP_KEYS = set(get_type_hints(CompletionCreateParamsStreaming))
# Fields that OpenAI-compatible endpoints (not OpenAI) define; see openai_compat.
EXTENSION_KEYS = {
    "thinking",  # z.ai
    "enable_thinking",  # Qwen
    "chat_template_kwargs",  # vLLM / SGLang Qwen templates
    "reasoning",  # OpenRouter
    "provider",  # OpenRouter routing
    "providerOptions",  # Vercel AI Gateway routing
}
_ROLE_TYPES: dict[str, Any] = {
    "developer": ChatCompletionDeveloperMessageParam,
    "system": ChatCompletionSystemMessageParam,
    "user": ChatCompletionUserMessageParam,
    "assistant": ChatCompletionAssistantMessageParam,
    "tool": ChatCompletionToolMessageParam,
}
# Reasoning replay fields of chat-completions servers (llama.cpp, DeepSeek, vLLM, OpenRouter).
MESSAGE_EXTENSION_KEYS = {"reasoning_content", "reasoning", "reasoning_text", "reasoning_details"}


def _force(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _force(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_force(v) for v in value]
    if type(value).__name__ == "ValidatorIterator":
        return [_force(v) for v in value]
    return value


def check_openai_body(
    body: dict[str, Any],
    *,
    extensions: set[str] | None = None,
    message_extensions: set[str] | None = None,
) -> None:
    """Raise if ``body`` is not a valid streaming chat-completions request.

    ``extensions``/``message_extensions`` name the non-OpenAI keys a test expects.
    """
    allowed = _TOP_KEYS | (extensions or set())
    unknown = set(body) - allowed
    assert not unknown, f"keys the openai SDK does not know: {sorted(unknown)}"
    _force(_ADAPTER.validate_python(body))
    for message in body["messages"]:
        kind = _ROLE_TYPES[message["role"]]
        known = set(get_type_hints(kind)) | MESSAGE_EXTENSION_KEYS | (message_extensions or set())
        extra = set(message) - known
        assert not extra, f"{message['role']} message has unknown keys {sorted(extra)}"
