"""The headers of a provider request."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tau.ai.types import Model


def sse_request_headers(
    model: Model, options: Mapping[str, Any], auth: Mapping[str, str]
) -> dict[str, str]:
    """Auth headers, then the model's headers, then the caller's (each may override)."""
    headers = {"accept": "text/event-stream", **auth}
    headers.update(model.headers or {})
    headers.update(options.get("headers") or {})
    return headers
