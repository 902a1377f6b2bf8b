"""The subscription logins tau knows, by provider id."""

from __future__ import annotations

from tau.ai.oauth.base import OAuthProvider

__all__ = ["get_oauth_provider", "providers", "register_oauth_provider"]

_registered: dict[str, OAuthProvider] = {}


def _builtins() -> dict[str, OAuthProvider]:
    from tau.ai.oauth.anthropic import AnthropicOAuth
    from tau.ai.oauth.github_copilot import GitHubCopilotOAuth
    from tau.ai.oauth.google import AntigravityOAuth, GeminiCliOAuth
    from tau.ai.oauth.openai_codex import OpenAICodexOAuth

    made: list[OAuthProvider] = [
        AnthropicOAuth(),
        GitHubCopilotOAuth(),
        GeminiCliOAuth(),
        AntigravityOAuth(),
        OpenAICodexOAuth(),
    ]
    return {p.id: p for p in made}


def providers() -> dict[str, OAuthProvider]:
    """Every login, by provider id (``anthropic``, ``github-copilot``, ``google-antigravity``,
    ``google-gemini-cli``, ``openai-codex``, and any registered), sorted by id."""
    if not _registered:
        _registered.update(_builtins())
    return dict(sorted(_registered.items()))


def get_oauth_provider(provider: str) -> OAuthProvider | None:
    """The login of ``provider``, or None when it has none (a key-based provider)."""
    if not _registered:
        providers()
    return _registered.get(provider)


def register_oauth_provider(login: OAuthProvider) -> None:
    """Use ``login`` for its provider id from now on (a custom login, or a built-in pointed at
    other endpoints)."""
    providers()
    _registered[login.id] = login
