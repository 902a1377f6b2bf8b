"""``tau login`` / ``tau logout`` / ``tau auth list``, and ``/login`` / ``/logout``, against the
fake GitHub on 127.0.0.1: a person logging in through a pseudo-terminal, then asking a question
with the stored login."""

from __future__ import annotations

import json
import stat
import subprocess
import sys
import time
from pathlib import Path

import pexpect

from tau.ai.oauth import CredentialStore, OAuthCredentials
from tau.cli.login import auth_list, login, logout
from tests.ai.oauth.fakes import FakeGitHub
from tests.cli.conftest import clean_env

# `tau`, with GitHub Copilot's login pointed at the fake server (argv[1]).
WRAPPER = """
import sys
from tau.ai.oauth import GitHubCopilotOAuth, register_oauth_provider
url = sys.argv[1]
register_oauth_provider(GitHubCopilotOAuth(github_url=url, api_url=url, api_base=url))
from tau.cli.main import main
raise SystemExit(main(sys.argv[2:]))
"""


def test_login_through_a_terminal_then_a_one_shot_prompt(tmp_path: Path) -> None:
    server = FakeGitHub(polls=["authorization_pending"], interval=1)
    env = clean_env(tmp_path, TERM="dumb")
    (tmp_path / "work").mkdir()
    with server.running():
        child = pexpect.spawn(
            sys.executable,
            ["-c", WRAPPER, server.url, "login", "github-copilot", "--no-browser"],
            cwd=str(tmp_path / "work"),
            env=env,
            encoding="utf-8",
            timeout=30,
        )
        child.expect("GitHub Enterprise URL/domain")
        child.sendline("")
        child.expect("Enter code: ABCD-1234")
        child.expect("Waiting for authorization")
        child.expect("Logged in to GitHub Copilot")
        child.expect(pexpect.EOF)
        child.close()
        assert child.exitstatus == 0
        assert server.poll_count == 2 and server.exchanges == 1

        auth = Path(env["TAU_HOME"]) / "auth.json"
        assert stat.S_IMODE(auth.stat().st_mode) == 0o600
        entry = json.loads(auth.read_text())["github-copilot"]
        assert entry["type"] == "oauth" and entry["refresh"] == server.github_token

        answer = subprocess.run(
            [sys.executable, "-c", WRAPPER, server.url, "--model", "github-copilot/gpt-4o", "hi"],
            cwd=tmp_path / "work",
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        listed = subprocess.run(
            [sys.executable, "-c", WRAPPER, server.url, "auth", "list"],
            cwd=tmp_path / "work",
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert answer.returncode == 0, answer.stderr
    assert "Hello from Copilot" in answer.stdout
    assert server.chat_auth == [entry["access"]]
    assert listed.returncode == 0 and listed.stdout.startswith("github-copilot\toauth")
    assert entry["access"] not in listed.stdout and server.github_token not in listed.stdout


def test_a_key_based_provider_stores_its_key_and_logout_forgets_it(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    store = CredentialStore(tmp_path / "auth.json")
    assert login("openai", store=store, ask_secret=lambda prompt: " sk-stored-123456 ") == 0
    assert store.api_key("openai") == "sk-stored-123456"
    store.set_oauth(
        "openai-codex", OAuthCredentials("a", "r", time.time() - 5, {"accountId": "acct-9"})
    )
    assert auth_list(store=store) == 0
    out = capsys.readouterr().out
    assert "openai\tapi_key" in out and "openai-codex\toauth\tacct-9" in out and "expired" in out
    assert "sk-stored" not in out
    assert logout("openai", store=store) == 0
    assert set(store.read_all()) == {"openai-codex"}


def test_unknown_providers_and_empty_keys_are_one_line_errors(tmp_path: Path) -> None:
    import pytest

    from tau.cli.errors import UsageError

    store = CredentialStore(tmp_path / "auth.json")
    with pytest.raises(UsageError, match="did you mean"):
        login("github-copilt", store=store)
    with pytest.raises(UsageError, match="no key"):
        login("openai", store=store, ask_secret=lambda prompt: "")
    with pytest.raises(UsageError, match="stored: none"):
        logout(None, store=store)
    assert not store.path.exists()


def test_a_corrupted_auth_file_is_reported_by_the_command(tau, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    home = tmp_path / "tau-home"
    home.mkdir()
    (home / "auth.json").write_text("{oops")
    done = tau("auth", "list")
    assert done.returncode == 1
    assert "auth.json is not valid JSON" in done.stderr and "Traceback" not in done.stderr
    assert (home / "auth.json").read_text() == "{oops"


def test_tau_models_lists_a_logged_in_providers_models_as_keyed(tau, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from tests.ai.oauth.fakes import make_jwt

    token = make_jwt({"https://api.openai.com/auth": {"chatgpt_account_id": "acct-1"}})
    CredentialStore(tmp_path / "tau-home" / "auth.json").set_oauth(
        "openai-codex", OAuthCredentials(token, "rt", time.time() + 3600, {"accountId": "acct-1"})
    )
    done = tau("models", "openai-codex")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "providers with an API key (environment or tau login): openai-codex"
    assert lines[2] == "openai-codex's key: set (tau login)"
    assert "openai-codex/gpt-5.2-codex\t" in done.stdout
    assert all(line.endswith("\tkey") for line in lines[3:])
    assert token not in done.stdout


async def test_slash_login_and_logout_in_a_session(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import io
    from types import SimpleNamespace
    from typing import Any, cast

    from tau.ai.oauth import GitHubCopilotOAuth, get_oauth_provider, register_oauth_provider
    from tau.cli.commands import CommandContext, run_command
    from tau.cli.render import Renderer

    monkeypatch.setenv("TAU_HOME", str(tmp_path))
    said: list[str] = []
    # No session is needed for these two: an app with no commands of its own is enough.
    app = SimpleNamespace(custom=SimpleNamespace(commands={}))
    ctx = CommandContext(
        cast(Any, app), Renderer(out=io.StringIO(), err=io.StringIO()), said.append
    )
    server = FakeGitHub(polls=["authorization_pending"])
    real = get_oauth_provider("github-copilot")
    assert real is not None
    try:
        with server.running():
            register_oauth_provider(
                GitHubCopilotOAuth(github_url=server.url, api_url=server.url, sleep=lambda s: None)
            )
            await run_command(ctx, "/login github-copilot")
    finally:
        register_oauth_provider(real)
    assert any("Enter code: ABCD-1234" in line for line in said), said
    assert said[-1].startswith("logged in to GitHub Copilot")
    assert CredentialStore(tmp_path / "auth.json").oauth("github-copilot") is not None
    await run_command(ctx, "/login nothing-such")
    assert said[-1].startswith("logins: anthropic, github-copilot")
    await run_command(ctx, "/logout github-copilot")
    assert said[-1] == "logged out of github-copilot"
    assert CredentialStore(tmp_path / "auth.json").read_all() == {}
