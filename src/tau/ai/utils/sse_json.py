"""What adapters that POST JSON and read back a stream of JSON SSE events share.

Kept apart from :mod:`tau.ai.http` so that the stream processors, which only decode, do not
pull in the HTTP client when they are imported.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import jiter

from tau.ai.builder import ProviderError
from tau.ai.types import Model


def sse_request_headers(
    model: Model, options: Mapping[str, Any], auth: Mapping[str, str]
) -> dict[str, str]:
    """Auth headers, then the model's headers, then the caller's (each may override)."""
    headers = {"accept": "text/event-stream", **auth}
    headers.update(model.headers or {})
    headers.update(options.get("headers") or {})
    return headers


def decode_event_data(data: str, what: str) -> dict[str, Any] | None:
    """The JSON object in one SSE ``data`` field; ``None`` for an empty field or ``[DONE]``.

    ``what`` names the event in errors (``"Mistral stream chunk"``): anything but a JSON
    object is a :class:`ProviderError`, never a raw decoder exception.
    """
    if data == "[DONE]" or not data:
        return None
    try:
        value = jiter.from_json(data.encode())
    except ValueError as exc:
        raise ProviderError(f"Malformed JSON in {what}: {exc}") from None
    if not isinstance(value, dict):
        raise ProviderError(f"Unexpected {what}: {data[:200]}")
    return value
