"""GitHub Copilot's device-code login and token exchange against a fake GitHub on 127.0.0.1
(reference: pi's packages/ai/src/utils/oauth/github-copilot.ts)."""

from __future__ import annotations

import time

import pytest

from tau.ai.oauth import GitHubCopilotOAuth, LoginCallbacks, OAuthCredentials, OAuthError
from tests.ai.oauth.fakes import FakeGitHub


class Clock:
    """A clock that the polling's sleeps advance: no real waiting, every wait recorded."""

    def __init__(self) -> None:
        self.now = 0.0
        self.waits: list[float] = []

    def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)
        self.now += seconds

    def __call__(self) -> float:
        return self.now


def _login(
    server: FakeGitHub, clock: Clock, prompts: list[str] | None = None
) -> tuple[OAuthCredentials, list[tuple[str, str | None]]]:
    shown: list[tuple[str, str | None]] = []
    answers = list(prompts or [""])
    login = GitHubCopilotOAuth(
        github_url=server.url, api_url=server.url, sleep=clock.sleep, clock=clock
    )
    callbacks = LoginCallbacks(
        on_auth=lambda url, text: shown.append((url, text)),
        on_prompt=lambda message, allow_empty: answers.pop(0),
    )
    return login.login(callbacks), shown


def test_device_code_polling_honours_pending_and_slow_down() -> None:
    server = FakeGitHub(polls=["authorization_pending", "slow_down", "authorization_pending"])
    clock = Clock()
    with server.running():
        credentials, shown = _login(server, clock)
    assert shown == [("https://github.com/login/device", "Enter code: ABCD-1234")]
    assert server.poll_count == 4
    # First waits: the named interval (5 s) times 1.2; after slow_down, its interval (10 s)
    # times 1.4 (pi's pacing), and never faster than that again.
    assert clock.waits == pytest.approx([6.0, 6.0, 14.0, 14.0])
    assert credentials.refresh == server.github_token
    assert credentials.access.startswith("tid=t1;")
    # The Copilot token counts as expiring 5 minutes early.
    assert credentials.expires == pytest.approx(time.time() + 1500, abs=5)
    assert GitHubCopilotOAuth().base_url(credentials) == "https://api.business.githubcopilot.com"


def test_slow_down_without_an_interval_adds_five_seconds() -> None:
    server = FakeGitHub(polls=["slow_down"], slow_down_interval=None)
    clock = Clock()
    with server.running():
        _login(server, clock)
    assert clock.waits == pytest.approx([6.0, 14.0])


def test_a_code_never_entered_times_out_with_the_clock_drift_hint() -> None:
    server = FakeGitHub(polls=["slow_down"] * 500)
    clock = Clock()
    with server.running(), pytest.raises(OAuthError, match=r"slow_down.*clock"):
        _login(server, clock)
    assert clock.now == pytest.approx(900)


def test_a_denied_device_code_fails_with_githubs_reason() -> None:
    server = FakeGitHub(polls=["access_denied"])
    with server.running(), pytest.raises(OAuthError, match="access_denied"):
        _login(server, Clock())


def test_refresh_trades_the_github_token_again_and_a_revoked_one_says_log_in() -> None:
    server = FakeGitHub()
    with server.running():
        credentials, _ = _login(server, Clock())
        login = GitHubCopilotOAuth(github_url=server.url, api_url=server.url)
        fresh = login.refresh(credentials)
        assert fresh.access.startswith("tid=t2;") and fresh.refresh == credentials.refresh
        server.revoked.add(server.github_token)
        with pytest.raises(OAuthError) as caught:
            login.refresh(credentials)
    message = str(caught.value)
    assert "GitHub Copilot" in message and "tau login github-copilot" in message
    assert server.github_token not in message and "tid=" not in message


def test_an_enterprise_domain_is_normalised_and_a_bad_one_refused() -> None:
    from tau.ai.oauth.github_copilot import copilot_base_url, normalize_domain

    assert normalize_domain(" https://ghe.example.com/some/path ") == "ghe.example.com"
    assert normalize_domain("ghe.example.com") == "ghe.example.com"
    assert normalize_domain("   ") is None
    assert (
        copilot_base_url("no-proxy-here", "ghe.example.com")
        == "https://copilot-api.ghe.example.com"
    )
    assert copilot_base_url(None) == "https://api.individual.githubcopilot.com"
    with pytest.raises(OAuthError, match="Enterprise"):
        _login(FakeGitHub(), Clock(), prompts=["http://"])
