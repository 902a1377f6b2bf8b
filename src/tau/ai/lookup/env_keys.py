"""API keys from the environment, per provider, as the provider records declare them.

Each record names the environment variables of the providers it serves (``env_keys``:
``{"anthropic": ("ANTHROPIC_OAUTH_TOKEN", "ANTHROPIC_API_KEY")}``, the first one set wins),
and, for providers whose credentials are not a single key (Vertex with Application Default
Credentials, Bedrock with the AWS credential chain), a ``credentials`` function that reports
:data:`AUTHENTICATED` when credentials are configured: their adapters must then authenticate
through that chain, never send the sentinel as a key.

The registry declares a record's variables here when it loads the record, and is asked
(through :mod:`tau.ai.lookup.plugins`) to load the records that may know a provider not
declared yet. This module imports nothing of the registry.

After the environment, the credential store is asked (``$TAU_HOME/auth.json``: keys and
subscription logins saved by ``tau login``, see :mod:`tau.ai.oauth`); it is loaded only when
no variable holds a key and the file exists, so ``import tau.ai`` never loads it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any

from tau.ai.core.errors import ProviderError
from tau.ai.core.types import Model
from tau.ai.lookup.plugins import load_key_records

__all__ = [
    "AUTHENTICATED",
    "declare",
    "get_env_api_key",
    "is_declared",
    "key_variables",
    "require_api_key",
    "resolve_api_key",
]

AUTHENTICATED = "<authenticated>"
"""Returned instead of a key when ambient credentials (ADC, the AWS chain) are configured."""

Credentials = Callable[[], "str | None"]

# provider -> (its variables, the credentials function of the record that declared it, and the
# main variables of that credential chain, for messages)
_declared: dict[str, tuple[tuple[str, ...], Credentials | None, tuple[str, ...]]] = {}


def declare(
    variables: Mapping[str, tuple[str, ...]],
    credentials: Credentials | None,
    hints: tuple[str, ...] = (),
) -> None:
    """Record which variables hold each provider's key (a record's ``env_keys``), and its
    ambient ``credentials`` with the variables that configure them (``hints``)."""
    for provider, names in variables.items():
        _declared[provider] = (tuple(names), credentials, hints)


def is_declared(provider: str) -> bool:
    """Whether a loaded record declares ``provider``'s key variables."""
    return provider in _declared


def _source(
    provider: str, api: str | None
) -> tuple[tuple[str, ...], Credentials | None, tuple[str, ...]]:
    found = _declared.get(provider)
    if found is None:
        load_key_records(provider, api)
        found = _declared.get(provider)
    return found if found is not None else ((), None, ())


def key_variables(provider: str, api: str | None = None) -> tuple[str, ...]:
    """The environment variables that hold ``provider``'s key, in order of preference (for
    Vertex and Bedrock: the main ones of their credential chains). Empty when tau knows none."""
    names, _, hints = _source(provider, api)
    return names or hints


def _env(name: str) -> str | None:
    # An empty variable is as good as unset: `export X=` must not count as a key.
    value = os.environ.get(name)
    return value if value else None


def get_env_api_key(provider: str, api: str | None = None) -> str | None:
    """The API key for ``provider`` from the environment, else from the credential store
    (refreshing a login that is about to expire), else :data:`AUTHENTICATED`, or None.

    ``api`` (the model's) says which record to read first. The environment is read on every
    call, so a key exported after start-up is seen.
    """
    names, credentials, _ = _source(provider, api)
    for name in names:
        value = _env(name)
        if value:
            return value
    from tau.ai.oauth.resolve import stored_api_key

    stored = stored_api_key(provider)
    if stored:
        return stored
    return credentials() if credentials is not None else None


def resolve_api_key(model: Model, options: Mapping[str, Any]) -> str | None:
    """The key an adapter should use: the ``api_key`` option, else the environment's."""
    key = options.get("api_key")
    if key:
        return str(key)
    return get_env_api_key(model.provider, model.api)


def require_api_key(model: Model, options: Mapping[str, Any]) -> str:
    """:func:`resolve_api_key`, or a :class:`ProviderError` naming the variables to set."""
    key = resolve_api_key(model, options)
    if key:
        return key
    names = " or ".join(_source(model.provider, model.api)[0]) or "its key variable"
    raise ProviderError(f"No API key for provider {model.provider!r}: set {names} or pass api_key")
