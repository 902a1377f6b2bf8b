"""What a faux call "sends": the request body a real adapter would build."""

from __future__ import annotations

from typing import Any

from tau.ai.capabilities.serialization import dump_context
from tau.ai.core.types import Context, Model
from tau.ai.providers.faux.options import FauxOptions

__all__ = ["request_body"]


def request_body(model: Model, context: Context, options: FauxOptions) -> dict[str, Any]:
    """What a real adapter would send: the model, the pi-format context, the sampling options."""
    payload: dict[str, Any] = {"model": model.id, **dump_context(context)}
    for key in ("max_tokens", "temperature", "reasoning", "output_schema"):
        if options.get(key) is not None:
            payload[key] = options[key]
    return payload
