"""User content as the parts of a request, in the two shapes providers share:
``{"text": …}`` (Gemini, Bedrock's Converse) and ``{"type": …, "text": …}`` (OpenAI's chat
completions and Responses, Mistral)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tau.ai.core.types import ImageContent, TextContent, UserContent
from tau.ai.streaming.sanitize import sanitize_surrogates

__all__ = ["text_parts", "typed_parts"]


def text_parts(
    content: str | list[UserContent],
    image: Callable[[ImageContent], dict[str, Any]] | None,
) -> list[dict[str, Any]]:
    """User content as parts: each non-empty text as ``{"text": …}`` (lone surrogates removed,
    they break the JSON), each image through ``image`` (left out when it is None)."""
    if isinstance(content, str):
        return [{"text": sanitize_surrogates(content)}] if content else []
    parts: list[dict[str, Any]] = []
    for block in content:
        if isinstance(block, TextContent):
            if block.text:
                parts.append({"text": sanitize_surrogates(block.text)})
        elif image is not None:
            parts.append(image(block))
    return parts


def typed_parts(
    blocks: list[UserContent],
    text_type: str,
    image: Callable[[ImageContent], dict[str, Any]] | None,
) -> list[dict[str, Any]]:
    """Blocks as typed parts: each text as ``{"type": text_type, "text": …}`` (lone surrogates
    removed), each image through ``image`` (left out when it is None)."""
    parts: list[dict[str, Any]] = []
    for block in blocks:
        if isinstance(block, TextContent):
            parts.append({"type": text_type, "text": sanitize_surrogates(block.text)})
        elif image is not None:
            parts.append(image(block))
    return parts
