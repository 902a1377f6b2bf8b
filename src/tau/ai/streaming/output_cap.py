"""The output cap: how many characters one response may stream, whatever its server does.

A server that streams without end (or far past ``max_tokens``) must cost bounded memory: the
:class:`~tau.ai.streaming.builder.MessageBuilder` ends a response whose text, thinking and
tool-call arguments together pass the cap with an ``error`` event.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tau.ai.core.errors import ProviderError
from tau.ai.core.types import Model

OUTPUT_CAP_BASE = 1 << 20
"""Characters of output every response may hold, whatever its token limit."""
OUTPUT_CAP_PER_TOKEN = 64
"""Characters per token of ``max_tokens`` on top of the base: a token is about 4 characters
of text; 64 leaves room for the longest tokens, JSON escapes in tool arguments, and
reasoning a provider streams as summaries."""


def output_chars_for(max_tokens: int) -> int:
    """The output cap of a response limited to ``max_tokens`` tokens."""
    return OUTPUT_CAP_BASE + OUTPUT_CAP_PER_TOKEN * max(max_tokens, 0)


def output_cap(model: Model, options: Mapping[str, Any]) -> int:
    """Characters of output (text, thinking, tool arguments) one response may stream: the
    ``max_output_chars`` option, else :func:`output_chars_for` the ``max_tokens`` option (or
    the model's ``max_tokens``)."""
    explicit = options.get("max_output_chars")
    if explicit is not None:
        if not isinstance(explicit, int) or isinstance(explicit, bool) or explicit <= 0:
            raise ProviderError(
                f"max_output_chars must be a positive number of characters, not {explicit!r}"
            )
        return explicit
    tokens = options.get("max_tokens")
    if not isinstance(tokens, int) or isinstance(tokens, bool) or tokens <= 0:
        tokens = model.max_tokens
    return output_chars_for(tokens)
