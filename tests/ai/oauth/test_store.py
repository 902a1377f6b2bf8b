"""The credential store: one private file, changed atomically under a lock, refreshed once."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tau.ai.oauth import (
    CredentialStore,
    OAuthCredentials,
    OAuthError,
    OpenAICodexOAuth,
)
from tests.ai.oauth.fakes import FakeOpenAIAuth

REPO = Path(__file__).resolve().parents[3]


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_entries_are_written_private_and_kept_side_by_side(tmp_path: Path) -> None:
    store = CredentialStore(tmp_path / "home" / "auth.json")
    store.set_api_key("openai", "sk-test-123456")
    store.set_oauth(
        "openai-codex", OAuthCredentials("acc", "ref", time.time() + 3600, {"accountId": "a"})
    )
    assert _mode(store.path) == 0o600
    assert store.api_key("openai") == "sk-test-123456"
    raw = json.loads(store.path.read_text())
    assert raw["openai"] == {"type": "api_key", "key": "sk-test-123456"}
    assert raw["openai-codex"]["type"] == "oauth" and raw["openai-codex"]["accountId"] == "a"
    # Another store on the same file (another process) sees both and keeps both.
    other = CredentialStore(store.path)
    other.set_api_key("mistral", "m-key-123456")
    assert set(store.read_all()) == {"openai", "openai-codex", "mistral"}
    assert store.remove("openai") and not store.remove("openai")
    assert set(other.read_all()) == {"openai-codex", "mistral"}
    assert sorted(store.secrets()) == ["acc", "m-key-123456", "ref"]
    assert not [p for p in store.path.parent.iterdir() if p.name.startswith(".auth-")]


def test_a_fresh_token_is_used_without_refreshing(tmp_path: Path) -> None:
    class Never(OpenAICodexOAuth):
        def refresh(self, credentials: OAuthCredentials) -> OAuthCredentials:
            raise AssertionError("refreshed a fresh token")

    store = CredentialStore(tmp_path / "auth.json")
    store.set_oauth("openai-codex", OAuthCredentials("fresh", "r", time.time() + 120))
    assert store.api_key("openai-codex", Never()) == "fresh"


def test_a_token_within_60_seconds_of_expiry_is_refreshed_and_stored(tmp_path: Path) -> None:
    server = FakeOpenAIAuth()
    store = CredentialStore(tmp_path / "auth.json")
    with server.running():
        refresh = server._issue()["refresh_token"]
        store.set_oauth("openai-codex", OAuthCredentials("old", refresh, time.time() + 30))
        key = store.api_key("openai-codex", OpenAICodexOAuth(auth_url=server.url))
    assert key != "old" and server.refreshes == 1
    stored = store.oauth("openai-codex")
    assert stored is not None and stored.access == key and stored.refresh != refresh
    assert stored.extra["accountId"] == server.account


_REFRESH_IN_A_PROCESS = """
import sys
from tau.ai.oauth import CredentialStore, OpenAICodexOAuth
store = CredentialStore(sys.argv[1])
print(store.api_key("openai-codex", OpenAICodexOAuth(auth_url=sys.argv[2])))
"""


def test_two_processes_refreshing_at_once_refresh_once(tmp_path: Path) -> None:
    # The server rotates refresh tokens: a second refresh with the same token would be refused.
    server = FakeOpenAIAuth(refresh_delay=0.3)
    path = tmp_path / "auth.json"
    store = CredentialStore(path)
    with server.running():
        refresh = server._issue()["refresh_token"]
        store.set_oauth("openai-codex", OAuthCredentials("old", refresh, time.time() - 10))
        store.set_api_key("openai", "sk-kept-123456")
        env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
        procs = [
            subprocess.Popen(
                [sys.executable, "-c", _REFRESH_IN_A_PROCESS, str(path), server.url],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env=env,
            )
            for _ in range(2)
        ]
        outputs = [p.communicate(timeout=60) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outputs
    keys = {out.strip() for out, _ in outputs}
    assert server.refreshes == 1 and len(keys) == 1 and "old" not in keys
    assert store.api_key("openai") == "sk-kept-123456"


def test_a_refused_refresh_names_the_provider_and_never_the_token(tmp_path: Path) -> None:
    server = FakeOpenAIAuth()
    store = CredentialStore(tmp_path / "auth.json")
    with server.running():
        store.set_oauth("openai-codex", OAuthCredentials("old-access", "rt_revoked_xyz", 0.0))
        with pytest.raises(OAuthError) as caught:
            store.api_key("openai-codex", OpenAICodexOAuth(auth_url=server.url))
    message = str(caught.value)
    assert "ChatGPT" in message and "tau login openai-codex" in message
    assert "rt_revoked_xyz" not in message and "old-access" not in message
    # The stored login is left for the person to replace, not silently dropped.
    assert store.oauth("openai-codex") is not None


def test_the_default_store_is_read_after_the_environment_and_redacted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tau.ai import get_env_api_key, redact_secrets

    monkeypatch.setenv("TAU_HOME", str(tmp_path))
    monkeypatch.delenv("MISTRAL_API_KEY", raising=False)
    CredentialStore(tmp_path / "auth.json").set_api_key("mistral", "stored-mistral-key-42")
    assert get_env_api_key("mistral") == "stored-mistral-key-42"
    assert redact_secrets("echo stored-mistral-key-42 back") == "echo [redacted] back"
    monkeypatch.setenv("MISTRAL_API_KEY", "env-mistral-key-42")
    assert get_env_api_key("mistral") == "env-mistral-key-42"
