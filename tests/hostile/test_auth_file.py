"""A corrupted or world-readable auth.json: refused with a clear error or repaired with a
warning, never silently lost or overwritten."""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

import pytest

from tau.ai.oauth import CredentialStore, CredentialStoreError, OAuthCredentials


@pytest.mark.parametrize(
    "content",
    [
        b"{not json",
        b"\xff\xfe\x00garbage",
        b"[1, 2]",
        b'{"openai": "sk-bare-string"}',
        b"[" * 100_000,
    ],
)
def test_a_corrupted_file_is_refused_and_left_as_it_is(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "auth.json"
    path.write_bytes(content)
    os.chmod(path, 0o600)
    store = CredentialStore(path)
    with pytest.raises(CredentialStoreError) as caught:
        store.get("openai")
    message = str(caught.value)
    assert str(path) in message and "\n" not in message and "sk-bare-string" not in message
    with pytest.raises(CredentialStoreError):
        store.set_api_key("openai", "sk-new-123456")  # a write never replaces what it cannot read
    assert path.read_bytes() == content
    assert store.secrets() == []  # redaction keeps working


def test_a_malformed_oauth_entry_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "auth.json"
    path.write_text('{"openai-codex": {"type": "oauth", "access": 1}}')
    os.chmod(path, 0o600)
    with pytest.raises(CredentialStoreError, match="openai-codex"):
        CredentialStore(path).oauth("openai-codex")


def test_a_world_readable_file_is_made_private_with_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "auth.json"
    store = CredentialStore(path)
    store.set_oauth("openai-codex", OAuthCredentials("a", "r", time.time() + 999))
    os.chmod(path, 0o644)
    with pytest.warns(UserWarning, match="readable by other users"):
        assert CredentialStore(path).oauth("openai-codex") is not None
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
