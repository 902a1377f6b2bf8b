"""The ``openai-codex-responses`` record: ChatGPT's Codex backend, a subscription login's key."""

from __future__ import annotations

import json
import time
from typing import Any

from tau.ai.core.errors import ProviderError, ProviderHTTPError
from tau.ai.core.types import Model
from tau.ai.lookup.provider import Provider, builder_decoder
from tau.ai.providers.openai_codex.decoder import OpenAICodexDecoder
from tau.ai.providers.openai_codex.options import OpenAICodexResponsesOptions
from tau.ai.providers.openai_codex.request import build_request
from tau.ai.providers.simple_options import reasoning_effort

__all__ = ["PROVIDER", "explain"]

_LIMIT_CODES = ("usage_limit_reached", "usage_not_included", "rate_limit_exceeded")


def explain(error: ProviderHTTPError, model: Model, options: Any) -> ProviderError:
    """A usage limit said plainly (with the plan and when it resets, where the answer names
    them); other errors as they came."""
    try:
        body = json.loads(error.body or "")
    except ValueError:
        return error
    raw = body.get("error") if isinstance(body, dict) else None
    if not isinstance(raw, dict):
        return error
    code = str(raw.get("code") or raw.get("type") or "")
    if error.status != 429 and code not in _LIMIT_CODES:
        return error
    plan = raw.get("plan_type")
    text = "You have hit your ChatGPT usage limit" + (
        f" ({str(plan).lower()} plan)" if plan else ""
    )
    resets = raw.get("resets_at")
    if isinstance(resets, int | float):
        text += f"; try again in about {max(0, round((resets - time.time()) / 60))} min"
    return ProviderError(text, status=error.status, retry_after=error.retry_after)


PROVIDER = Provider(
    api="openai-codex-responses",
    options=OpenAICodexResponsesOptions,
    prefix="codex_",
    env_keys={"openai-codex": ()},
    build_request=build_request,
    decoder=builder_decoder(OpenAICodexDecoder),
    explain=explain,
    reasoning=reasoning_effort,
)
"""ChatGPT's Codex backend (``POST {base_url}/codex/responses``), keyed by ``tau login
openai-codex``."""
