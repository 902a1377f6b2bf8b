"""Readable errors from HTTP answers: the provider's own message out of an error body."""

from __future__ import annotations

import json
import re
from typing import Any

import httpx2

from tau.ai.core.errors import one_line

MAX_ERROR_BODY = 1 << 20
"""Bytes of an error body read at most (enough to explain; an HTML page can be huge)."""

_TITLE = re.compile(rb"<title[^>]*>(.*?)</title>", re.IGNORECASE | re.DOTALL)


def error_message_from_body(body: bytes, content_type: str = "") -> str:
    """The provider's own message from an error body, on one line.

    Understands ``{"error": {"message", "type"}}``, ``{"error": "..."}``, ``{"message"}`` and
    ``{"detail"}`` (also inside a one-element list); an HTML page becomes a short note with
    its title; other text is truncated. An empty body is ``"(no body)"``.
    """
    stripped = body.strip()
    if not stripped:
        return "(no body)"
    if stripped[:1] in (b"{", b"["):
        try:
            parsed = json.loads(stripped)
        except ValueError:
            parsed = None
        if parsed is not None:
            found = _message_from_json(parsed)
            if found:
                return one_line(found)
    head = stripped[:512].lower()
    if "html" in content_type.lower() or head.startswith((b"<!doctype", b"<html")):
        match = _TITLE.search(stripped[:8192])
        title = one_line(match.group(1).decode("utf-8", "replace")) if match else ""
        note = "the server answered with an HTML page instead of an API response"
        return f"{note} ({title})" if title else note
    return one_line(stripped.decode("utf-8", "replace"))


def _message_from_json(value: Any) -> str | None:
    if isinstance(value, list) and value:
        return _message_from_json(value[0])
    if not isinstance(value, dict):
        return None
    error = value.get("error")
    if isinstance(error, dict):
        message = error.get("message")
        kind = error.get("type") or error.get("status")
        if isinstance(message, str) and message:
            return f"{kind}: {message}" if isinstance(kind, str) and kind else message
        if isinstance(kind, str) and kind:
            return kind
    elif isinstance(error, str) and error:
        return error
    message = value.get("message")
    if isinstance(message, str) and message:
        return message
    detail = value.get("detail")
    if isinstance(detail, str) and detail:
        return detail
    if isinstance(detail, list) and detail:
        texts = [d.get("msg") for d in detail if isinstance(d, dict) and d.get("msg")]
        if texts:
            return "; ".join(str(t) for t in texts)
    return None


async def read_limited(response: httpx2.Response) -> bytes:
    """Up to :data:`MAX_ERROR_BODY` bytes of ``response``'s body (what arrived, if it breaks)."""
    parts: list[bytes] = []
    size = 0
    try:
        async for chunk in response.aiter_bytes():
            parts.append(chunk)
            size += len(chunk)
            if size >= MAX_ERROR_BODY:
                break
    except httpx2.TransportError:
        pass  # what arrived is enough to describe the error
    return b"".join(parts)
