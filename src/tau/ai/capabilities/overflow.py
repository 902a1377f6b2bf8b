"""Recognising a context-window overflow from a finished assistant message."""

from __future__ import annotations

import re

from tau.ai.core.types import AssistantMessage

# Case-insensitive patterns of the providers' overflow errors (pi-ai's list).
_PATTERNS: tuple[re.Pattern[str], ...] = tuple(
    re.compile(p, re.IGNORECASE)
    for p in (
        r"prompt is too long",  # Anthropic
        r"input is too long for requested model",  # Bedrock
        r"exceeds the context window",  # OpenAI Completions and Responses
        r"input token count.*exceeds the maximum",  # Gemini
        r"maximum prompt length is \d+",  # xAI
        r"reduce the length of the messages",  # Groq
        r"maximum context length is \d+ tokens",  # OpenRouter
        r"exceeds the limit of \d+",  # GitHub Copilot
        r"exceeds the available context size",  # llama.cpp
        r"greater than the context length",  # LM Studio
        r"context window exceeds limit",  # MiniMax
        r"exceeded model token limit",  # Kimi
        r"too large for model with \d+ maximum context length",  # Mistral
        r"model_context_window_exceeded",  # z.ai, through the unhandled finish_reason error
        r"context[_ ]length[_ ]exceeded",
        r"too many tokens",
        r"token limit exceeded",
        r"^4(?:00|13)\s*(?:status code)?\s*\(no body\)",  # Cerebras
    )
)


def overflow_patterns() -> list[re.Pattern[str]]:
    """The compiled patterns :func:`is_context_overflow` matches error messages against (a copy)."""
    return list(_PATTERNS)


def is_context_overflow(message: AssistantMessage, context_window: int | None = None) -> bool:
    """Whether ``message`` shows that the request did not fit the model's context window.

    True when the message ended in ``error`` with a provider's overflow message (a 429 rate
    limit does not count), or, given ``context_window``, when it ended normally (``stop``) with
    more input tokens than the window holds: z.ai overflows silently that way. Ollama truncates
    silently and cannot be detected.
    """
    if message.stop_reason == "error":
        error = message.error_message or ""
        return any(p.search(error) for p in _PATTERNS)
    if context_window is not None and message.stop_reason == "stop":
        usage = message.usage
        return usage.input + usage.cache_read > context_window
    return False
