"""Where logins and keys are kept: ``$TAU_HOME/auth.json``, one entry per provider.

An entry is pi's: ``{"type": "oauth", "access", "refresh", "expires" (ms), ...}`` or
``{"type": "api_key", "key": ...}``. The file is mode 0600 and every change is made under an
exclusive lock (``auth.json.lock``) by reading the file, changing one entry and replacing the
file atomically, so two processes never lose each other's entries; a refresh re-reads under the
lock first, so two processes refreshing at once refresh once (the second finds the first's
token). A corrupted file is refused with an error that says where it is (never overwritten); a
file readable by others is repaired to 0600 with a warning.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import tempfile
import threading
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from tau.ai.oauth.base import OAuthCredentials, OAuthError

if TYPE_CHECKING:
    from tau.ai.oauth.base import OAuthProvider

__all__ = ["REFRESH_MARGIN", "CredentialStore", "CredentialStoreError", "default_auth_path"]

REFRESH_MARGIN = 60.0
"""A token expiring within this many seconds is refreshed before a request."""

T = TypeVar("T")
Entries = dict[str, dict[str, Any]]


class CredentialStoreError(OAuthError):
    """The credential file cannot be used as it is (corrupted, unreadable): nothing was
    changed, and the message says which file."""


def default_auth_path() -> Path:
    """``$TAU_HOME/auth.json`` (``TAU_HOME`` defaulting to ``$XDG_CONFIG_HOME/tau``, as the
    ``tau`` command's settings do)."""
    home = os.environ.get("TAU_HOME")
    if home:
        return Path(home).expanduser() / "auth.json"
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "tau" / "auth.json"


class CredentialStore:
    """A credential file: read (cached until the file changes), changed under a lock.

    A store kept elsewhere (a secret manager) subclasses this and overrides :meth:`read_all`,
    :meth:`write_all` and :meth:`locked`; everything else is built on those three.
    """

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.path = Path(path) if path is not None else default_auth_path()
        self._cache: tuple[tuple[int, int, int], Entries] | None = None
        self._logins: dict[str, tuple[dict[str, Any], OAuthCredentials]] = {}
        self._thread_lock = threading.Lock()

    # -- the three primitives ------------------------------------------------------------

    def read_all(self) -> Entries:
        """Every entry, provider -> entry (empty when the file does not exist).

        Parsed once per version of the file: a call that finds the file unchanged (same
        mtime, size and inode) costs one ``stat``.
        """
        try:
            st = self.path.stat()
        except FileNotFoundError:
            self._cache = None
            return {}
        except OSError as exc:
            raise CredentialStoreError(f"cannot read {self.path}: {exc.strerror}") from None
        signature = (st.st_mtime_ns, st.st_size, st.st_ino)
        cached = self._cache
        if cached is not None and cached[0] == signature:
            return cached[1]
        if st.st_mode & 0o077:
            self._repair_mode()
        entries = self._parse()
        self._cache = (signature, entries)
        return entries

    def write_all(self, entries: Entries) -> None:
        """Replace the file with ``entries`` atomically, mode 0600 (call under :meth:`locked`)."""
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, tmp = tempfile.mkstemp(prefix=".auth-", suffix=".tmp", dir=self.path.parent)
        try:
            os.fchmod(fd, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(entries, f, indent=2, sort_keys=True)
                f.write("\n")
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        self._cache = None

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the store's exclusive lock (across threads and processes)."""
        import fcntl

        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        with self._thread_lock:
            fd = os.open(f"{self.path}.lock", os.O_RDWR | os.O_CREAT, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                yield
            finally:
                os.close(fd)  # closing releases the lock

    # -- built on them ---------------------------------------------------------------------

    def get(self, provider: str) -> dict[str, Any] | None:
        """The entry of ``provider``, or None."""
        return self.read_all().get(provider)

    def update(self, change: Callable[[Entries], T]) -> T:
        """Run ``change`` on the current entries under the lock, then write them back."""
        with self.locked():
            self._cache = None
            entries = dict(self.read_all())
            result = change(entries)
            self.write_all(entries)
            return result

    def set(self, provider: str, entry: dict[str, Any]) -> None:
        """Store ``entry`` for ``provider`` (replacing its old one)."""

        def put(entries: Entries) -> None:
            entries[provider] = entry

        self.update(put)

    def set_api_key(self, provider: str, key: str) -> None:
        """Store a plain API key for ``provider``."""
        self.set(provider, {"type": "api_key", "key": key})

    def set_oauth(self, provider: str, credentials: OAuthCredentials) -> None:
        """Store ``provider``'s login."""
        self.set(provider, credentials.to_json())

    def remove(self, provider: str) -> bool:
        """Forget ``provider``'s entry; whether there was one."""
        if provider not in self.read_all():
            return False
        return self.update(lambda entries: entries.pop(provider, None) is not None)

    def oauth(self, provider: str) -> OAuthCredentials | None:
        """``provider``'s stored login, or None (also when its entry is a plain key)."""
        return self._login(provider, self.get(provider))

    def _login(self, provider: str, entry: dict[str, Any] | None) -> OAuthCredentials | None:
        if entry is None or entry.get("type") != "oauth":
            return None
        known = self._logins.get(provider)
        if known is not None and known[0] is entry:
            return known[1]  # the same version of the file: read once
        try:
            credentials = OAuthCredentials.from_json(entry)
        except ValueError as exc:
            raise CredentialStoreError(f"{self.path}: entry {provider!r}: {exc}") from None
        self._logins[provider] = (entry, credentials)
        return credentials

    def api_key(
        self, provider: str, oauth: OAuthProvider | None = None, margin: float = REFRESH_MARGIN
    ) -> str | None:
        """The key to send for ``provider``: its plain key, or its login's key, refreshed
        first when it expires within ``margin`` seconds (``oauth`` does the refresh)."""
        entry = self.get(provider)
        if entry is None:
            return None
        if entry.get("type") == "api_key":
            key = entry.get("key")
            return key if isinstance(key, str) and key else None
        credentials = self._login(provider, entry)
        if credentials is None or oauth is None:
            return None
        if credentials.expires_within(margin):
            credentials = self.refresh(provider, oauth, margin)
        return oauth.api_key(credentials)

    def refresh(
        self, provider: str, oauth: OAuthProvider, margin: float = REFRESH_MARGIN
    ) -> OAuthCredentials:
        """Refresh ``provider``'s login unless another process just did (checked under the
        lock), store the result, and return it."""

        def renew(entries: Entries) -> OAuthCredentials:
            raw = entries.get(provider)
            if raw is None or raw.get("type") != "oauth":
                raise OAuthError(
                    f"{oauth.name or provider}: not logged in; run `tau login {provider}`"
                )
            current = OAuthCredentials.from_json(raw)
            if not current.expires_within(margin):
                return current  # another process refreshed while we waited for the lock
            fresh = oauth.refresh(current)
            entries[provider] = fresh.to_json()
            return fresh

        return self.update(renew)

    def secrets(self) -> list[str]:
        """Every token and key stored (what redaction must hide)."""
        found: list[str] = []
        try:
            entries = self.read_all()
        except OAuthError:
            return found
        for entry in entries.values():
            for name in ("access", "refresh", "key"):
                value = entry.get(name)
                if isinstance(value, str):
                    found.append(value)
        return found

    # -- helpers ---------------------------------------------------------------------------

    def _parse(self) -> Entries:
        try:
            text = self.path.read_text(encoding="utf-8")
        except OSError as exc:
            raise CredentialStoreError(f"cannot read {self.path}: {exc.strerror}") from None
        except UnicodeDecodeError:
            raise self._corrupt("not UTF-8 text") from None
        try:
            data = json.loads(text) if text.strip() else {}
        except (ValueError, RecursionError) as exc:
            raise self._corrupt(f"not valid JSON: {str(exc).splitlines()[0][:80]}") from None
        if not isinstance(data, dict) or not all(isinstance(v, dict) for v in data.values()):
            raise self._corrupt("not an object of provider entries")
        return data

    def _corrupt(self, why: str) -> CredentialStoreError:
        return CredentialStoreError(
            f"{self.path} is {why}; it was left as it is: fix it, or move it aside and log in again"
        )

    def _repair_mode(self) -> None:
        try:
            os.chmod(self.path, stat.S_IRUSR | stat.S_IWUSR)
        except OSError as exc:
            raise CredentialStoreError(
                f"{self.path} is readable by other users and cannot be made private "
                f"({exc.strerror}); fix its permissions (chmod 600)"
            ) from None
        warnings.warn(
            f"{self.path} was readable by other users; its mode is now 0600 "
            "(consider the tokens in it exposed: log in again)",
            stacklevel=4,
        )
