"""OpenAI Codex (a ChatGPT Plus/Pro subscription): PKCE with a callback server on 127.0.0.1.

Reference: pi's ``packages/ai/src/utils/oauth/openai-codex.ts``. The access token is a JWT
whose ``https://api.openai.com/auth`` claim names the ChatGPT account requests are billed to.
"""

from __future__ import annotations

import functools
import secrets
import time
from urllib.parse import urlencode

from tau.ai.oauth.base import (
    LoginCallbacks,
    OAuthCredentials,
    OAuthError,
    OAuthProvider,
    Pkce,
    decode_jwt,
    post_form,
)
from tau.ai.oauth.callback import authorize_in_browser

__all__ = ["OpenAICodexOAuth", "codex_account_id"]

_CLIENT_ID = "app_EMoamEEZ73f0CkXaXp7hrann"
_SCOPE = "openid profile email offline_access"
_CLAIM = "https://api.openai.com/auth"
_CALLBACK_PATH = "/auth/callback"


@functools.lru_cache(maxsize=4)
def codex_account_id(access_token: str) -> str | None:
    """The ChatGPT account id an access token is for, or None."""
    # Every request asks, for the same token until it is refreshed: decoding it each time
    # cost a Codex request 3 µs (base64 + JSON), kept here for the few tokens in use.
    payload = decode_jwt(access_token) or {}
    claim = payload.get(_CLAIM)
    account = claim.get("chatgpt_account_id") if isinstance(claim, dict) else None
    return account if isinstance(account, str) and account else None


class OpenAICodexOAuth(OAuthProvider):
    """ChatGPT's login for Codex. ``auth_url`` is the issuer (``/oauth/authorize`` and
    ``/oauth/token`` under it); ``callback_port`` the local port the browser is sent back to
    (1455 is the one OpenAI accepts; 0 picks a free one); ``timeout`` how long to wait."""

    id = "openai-codex"
    name = "ChatGPT Plus/Pro (Codex Subscription)"
    uses_callback_server = True

    def __init__(
        self,
        *,
        auth_url: str = "https://auth.openai.com",
        callback_port: int = 1455,
        originator: str = "tau",
        timeout: float = 300.0,
    ) -> None:
        self.auth_url = auth_url.rstrip("/")
        self.callback_port = callback_port
        self.originator = originator
        self.timeout = timeout

    def login(self, callbacks: LoginCallbacks) -> OAuthCredentials:
        """Open the authorize page; take the code from the redirect (or a paste); trade it."""
        pkce = Pkce.new()
        state = secrets.token_hex(16)

        def url(redirect: str) -> str:
            query = {
                "response_type": "code",
                "client_id": _CLIENT_ID,
                "redirect_uri": redirect,
                "scope": _SCOPE,
                "code_challenge": pkce.challenge,
                "code_challenge_method": "S256",
                "state": state,
                "id_token_add_organizations": "true",
                "codex_cli_simplified_flow": "true",
                "originator": self.originator,
            }
            return f"{self.auth_url}/oauth/authorize?{urlencode(query)}"

        code, redirect = authorize_in_browser(
            callbacks,
            who="OpenAI Codex login",
            url=url,
            path=_CALLBACK_PATH,
            port=self.callback_port,
            state=state,
            timeout=self.timeout,
        )
        return self._token(
            {
                "grant_type": "authorization_code",
                "client_id": _CLIENT_ID,
                "code": code,
                "code_verifier": pkce.verifier,
                "redirect_uri": redirect,
            },
            refreshing=False,
        )

    def refresh(self, credentials: OAuthCredentials) -> OAuthCredentials:
        """Trade the refresh token (OpenAI rotates it: the new one replaces it)."""
        return self._token(
            {
                "grant_type": "refresh_token",
                "refresh_token": credentials.refresh,
                "client_id": _CLIENT_ID,
            },
            refreshing=True,
        )

    def _token(self, form: dict[str, str], *, refreshing: bool) -> OAuthCredentials:
        who = "OpenAI Codex"
        status, answer = post_form(
            f"{self.auth_url}/oauth/token", form, who=who, accept_errors=True
        )
        access, refresh, expires_in = self.tokens(status, answer, who, refreshing=refreshing)
        account = codex_account_id(access)
        if account is None:
            raise OAuthError(f"{who}: the access token names no ChatGPT account")
        return OAuthCredentials(access, refresh, time.time() + expires_in, {"accountId": account})
