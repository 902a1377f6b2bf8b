"""Anthropic (a Claude Pro/Max subscription): PKCE with a callback server on 127.0.0.1, or
the code pasted back when the browser is elsewhere.

Reference: pi's ``packages/ai/src/utils/oauth/anthropic.ts``. The state is the PKCE verifier
(as Anthropic's own client sends it), and the token endpoint takes JSON.
"""

from __future__ import annotations

import base64
import time
from typing import Any
from urllib.parse import urlencode

from tau.ai.oauth.base import (
    LoginCallbacks,
    OAuthCredentials,
    OAuthProvider,
    Pkce,
    request_json,
)
from tau.ai.oauth.callback import authorize_in_browser

__all__ = ["AnthropicOAuth"]

_CLIENT_ID = base64.b64decode("OWQxYzI1MGEtZTYxYi00NGQ5LTg4ZWQtNTk0NGQxOTYyZjVl").decode()
_SCOPES = (
    "org:create_api_key user:profile user:inference user:sessions:claude_code "
    "user:mcp_servers user:file_upload"
)
_EARLY = 300.0  # the access token counts as expiring 5 minutes early, as pi does


class AnthropicOAuth(OAuthProvider):
    """Claude's login. ``authorize_url`` and ``token_url`` are the endpoints,
    ``callback_port`` the local port the browser returns to (53692 is Anthropic's)."""

    id = "anthropic"
    name = "Anthropic (Claude Pro/Max)"
    uses_callback_server = True

    def __init__(
        self,
        *,
        authorize_url: str = "https://claude.ai/oauth/authorize",
        token_url: str = "https://platform.claude.com/v1/oauth/token",
        callback_port: int = 53692,
        timeout: float = 300.0,
    ) -> None:
        self.authorize_url = authorize_url
        self.token_url = token_url
        self.callback_port = callback_port
        self.timeout = timeout

    def login(self, callbacks: LoginCallbacks) -> OAuthCredentials:
        """Open Claude's authorize page; take the code from the redirect or a paste."""
        pkce = Pkce.new()

        def url(redirect: str) -> str:
            query = {
                "code": "true",
                "client_id": _CLIENT_ID,
                "response_type": "code",
                "redirect_uri": redirect,
                "scope": _SCOPES,
                "code_challenge": pkce.challenge,
                "code_challenge_method": "S256",
                "state": pkce.verifier,
            }
            return f"{self.authorize_url}?{urlencode(query)}"

        code, redirect = authorize_in_browser(
            callbacks,
            who="Anthropic login",
            url=url,
            path="/callback",
            port=self.callback_port,
            state=pkce.verifier,
            timeout=self.timeout,
            instructions="Complete login in your browser. If the browser is on another machine, "
            "paste the final redirect URL here.",
        )
        callbacks.on_progress("Exchanging the authorization code…")
        return self._token(
            {
                "grant_type": "authorization_code",
                "client_id": _CLIENT_ID,
                "code": code,
                "state": pkce.verifier,
                "redirect_uri": redirect,
                "code_verifier": pkce.verifier,
            },
            refreshing=False,
        )

    def refresh(self, credentials: OAuthCredentials) -> OAuthCredentials:
        """Trade the refresh token (Anthropic rotates it)."""
        return self._token(
            {
                "grant_type": "refresh_token",
                "client_id": _CLIENT_ID,
                "refresh_token": credentials.refresh,
            },
            refreshing=True,
        )

    def _token(self, body: dict[str, Any], *, refreshing: bool) -> OAuthCredentials:
        status, answer = request_json(
            "POST",
            self.token_url,
            who="Anthropic",
            headers={"Accept": "application/json"},
            body=body,
            accept_errors=True,
        )
        access, refresh, expires_in = self.tokens(
            status, answer, "Anthropic", refreshing=refreshing
        )
        return OAuthCredentials(access, refresh, time.time() + expires_in - _EARLY)
