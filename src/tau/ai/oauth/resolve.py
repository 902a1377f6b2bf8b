"""Keys from the credential store, for requests: refreshed before they expire.

:func:`stored_api_key` is what key resolution asks after the environment (see
:mod:`tau.ai.lookup.env_keys`); it returns quickly (one ``stat``) while the stored token is
fresh, and registers the store's tokens with the redaction rule the first time it is used.
"""

from __future__ import annotations

import dataclasses
import os
from typing import TYPE_CHECKING

from tau.ai.oauth.registry import get_oauth_provider
from tau.ai.oauth.store import CredentialStore, default_auth_path

if TYPE_CHECKING:
    from tau.ai.core.types import Model

__all__ = ["default_store", "get_api_key", "prepare_model", "stored_api_key"]

# One store per value of the variables that place the file (asked before every request).
_stores: dict[tuple[str | None, str | None], CredentialStore] = {}


def default_store() -> CredentialStore:
    """The store at ``$TAU_HOME/auth.json`` (one per path), its tokens redacted everywhere."""
    key = (os.environ.get("TAU_HOME"), os.environ.get("XDG_CONFIG_HOME"))
    store = _stores.get(key)
    if store is None:
        from tau.ai.capabilities.secrets import add_secret_source

        store = _stores[key] = CredentialStore(default_auth_path())
        add_secret_source(store.secrets)
    return store


def get_api_key(provider: str, store: CredentialStore | None = None) -> str | None:
    """The stored key of ``provider`` (its plain key, or its login's, refreshed when it
    expires within 60 s), or None. Fits ``Agent(get_api_key=...)``."""
    chosen = store if store is not None else default_store()
    return chosen.api_key(provider, get_oauth_provider(provider))


def stored_api_key(provider: str) -> str | None:
    """:func:`get_api_key` from the default store, or None at once when there is no file."""
    if not _stores and not default_auth_path().exists():
        return None
    return get_api_key(provider)


def prepare_model(model: Model, store: CredentialStore | None = None) -> Model:
    """``model`` with the API base its provider's stored login names (Copilot's plan host);
    ``model`` itself when there is none."""
    login = get_oauth_provider(model.provider)
    if login is None:
        return model
    credentials = (store if store is not None else default_store()).oauth(model.provider)
    base = login.base_url(credentials) if credentials is not None else None
    return (
        model if not base or base == model.base_url else dataclasses.replace(model, base_url=base)
    )
