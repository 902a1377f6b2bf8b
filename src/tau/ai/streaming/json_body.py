"""The JSON text of what an adapter sends: request bodies and tool-call arguments.

JSON has no NaN or Infinity; here they are a clear error naming where the number is, never
invalid JSON upstream. Shared by the adapter driver and the HTTP layer (and the adapters that
send arguments as a string), so it imports neither.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from tau.ai.core.errors import ProviderError
from tau.ai.core.types import ToolCall


def json_text(value: Any, what: str = "The request body", **dumps: Any) -> str:
    """``value`` as JSON text (``dumps`` are :func:`json.dumps`'s keyword arguments).

    JSON has no NaN or Infinity: Python would write them as bare ``NaN``, which providers
    reject as invalid JSON (or worse, read as something else). Here they are a
    :class:`~tau.ai.core.errors.ProviderError` naming where the number is, ``what`` naming the
    value (``"Tool call 'get' arguments"``). The walk that finds the place runs only on failure.
    """
    try:
        return json.dumps(value, allow_nan=False, **dumps)
    except ValueError as exc:
        where = _non_finite_path(value, "")
        if where is None:
            raise ProviderError(f"{what} cannot be sent as JSON: {exc}") from None
        path, number = where
        raise ProviderError(
            f"{what} holds the non-finite number {number!r} at {path or 'the top'}: JSON has "
            "no NaN or Infinity, so it cannot be sent (check the option or tool argument "
            "that produced it)"
        ) from None


def tool_arguments_json(call: ToolCall, **dumps: Any) -> str:
    """A tool call's arguments as the JSON text the wire formats that take a string carry
    (:func:`json_text`: a NaN among them is a clear error, never invalid JSON upstream)."""
    return json_text(call.arguments, f"Tool call {call.name!r} arguments", **dumps)


def _non_finite_path(value: Any, path: str) -> tuple[str, float] | None:
    if isinstance(value, float):
        return None if math.isfinite(value) else (path, value)
    if isinstance(value, Mapping):
        for key, item in value.items():
            found = _non_finite_path(item, f"{path}.{key}" if path else str(key))
            if found is not None:
                return found
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            found = _non_finite_path(item, f"{path}[{index}]")
            if found is not None:
                return found
    return None


def json_bytes(value: Any) -> bytes:
    """``value`` as compact JSON bytes, the form every JSON request body is sent in (NaN and
    Infinity are a :class:`~tau.ai.core.errors.ProviderError`: :func:`json_text`)."""
    return json_text(value, separators=(",", ":")).encode()
