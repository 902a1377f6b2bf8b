"""Where sessions live: ``$TAU_HOME/sessions/<working-directory key>/<time>_<id>.jsonl``.

The key is the working directory with its separators replaced (pi's naming: ``/home/me/app``
is ``--home-me-app--``); a key too long for a file name keeps its start and gets a hash of the
whole path. Listing reads each file once, line by line, and keeps only what a list shows (no
message is loaded as an object), so it stays fast on long sessions; a file that cannot be read
is listed with the reason instead of stopping the listing.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tau.cli.config import tau_home
from tau.cli.session_file import parse

_MAX_KEY = 120
_PROMPT_PREVIEW = 200
_MAX_SCAN = 64 * 1024 * 1024
"""A file bigger than this is listed from its first part only (its count says so)."""


class StoreError(LookupError):
    """No stored session matches, or several do."""


def sessions_root() -> Path:
    """The folder of every working directory's sessions."""
    return tau_home() / "sessions"


def directory_key(cwd: Path) -> str:
    """The folder name of ``cwd``'s sessions."""
    text = str(cwd).lstrip("/\\")
    for separator in "/\\:":
        text = text.replace(separator, "-")
    key = f"--{text}--"
    if len(key.encode("utf-8", "surrogateescape")) > _MAX_KEY:
        digest = hashlib.sha256(os.fsencode(str(cwd))).hexdigest()[:16]
        key = f"--{text[:80]}--{digest}"
    return key


def sessions_dir(cwd: Path) -> Path:
    """Where the sessions of ``cwd`` are saved."""
    return sessions_root() / directory_key(cwd)


@dataclass
class SessionSummary:
    """What a list shows of one session file."""

    path: Path
    id: str
    modified: float
    cwd: str = ""
    first_prompt: str = ""
    model: str = ""
    model_entry: dict[str, Any] | None = None
    """The last ``model_change`` entry (else one made from the first answer's model)."""
    thinking_level: str = ""
    name: str = ""
    """The name given to the session (its last ``session_info`` entry), if any."""
    messages: int = 0
    compactions: int = 0
    problem: str = ""
    """Why the file could not be read (it is listed anyway)."""

    @property
    def usable(self) -> bool:
        """Whether the file can be resumed (damaged lines are skipped then, not fatal)."""
        return not self.problem or self.problem.endswith("damaged line(s)")

    @property
    def short_id(self) -> str:
        """The first 8 characters of the id: enough to name it on the command line."""
        return self.id[:8]


def _prompt_of(message: dict[str, Any]) -> str:
    """What the user typed: the text, or the first text block (attached files follow it)."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict) and isinstance(block.get("text"), str):
                return str(block["text"])
    return ""


def _read_head(path: Path) -> bytes:
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(0, "not a regular file")
        chunks = []
        size = 0
        while size < _MAX_SCAN and (chunk := os.read(fd, 1 << 20)):
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def summarize(path: Path) -> SessionSummary:
    """Read ``path`` into a :class:`SessionSummary` (never raises for a bad file)."""
    name_id = path.stem.rpartition("_")[2]
    try:
        modified = path.stat().st_mtime
        data = _read_head(path)
    except OSError as exc:
        return SessionSummary(path, name_id, 0.0, problem=exc.strerror or str(exc))
    summary = SessionSummary(path, name_id, modified)
    parsed = parse(data)
    if not parsed.entries or parsed.entries[0][1].get("type") != "session":
        summary.problem = "not a session file"
        return summary
    header = parsed.entries[0][1]
    summary.id = str(header.get("id") or name_id)
    summary.cwd = str(header.get("cwd") or "")
    for _, entry in parsed.entries[1:]:
        kind = entry.get("type")
        if kind == "message" and isinstance(entry.get("message"), dict):
            message = entry["message"]
            summary.messages += 1
            if not summary.first_prompt and message.get("role") == "user":
                summary.first_prompt = " ".join(_prompt_of(message).split())[:_PROMPT_PREVIEW]
            if message.get("role") == "assistant" and summary.model_entry is None:
                summary.model_entry = {
                    "provider": message.get("provider"),
                    "modelId": message.get("model"),
                }
        elif kind == "model_change":
            summary.model_entry = entry
        elif kind == "thinking_level_change":
            summary.thinking_level = str(entry.get("thinkingLevel") or "")
        elif kind == "compaction":
            summary.compactions += 1
        elif kind == "session_info" and isinstance(entry.get("name"), str):
            summary.name = entry["name"]
    if summary.model_entry is not None:
        entry = summary.model_entry
        summary.model = f"{entry.get('provider')}/{entry.get('modelId')}"
    if parsed.damaged:
        summary.problem = f"{len(parsed.damaged)} damaged line(s)"
    return summary


def _files(directory: Path) -> Iterator[Path]:
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return
    for entry in entries:
        if entry.name.endswith(".jsonl"):
            yield Path(entry.path)


def _newest_first(paths: list[Path]) -> list[Path]:
    def mtime(path: Path) -> float:
        try:
            return path.stat().st_mtime
        except OSError:
            return 0.0

    return sorted(paths, key=mtime, reverse=True)


def session_files(cwd: Path | None) -> list[Path]:
    """The session files of ``cwd`` (None: of every directory), newest first."""
    if cwd is not None:
        return _newest_first(list(_files(sessions_dir(cwd))))
    root = sessions_root()
    try:
        folders = [Path(e.path) for e in os.scandir(root) if e.is_dir(follow_symlinks=False)]
    except OSError:
        folders = []
    return _newest_first([p for folder in folders for p in _files(folder)])


def recent(cwd: Path | None, limit: int | None = None) -> list[SessionSummary]:
    """Summaries of the newest sessions of ``cwd`` (None: of every directory)."""
    return [summarize(path) for path in session_files(cwd)[:limit]]


def _texts(message: dict[str, Any]) -> Iterator[str]:
    content = message.get("content")
    if isinstance(content, str):
        yield content
    elif isinstance(content, list):
        for block in content:
            if isinstance(block, dict):
                for key in ("text", "thinking"):
                    if isinstance(block.get(key), str):
                        yield block[key]


def _mentions(path: Path, word: str) -> bool:
    try:
        data = _read_head(path)
    except OSError:
        return False
    for _, entry in parse(data).entries:
        message = entry.get("message") if entry.get("type") == "message" else None
        if isinstance(message, dict) and any(word in t.casefold() for t in _texts(message)):
            return True
    return False


def search(cwd: Path | None, text: str, limit: int | None = None) -> list[SessionSummary]:
    """Summaries of the newest sessions of ``cwd`` (None: of every directory) whose messages
    (what was typed, answered, thought or returned by a tool) contain ``text``, case ignored."""
    word = text.casefold()
    found: list[SessionSummary] = []
    for path in session_files(cwd):
        if limit is not None and len(found) >= limit:
            break
        if _mentions(path, word):
            found.append(summarize(path))
    return found


def latest(cwd: Path) -> Path | None:
    """The newest session file of ``cwd`` that is a session (None if there is none)."""
    for path in session_files(cwd):
        if summarize(path).usable:
            return path
    return None


def looks_like_id(text: str) -> bool:
    """Whether ``text`` could be (the start of) a session id: 4 or more hex digits."""
    return len(text) >= 4 and all(c in "0123456789abcdef-" for c in text.lower())


def find(reference: str, cwd: Path) -> Path:
    """The session ``reference`` names: a file path, or a prefix of a session id (this
    directory's sessions are searched first, then all); raises :class:`StoreError`."""
    candidate = Path(reference).expanduser()
    if candidate.is_file():
        return candidate
    prefix = reference.strip().lower()
    if not looks_like_id(prefix):
        raise StoreError(
            f"no session {reference!r}: give a session file or at least 4 characters of an id "
            "(`tau sessions` lists them)"
        )
    for scope in (cwd, None):
        matches = [p for p in session_files(scope) if _id_of(p).startswith(prefix)]
        if len(matches) == 1:
            return matches[0]
        if len(matches) > 1:
            names = ", ".join(_id_of(p)[:12] for p in matches[:5])
            raise StoreError(
                f"{reference!r} matches several sessions ({names}): give more of the id"
            )
    raise StoreError(f"no saved session {reference!r} (`tau sessions list --all` lists them)")


def by_id(cwd: Path, session_id: str) -> Path | None:
    """The file of session ``session_id`` (the whole id, case ignored) among ``cwd``'s
    sessions; None if there is none."""
    wanted = session_id.lower()
    return next((p for p in session_files(cwd) if _id_of(p) == wanted), None)


def removable(path: Path) -> Path:
    """``path`` if ``tau sessions rm`` may delete it: a session file in the session store, or
    one whose first line is a tau/pi session header; raises :class:`StoreError` saying why
    not otherwise (any other file given by path is left alone)."""
    try:
        inside = path.parent.resolve().is_relative_to(sessions_root().resolve())
    except OSError:
        inside = False
    if inside and path.suffix == ".jsonl":
        return path
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOFOLLOW)
    except OSError as exc:
        raise StoreError(f"not removing {str(path)!r}: {exc.strerror or exc}") from None
    try:
        regular = stat.S_ISREG(os.fstat(fd).st_mode)
        first = os.read(fd, 64 * 1024).split(b"\n", 1)[0] if regular else b""
    finally:
        os.close(fd)
    try:
        header = json.loads(first)
    except ValueError:
        header = None
    if not (isinstance(header, dict) and header.get("type") == "session" and "id" in header):
        raise StoreError(
            f"not removing {str(path)!r}: it is not a session file (outside the session "
            f"store {str(sessions_root())!r}, and its first line is no session header)"
        )
    return path


def _id_of(path: Path) -> str:
    # The id is in the name (pi's naming); a file named otherwise is asked for its header.
    name_id = path.stem.rpartition("_")[2]
    if len(name_id) == 36:
        return name_id.lower()
    try:
        with path.open("rb") as f:
            header = json.loads(f.readline(64 * 1024) or b"{}")
    except (OSError, ValueError):
        return ""
    return str(header.get("id") or "").lower() if isinstance(header, dict) else ""
