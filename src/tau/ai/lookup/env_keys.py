"""API keys from the environment, per provider.

Providers whose credentials are not a single key (Vertex with Application Default Credentials,
Bedrock with the AWS credential chain) report :data:`AUTHENTICATED` when credentials are
configured: their adapters must then authenticate through that chain, never send the sentinel
as a key.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from tau.ai.core.errors import ProviderError
from tau.ai.core.types import Model

AUTHENTICATED = "<authenticated>"
"""Returned instead of a key when ambient credentials (ADC, the AWS chain) are configured."""

# provider -> environment variables, the first one set wins
_KEY_VARS: dict[str, tuple[str, ...]] = {
    "github-copilot": ("COPILOT_GITHUB_TOKEN", "GH_TOKEN", "GITHUB_TOKEN"),
    "anthropic": ("ANTHROPIC_OAUTH_TOKEN", "ANTHROPIC_API_KEY"),
    "openai": ("OPENAI_API_KEY",),
    "azure-openai-responses": ("AZURE_OPENAI_API_KEY",),
    "google": ("GEMINI_API_KEY",),
    "groq": ("GROQ_API_KEY",),
    "cerebras": ("CEREBRAS_API_KEY",),
    "xai": ("XAI_API_KEY",),
    "openrouter": ("OPENROUTER_API_KEY",),
    "vercel-ai-gateway": ("AI_GATEWAY_API_KEY",),
    "zai": ("ZAI_API_KEY",),
    "mistral": ("MISTRAL_API_KEY",),
    "minimax": ("MINIMAX_API_KEY",),
    "minimax-cn": ("MINIMAX_CN_API_KEY",),
    "huggingface": ("HF_TOKEN",),
    "opencode": ("OPENCODE_API_KEY",),
    "opencode-go": ("OPENCODE_API_KEY",),
    "kimi-coding": ("KIMI_API_KEY",),
    "deepseek": ("DEEPSEEK_API_KEY",),
}

_AWS_CREDENTIAL_VARS = (
    "AWS_PROFILE",
    "AWS_BEARER_TOKEN_BEDROCK",
    "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
    "AWS_CONTAINER_CREDENTIALS_FULL_URI",
    "AWS_WEB_IDENTITY_TOKEN_FILE",
)


def _env(name: str) -> str | None:
    # An empty variable is as good as unset: `export X=` must not count as a key.
    value = os.environ.get(name)
    return value if value else None


def _has_adc() -> bool:
    # os.path rather than pathlib: this module is imported by ``import tau.ai``.
    path = _env("GOOGLE_APPLICATION_CREDENTIALS") or os.path.expanduser(
        "~/.config/gcloud/application_default_credentials.json"
    )
    return os.path.isfile(path)


def _vertex_key() -> str | None:
    key = _env("GOOGLE_CLOUD_API_KEY")
    if key:
        return key
    project = _env("GOOGLE_CLOUD_PROJECT") or _env("GCLOUD_PROJECT")
    if project and _env("GOOGLE_CLOUD_LOCATION") and _has_adc():
        return AUTHENTICATED
    return None


def _bedrock_key() -> str | None:
    if any(_env(name) for name in _AWS_CREDENTIAL_VARS):
        return AUTHENTICATED
    if _env("AWS_ACCESS_KEY_ID") and _env("AWS_SECRET_ACCESS_KEY"):
        return AUTHENTICATED
    return None


_AMBIENT_VARS: dict[str, tuple[str, ...]] = {
    "google-vertex": ("GOOGLE_CLOUD_API_KEY", "GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION"),
    "amazon-bedrock": ("AWS_PROFILE", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"),
}


def key_variables(provider: str, api: str | None = None) -> tuple[str, ...]:
    """The environment variables that hold ``provider``'s key, in order of preference (for
    Vertex and Bedrock: the main ones of their credential chains). Empty when tau knows none."""
    return _KEY_VARS.get(provider) or _AMBIENT_VARS.get(provider, ())


def get_env_api_key(provider: str) -> str | None:
    """The API key for ``provider`` from the environment, :data:`AUTHENTICATED`, or None.

    The environment is read on every call, so a key exported after start-up is seen.
    """
    if provider == "google-vertex":
        return _vertex_key()
    if provider == "amazon-bedrock":
        return _bedrock_key()
    for name in _KEY_VARS.get(provider, ()):
        value = _env(name)
        if value:
            return value
    return None


def resolve_api_key(model: Model, options: Mapping[str, Any]) -> str | None:
    """The key an adapter should use: the ``api_key`` option, else the environment's."""
    key = options.get("api_key")
    if key:
        return str(key)
    return get_env_api_key(model.provider)


def require_api_key(model: Model, options: Mapping[str, Any]) -> str:
    """:func:`resolve_api_key`, or a :class:`ProviderError` naming the variables to set."""
    key = resolve_api_key(model, options)
    if key:
        return key
    names = " or ".join(_KEY_VARS.get(model.provider, ())) or "its key variable"
    raise ProviderError(f"No API key for provider {model.provider!r}: set {names} or pass api_key")
