"""OpenAI Codex's PKCE login with its 127.0.0.1 callback server, against a fake auth server
(reference: pi's packages/ai/src/utils/oauth/openai-codex.ts)."""

from __future__ import annotations

import threading
from urllib.parse import parse_qs, urlsplit

import httpx2
import pytest

from tau.ai.oauth import LoginCallbacks, OAuthError, OpenAICodexOAuth
from tau.ai.oauth.base import OAuthCredentials
from tests.ai.oauth.fakes import FakeOpenAIAuth


def _browser(bad_state_first: bool = False) -> tuple[list[int], LoginCallbacks]:
    """A browser: follows the authorize URL to its redirect, as a person's would."""
    statuses: list[int] = []

    def visit(url: str, instructions: str | None) -> None:
        def go() -> None:
            answer = httpx2.get(url)
            assert answer.status_code == 302
            target = urlsplit(answer.headers["location"])
            assert target.hostname == "localhost"
            local = target._replace(netloc=f"127.0.0.1:{target.port}").geturl()
            if bad_state_first:
                forged = local.replace("state=", "state=forged")
                statuses.append(httpx2.get(forged).status_code)
            statuses.append(httpx2.get(local).status_code)

        threading.Thread(target=go, daemon=True).start()

    def never(message: str, allow_empty: bool) -> str:
        raise AssertionError("no prompt expected")

    return statuses, LoginCallbacks(on_auth=visit, on_prompt=never)


def test_pkce_login_through_the_callback_server() -> None:
    server = FakeOpenAIAuth()
    statuses, callbacks = _browser()
    with server.running():
        credentials = OpenAICodexOAuth(auth_url=server.url, callback_port=0, timeout=10).login(
            callbacks
        )
    assert statuses == [200]
    assert credentials.extra == {"accountId": server.account}
    assert credentials.refresh in server.valid_refresh


def test_a_redirect_with_another_state_is_refused_and_the_login_keeps_waiting() -> None:
    server = FakeOpenAIAuth()
    statuses, callbacks = _browser(bad_state_first=True)
    with server.running():
        credentials = OpenAICodexOAuth(auth_url=server.url, callback_port=0, timeout=10).login(
            callbacks
        )
    assert statuses == [400, 200]
    assert credentials.extra["accountId"] == server.account


def test_the_authorize_url_carries_pis_parameters_and_a_localhost_redirect() -> None:
    seen: list[dict[str, str]] = []

    def capture(url: str, instructions: str | None) -> None:
        seen.append({k: v[0] for k, v in parse_qs(urlsplit(url).query).items()})

    callbacks = LoginCallbacks(on_auth=capture, on_prompt=lambda m, e: "")
    with pytest.raises(OAuthError, match="no authorization code"):
        OpenAICodexOAuth(auth_url="http://127.0.0.1:9", callback_port=0, timeout=0.05).login(
            callbacks
        )
    query = seen[0]
    assert query["client_id"] == "app_EMoamEEZ73f0CkXaXp7hrann"
    assert query["scope"] == "openid profile email offline_access"
    assert query["code_challenge_method"] == "S256" and len(query["state"]) == 32
    assert query["codex_cli_simplified_flow"] == "true"
    assert urlsplit(query["redirect_uri"]).hostname == "localhost"
    assert urlsplit(query["redirect_uri"]).path == "/auth/callback"


def test_a_pasted_redirect_works_and_one_with_a_foreign_state_is_refused() -> None:
    server = FakeOpenAIAuth()
    with server.running():
        # The browser could not reach the callback: the person pastes the redirect URL.
        def paste_from(url: str) -> str:
            return httpx2.get(url).headers["location"]

        holder: list[str] = []
        callbacks = LoginCallbacks(
            on_auth=lambda url, text: holder.append(paste_from(url)),
            on_prompt=lambda m, e: "",
            on_manual_code=lambda: holder[0],
        )
        login = OpenAICodexOAuth(auth_url=server.url, callback_port=0, timeout=10)
        assert login.login(callbacks).extra["accountId"] == server.account

        forged = LoginCallbacks(
            on_auth=lambda url, text: holder.append(paste_from(url).replace("state=", "state=x")),
            on_prompt=lambda m, e: "",
            on_manual_code=lambda: holder[-1],
        )
        with pytest.raises(OAuthError, match="state mismatch"):
            login.login(forged)


def test_a_wrong_verifier_is_refused_by_the_server() -> None:
    server = FakeOpenAIAuth()
    with server.running():
        location = httpx2.get(
            f"{server.url}/oauth/authorize",
            params={
                "client_id": "app_EMoamEEZ73f0CkXaXp7hrann",
                "response_type": "code",
                "code_challenge_method": "S256",
                "code_challenge": "not-the-challenge-of-anything",
                "state": "s",
                "redirect_uri": "http://localhost:1455/auth/callback",
            },
        ).headers["location"]
        code = parse_qs(urlsplit(location).query)["code"][0]
        answer = httpx2.post(
            f"{server.url}/oauth/token",
            data={
                "grant_type": "authorization_code",
                "client_id": "app_EMoamEEZ73f0CkXaXp7hrann",
                "code": code,
                "code_verifier": "verifier",
                "redirect_uri": "http://localhost:1455/auth/callback",
            },
        )
        assert answer.status_code == 400
        # And a redirect anywhere but localhost is refused before any code is issued.
        elsewhere = httpx2.get(
            f"{server.url}/oauth/authorize",
            params={
                "client_id": "app_EMoamEEZ73f0CkXaXp7hrann",
                "response_type": "code",
                "code_challenge_method": "S256",
                "code_challenge": "c",
                "state": "s",
                "redirect_uri": "http://evil.example/auth/callback",
            },
        )
        assert elsewhere.status_code == 400


def test_refresh_rotates_and_a_revoked_refresh_token_says_log_in_again() -> None:
    server = FakeOpenAIAuth()
    with server.running():
        login = OpenAICodexOAuth(auth_url=server.url)
        first = OAuthCredentials("a", server._issue()["refresh_token"], 0.0)
        second = login.refresh(first)
        assert second.refresh != first.refresh and second.refresh in server.valid_refresh
        with pytest.raises(OAuthError) as caught:
            login.refresh(first)  # rotated away: the server refuses it
    message = str(caught.value)
    assert "invalid_grant" in message and "tau login openai-codex" in message
    assert first.refresh not in message


def test_the_callback_server_listens_on_127_0_0_1_only() -> None:
    from tau.ai.oauth.callback import CallbackServer

    server = CallbackServer("/auth/callback", "s", 0)
    try:
        assert server._server is not None
        assert server._server.server_address[0] == "127.0.0.1"
        assert (
            httpx2.get(f"http://127.0.0.1:{server.port}/elsewhere?code=c&state=s").status_code
            == 404
        )
        assert (
            httpx2.get(f"http://127.0.0.1:{server.port}/auth/callback?state=s").status_code == 400
        )
    finally:
        server.close()
