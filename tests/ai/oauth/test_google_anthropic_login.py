"""Google's logins (Gemini CLI, Antigravity) with project discovery and onboarding, and
Anthropic's, against fake servers on 127.0.0.1 (reference: pi's
packages/ai/src/utils/oauth/google-gemini-cli.ts, google-antigravity.ts, anthropic.ts)."""

from __future__ import annotations

import json
import threading
from urllib.parse import urlsplit

import httpx2
import pytest

from tau.ai.oauth import (
    AnthropicOAuth,
    AntigravityOAuth,
    GeminiCliOAuth,
    LoginCallbacks,
    OAuthError,
)
from tests.ai.oauth.fakes import FakeAnthropic, FakeGoogle


def _browser() -> LoginCallbacks:
    def visit(url: str, instructions: str | None) -> None:
        def go() -> None:
            target = urlsplit(httpx2.get(url).headers["location"])
            httpx2.get(target._replace(netloc=f"127.0.0.1:{target.port}").geturl())

        threading.Thread(target=go, daemon=True).start()

    return LoginCallbacks(on_auth=visit, on_prompt=lambda m, e: "")


def _gemini(server: FakeGoogle, **kw: object) -> GeminiCliOAuth:
    return GeminiCliOAuth(
        auth_url=f"{server.url}/auth",
        token_url=f"{server.url}/token",
        userinfo_url=f"{server.url}/userinfo?alt=json",
        code_assist_url=server.url,
        callback_port=0,
        timeout=10,
        **kw,  # type: ignore[arg-type]
    )


def test_gemini_cli_login_finds_the_existing_project(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GOOGLE_CLOUD_PROJECT", raising=False)
    monkeypatch.delenv("GOOGLE_CLOUD_PROJECT_ID", raising=False)
    server = FakeGoogle(GeminiCliOAuth.client_id, GeminiCliOAuth.client_secret)
    with server.running():
        login = _gemini(server)
        credentials = login.login(_browser())
    assert credentials.extra == {"email": "someone@example.com", "projectId": "proj-existing"}
    assert json.loads(login.api_key(credentials)) == {
        "token": "ya29.first",
        "projectId": "proj-existing",
    }
    assert login.account(credentials) == "someone@example.com"


def test_gemini_cli_onboards_a_new_user_and_polls_the_operation(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("GOOGLE_CLOUD_PROJECT", raising=False)
    monkeypatch.delenv("GOOGLE_CLOUD_PROJECT_ID", raising=False)
    server = FakeGoogle(GeminiCliOAuth.client_id, GeminiCliOAuth.client_secret, project="new")
    waits: list[float] = []
    with server.running():
        credentials = _gemini(server, sleep=waits.append).login(_browser())
    assert credentials.extra["projectId"] == "proj-new"
    assert server.polls == 2 and waits == [5.0]


def test_a_google_refresh_keeps_the_refresh_token_and_a_revoked_one_says_log_in() -> None:
    server = FakeGoogle(GeminiCliOAuth.client_id, GeminiCliOAuth.client_secret)
    with server.running():
        login = _gemini(server)
        credentials = login.login(_browser())
        fresh = login.refresh(credentials)
        assert fresh.access == "ya29.renewed" and fresh.refresh == "1//refresh"
        assert fresh.extra["projectId"] == "proj-existing"
        server.revoked.add("1//refresh")
        with pytest.raises(OAuthError) as caught:
            login.refresh(credentials)
    assert "invalid_grant" in str(caught.value) and "tau login google-gemini-cli" in str(
        caught.value
    )
    assert "1//refresh" not in str(caught.value)


def test_antigravity_falls_back_to_its_default_project() -> None:
    server = FakeGoogle(AntigravityOAuth.client_id, AntigravityOAuth.client_secret, project="new")
    with server.running():
        login = AntigravityOAuth(
            auth_url=f"{server.url}/auth",
            token_url=f"{server.url}/token",
            userinfo_url=f"{server.url}/userinfo",
            code_assist_url=server.url,
            fallback_code_assist_url="http://127.0.0.1:9",
            callback_port=0,
            timeout=10,
        )
        credentials = login.login(_browser())
    assert credentials.extra["projectId"] == "rising-fact-p41fc"


def test_anthropic_login_and_rotating_refresh() -> None:
    server = FakeAnthropic()
    with server.running():
        login = AnthropicOAuth(
            authorize_url=f"{server.url}/oauth/authorize",
            token_url=f"{server.url}/v1/oauth/token",
            callback_port=0,
            timeout=10,
        )
        credentials = login.login(_browser())
        assert credentials.access.startswith("sk-ant-oat01-")
        fresh = login.refresh(credentials)
        assert fresh.refresh != credentials.refresh
        with pytest.raises(OAuthError, match="tau login anthropic"):
            login.refresh(credentials)  # rotated away


def test_anthropic_takes_a_pasted_code_and_refuses_a_foreign_state() -> None:
    server = FakeAnthropic()
    with server.running():
        login = AnthropicOAuth(
            authorize_url=f"{server.url}/oauth/authorize",
            token_url=f"{server.url}/v1/oauth/token",
            callback_port=0,
            timeout=0.05,
        )
        pasted: list[str] = []

        def remember(url: str, instructions: str | None) -> None:
            location = httpx2.get(url).headers["location"]
            query = dict(p.split("=", 1) for p in urlsplit(location).query.split("&"))
            pasted.append(f"{query['code']}#{query['state']}")

        good = LoginCallbacks(on_auth=remember, on_prompt=lambda m, e: pasted[-1])
        assert login.login(good).access.startswith("sk-ant-oat01-")
        forged = LoginCallbacks(
            on_auth=remember, on_prompt=lambda m, e: pasted[-1].split("#")[0] + "#other"
        )
        with pytest.raises(OAuthError, match="state mismatch"):
            login.login(forged)


def test_every_login_is_listed_by_id() -> None:
    from tau.ai.oauth import providers

    assert list(providers()) == [
        "anthropic",
        "github-copilot",
        "google-antigravity",
        "google-gemini-cli",
        "openai-codex",
    ]
