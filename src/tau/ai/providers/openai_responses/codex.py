"""Where and what ``openai-codex-responses`` sends: the Responses API of ChatGPT's backend,
which a ChatGPT Plus/Pro subscription reaches through ``tau login openai-codex`` (reference:
pi's ``packages/ai/src/providers/openai-codex-responses.ts``).

The body is the Responses one with ChatGPT's differences: the system prompt goes in
``instructions`` (not in ``input``), the encrypted reasoning is always asked for, tools are
sent without ``strict``, tool calls may run in parallel, and the effort is clamped to what each
model takes. The account the token is for goes in ``chatgpt-account-id``.
"""

from __future__ import annotations

import json
import platform
import time
from typing import Any

from tau.ai.core.errors import ProviderError, ProviderHTTPError
from tau.ai.core.types import Context, Model
from tau.ai.lookup.env_keys import require_api_key
from tau.ai.providers.openai_responses.options import OpenAICodexResponsesOptions
from tau.ai.providers.openai_responses.request import convert_messages, convert_tools
from tau.ai.streaming.adapter import ProviderRequest, set_given
from tau.ai.streaming.headers import request_headers

__all__ = [
    "DEFAULT_BASE_URL",
    "build_request",
    "clamp_effort",
    "codex_url",
    "explain",
    "request_body",
]

DEFAULT_BASE_URL = "https://chatgpt.com/backend-api"
_USER_AGENT = f"tau ({platform.system().lower()} {platform.release()}; {platform.machine()})"


def clamp_effort(model_id: str, effort: str) -> str:
    """The effort ``model_id`` accepts for ``effort`` (the 5.2+ models have no ``minimal``,
    5.1 no ``xhigh``, and the mini only ``medium`` and ``high``)."""
    name = model_id.rsplit("/", 1)[-1]
    if name.startswith(("gpt-5.2", "gpt-5.3", "gpt-5.4")) and effort == "minimal":
        return "low"
    if name == "gpt-5.1" and effort == "xhigh":
        return "high"
    if name == "gpt-5.1-codex-mini":
        return "high" if effort in ("high", "xhigh") else "medium"
    return effort


def codex_url(base_url: str) -> str:
    """``…/codex/responses`` under ``base_url`` (kept when the base already ends so)."""
    base = (base_url.strip() or DEFAULT_BASE_URL).rstrip("/")
    if base.endswith("/codex/responses"):
        return base
    if base.endswith("/codex"):
        return f"{base}/responses"
    return f"{base}/codex/responses"


def request_body(
    model: Model, context: Context, options: OpenAICodexResponsesOptions
) -> dict[str, Any]:
    """The JSON body for ``context`` (before the ``on_payload`` hook)."""
    body: dict[str, Any] = {"model": model.id, "store": False, "stream": True}
    set_given(body, instructions=context.system_prompt or None)
    body["input"] = convert_messages(model, context, include_system_prompt=False)
    body["text"] = {"verbosity": options.get("text_verbosity") or "medium"}
    body["include"] = ["reasoning.encrypted_content"]
    session_id = options.get("session_id")
    if session_id and options.get("cache_retention") != "none":
        body["prompt_cache_key"] = session_id
    body["tool_choice"] = "auto"
    body["parallel_tool_calls"] = True
    set_given(body, temperature=options.get("temperature"))
    if context.tools:
        body["tools"] = convert_tools(context.tools, strict=None)
    effort = options.get("reasoning_effort")
    if effort:
        body["reasoning"] = {
            "effort": clamp_effort(model.id, effort),
            "summary": options.get("reasoning_summary") or "auto",
        }
    return body


def build_request(
    model: Model, context: Context, options: OpenAICodexResponsesOptions
) -> ProviderRequest:
    """``POST {base_url}/codex/responses`` with the token, its account and the session."""
    # Loaded here, not with the record: OpenAI's own records share this package.
    from tau.ai.oauth.openai_codex import codex_account_id

    token = require_api_key(model, options)
    account = codex_account_id(token)
    if account is None:
        raise ProviderError(
            f"{model.provider}: the key is not a ChatGPT access token (it names no account); "
            "log in with `tau login openai-codex`"
        )
    auth = {
        "authorization": f"Bearer {token}",
        "chatgpt-account-id": account,
        "originator": "tau",
        "user-agent": _USER_AGENT,
        "openai-beta": "responses=experimental",
    }
    session_id = options.get("session_id")
    if session_id:
        auth["session_id"] = session_id
    return ProviderRequest(
        codex_url(model.base_url),
        request_headers(model, options, auth),
        request_body(model, context, options),
    )


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
