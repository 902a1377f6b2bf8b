"""Subscription logins and the credential store: ``tau.ai.oauth``'s face.

* :class:`OAuthProvider` is one login (:class:`AnthropicOAuth`, :class:`GitHubCopilotOAuth`,
  :class:`GeminiCliOAuth`, :class:`AntigravityOAuth`, :class:`OpenAICodexOAuth`);
  :func:`providers` lists them by id and :func:`register_oauth_provider` adds or replaces one.
  ``login(LoginCallbacks(...))`` returns :class:`OAuthCredentials`.
* :class:`CredentialStore` keeps logins and plain keys in ``$TAU_HOME/auth.json`` (mode 0600,
  changed atomically under a lock); :func:`default_store` is that file's store.
* :func:`get_api_key` is a provider's stored key, refreshed within 60 s of expiry (it fits
  ``Agent(get_api_key=...)``); key resolution (``tau.ai.get_env_api_key`` and every adapter)
  already asks the default store after the environment. :func:`prepare_model` points a model
  at the API base its login names (Copilot's plan host).

Nothing here is loaded by ``import tau.ai``; every name loads on first use.
"""

from typing import TYPE_CHECKING, Any

from tau.ai import _lazy

__all__ = [
    "REFRESH_MARGIN",
    "AnthropicOAuth",
    "AntigravityOAuth",
    "CredentialStore",
    "CredentialStoreError",
    "GeminiCliOAuth",
    "GitHubCopilotOAuth",
    "LoginCallbacks",
    "OAuthCredentials",
    "OAuthError",
    "OAuthProvider",
    "OpenAICodexOAuth",
    "default_store",
    "get_api_key",
    "get_oauth_provider",
    "prepare_model",
    "providers",
    "register_oauth_provider",
]

_LAZY = {
    "LoginCallbacks": "tau.ai.oauth.base",
    "OAuthCredentials": "tau.ai.oauth.base",
    "OAuthError": "tau.ai.oauth.base",
    "OAuthProvider": "tau.ai.oauth.base",
    "REFRESH_MARGIN": "tau.ai.oauth.store",
    "CredentialStore": "tau.ai.oauth.store",
    "CredentialStoreError": "tau.ai.oauth.store",
    "GitHubCopilotOAuth": "tau.ai.oauth.github_copilot",
    "AnthropicOAuth": "tau.ai.oauth.anthropic",
    "AntigravityOAuth": "tau.ai.oauth.google",
    "GeminiCliOAuth": "tau.ai.oauth.google",
    "OpenAICodexOAuth": "tau.ai.oauth.openai_codex",
    "get_oauth_provider": "tau.ai.oauth.registry",
    "providers": "tau.ai.oauth.registry",
    "register_oauth_provider": "tau.ai.oauth.registry",
    "default_store": "tau.ai.oauth.resolve",
    "get_api_key": "tau.ai.oauth.resolve",
    "prepare_model": "tau.ai.oauth.resolve",
}

if TYPE_CHECKING:
    from tau.ai.oauth.anthropic import AnthropicOAuth
    from tau.ai.oauth.base import LoginCallbacks, OAuthCredentials, OAuthError, OAuthProvider
    from tau.ai.oauth.github_copilot import GitHubCopilotOAuth
    from tau.ai.oauth.google import AntigravityOAuth, GeminiCliOAuth
    from tau.ai.oauth.openai_codex import OpenAICodexOAuth
    from tau.ai.oauth.registry import get_oauth_provider, providers, register_oauth_provider
    from tau.ai.oauth.resolve import default_store, get_api_key, prepare_model
    from tau.ai.oauth.store import REFRESH_MARGIN, CredentialStore, CredentialStoreError


def __getattr__(name: str) -> Any:
    return _lazy.resolve(__name__, globals(), name, _LAZY, {})


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
