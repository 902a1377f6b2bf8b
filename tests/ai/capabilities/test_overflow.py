"""Context-overflow detection on real provider error messages."""

from __future__ import annotations

import pytest

from tau.ai import AssistantMessage, Usage
from tau.ai.capabilities.overflow import is_context_overflow, overflow_patterns

# Provider error messages as the providers word them.
OVERFLOW_MESSAGES = [
    "prompt is too long: 213462 tokens > 200000 maximum",  # Anthropic
    "Input is too long for requested model.",  # Bedrock
    "Your input exceeds the context window of this model. Please adjust your input.",  # OpenAI
    "The input token count (1196265) exceeds the maximum number of tokens allowed (1048575).",
    "This model's maximum prompt length is 131072 but the request contains 537812 tokens.",  # xAI
    "Please reduce the length of the messages or completion.",  # Groq
    "This endpoint's maximum context length is 128000 tokens. However, you requested 200000",
    "prompt token count of 135396 exceeds the limit of 128000",  # GitHub Copilot
    "the request exceeds the available context size, try increasing it",  # llama.cpp
    "Trying to keep the first 9000 tokens when context the overflows. Greater than the context length",
    "invalid params, context window exceeds limit (2013)",  # MiniMax
    "Invalid request: Your request exceeded model token limit: 262144",  # Kimi
    "Prompt contains 140000 tokens, too large for model with 131072 maximum context length",
    "Provider finish_reason: model_context_window_exceeded",  # z.ai
    "context_length_exceeded",
    "Context length exceeded",
    "Too many tokens in request",
    "Token limit exceeded for this request",
    "400 status code (no body)",  # Cerebras
    "413 (no body)",
]


def errored(text: str) -> AssistantMessage:
    return AssistantMessage([], "x", "x", "m", stop_reason="error", error_message=text)


@pytest.mark.parametrize("text", OVERFLOW_MESSAGES)
def test_overflow_messages(text: str) -> None:
    assert is_context_overflow(errored(text))


@pytest.mark.parametrize(
    "text",
    [
        "429 Too Many Requests: rate limit reached",
        "Rate limit exceeded, retry after 20s",
        "500 Internal Server Error",
        "401 invalid x-api-key",
        "400 status code: invalid tool schema",
        "",
    ],
)
def test_other_errors_are_not_overflow(text: str) -> None:
    assert not is_context_overflow(errored(text))


def test_overflow_text_needs_the_error_stop_reason() -> None:
    message = errored("prompt is too long")
    message.stop_reason = "stop"
    assert not is_context_overflow(message)


def test_silent_overflow_by_usage() -> None:
    message = AssistantMessage(
        [], "x", "zai", "glm", usage=Usage(input=100_000, cache_read=40_000), stop_reason="stop"
    )
    assert is_context_overflow(message, context_window=128_000)
    assert not is_context_overflow(message, context_window=200_000)
    assert not is_context_overflow(message)
    message.stop_reason = "length"
    assert not is_context_overflow(message, context_window=128_000)


def test_overflow_patterns_is_a_copy() -> None:
    patterns = overflow_patterns()
    assert len(patterns) == 18
    patterns.clear()
    assert len(overflow_patterns()) == 18
