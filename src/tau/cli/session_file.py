"""The bytes of a session file: entries encoded so that saving never fails, lines parsed so that
damage costs only the damaged line, and an ``fcntl`` lock around every read and write.

Encoding: an entry that ``json`` cannot write as it is (a set or an object in a tool's details,
a value nested thousands deep, a NaN, text holding lone surrogates from undecodable input) is
reduced to plain JSON, each change listed in the entry's ``note``. The result is always one line
of valid UTF-8 JSON.

Parsing: a line that is cut off, not UTF-8, not JSON or only NUL padding (what a crash can leave)
is reported as damaged, with its line number, and the complete lines around it are kept.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import math
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

MAX_DEPTH = 64
"""Containers nested deeper than this are cut when an entry has to be reduced."""
_MAX_NOTES = 10
_MAX_REPR = 10_000
_LOCK_WAIT = 10.0


def _fix_text(text: str) -> str:
    # A lone surrogate cannot be written as UTF-8: pairs are joined, lone ones become U+FFFD.
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


def _short(path: str) -> str:
    parts = path.split(".")
    return path if len(parts) <= 6 else ".".join([*parts[:5], "…"])


class _Reducer:
    """Turns any value into plain JSON data, noting every change."""

    def __init__(self) -> None:
        self.notes: list[str] = []
        self.dropped = 0

    def note(self, path: str, what: str) -> None:
        if len(self.notes) < _MAX_NOTES:
            self.notes.append(f"{_short(path) or 'entry'}: {what}")
        else:
            self.dropped += 1

    def reduce(self, value: Any, path: str, depth: int) -> Any:
        if value is None or isinstance(value, bool):
            return value
        if isinstance(value, int):
            if value.bit_length() > 10_000:
                self.note(path, "an integer too long for JSON, saved as text")
                return hex(value)
            return int(value)
        if isinstance(value, float):
            if math.isfinite(value):
                return float(value)
            self.note(path, "not a finite number, saved as text")
            return str(value)
        if isinstance(value, str):
            fixed = _fix_text(value)
            if fixed is not value:
                self.note(path, "text with undecodable characters, replaced with U+FFFD")
            return fixed
        if isinstance(value, dict | list | tuple | set | frozenset) and depth >= MAX_DEPTH:
            self.note(path, f"nested deeper than {MAX_DEPTH} levels, cut")
            return None
        if isinstance(value, dict):
            out: dict[str, Any] = {}
            for key, item in value.items():
                name = _fix_text(key) if isinstance(key, str) else self.text_of(key)
                out[name] = self.reduce(item, f"{path}.{name}" if path else name, depth + 1)
            return out
        if isinstance(value, list | tuple):
            return [self.reduce(item, f"{path}[{i}]", depth + 1) for i, item in enumerate(value)]
        if isinstance(value, set | frozenset):
            self.note(path, "a set, saved as a list")
            items = list(value)
            with contextlib.suppress(TypeError):
                items.sort()
            return [self.reduce(item, f"{path}[{i}]", depth + 1) for i, item in enumerate(items)]
        self.note(path, f"a {type(value).__name__}, saved as its repr")
        return self.text_of(value, repr)

    @staticmethod
    def text_of(value: object, show: Callable[[object], str] = str) -> str:
        try:
            text = show(value)
        except Exception:
            text = f"<unrepresentable {type(value).__name__}>"
        return _fix_text(text[:_MAX_REPR])


def encode_entry(entry: dict[str, Any]) -> bytes:
    """``entry`` as one line of UTF-8 JSON (newline included), reduced if it has to be."""
    try:
        return (json.dumps(entry, ensure_ascii=False, allow_nan=False) + "\n").encode("utf-8")
    except (TypeError, ValueError, RecursionError, UnicodeEncodeError):
        pass
    reducer = _Reducer()
    plain = reducer.reduce(entry, "", 0)
    notes = reducer.notes + ([f"and {reducer.dropped} more"] if reducer.dropped else [])
    plain["note"] = "saved in a reduced form: " + "; ".join(notes)
    return (json.dumps(plain, ensure_ascii=False, allow_nan=False) + "\n").encode("utf-8")


@dataclass
class ParsedFile:
    """What a session file holds: its entries with their line numbers, and its damaged lines."""

    entries: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    damaged: list[tuple[int, str]] = field(default_factory=list)
    clean: list[bytes] = field(default_factory=list)
    """The complete lines, as they are on disk, for a repair."""
    ends_with_newline: bool = True

    @property
    def blank(self) -> bool:
        """Nothing but blank lines and NUL padding."""
        return not self.entries and all(reason == _NUL_PADDING for _, reason in self.damaged)


_NUL_PADDING = "NUL padding (left by an interrupted write)"


def parse(data: bytes) -> ParsedFile:
    """Split a session file into entries, keeping every complete line."""
    parsed = ParsedFile(ends_with_newline=not data or data.endswith(b"\n"))
    for number, raw in enumerate(data.split(b"\n"), 1):
        line = raw.strip(b"\0 \t\r")
        if not line:
            if b"\0" in raw:
                parsed.damaged.append((number, _NUL_PADDING))
            continue
        if b"\0" in raw:
            parsed.damaged.append((number, "NUL bytes around the entry (removed)"))
        try:
            entry = json.loads(line.decode("utf-8"))
        except UnicodeDecodeError:
            parsed.damaged.append((number, "not UTF-8 text"))
            continue
        except ValueError:
            parsed.damaged.append((number, "cut off or not JSON"))
            continue
        except RecursionError:
            parsed.damaged.append((number, "JSON nested too deeply"))
            continue
        if not isinstance(entry, dict):
            parsed.damaged.append((number, "not a JSON object"))
            continue
        parsed.entries.append((number, entry))
        parsed.clean.append(line + b"\n")
    return parsed


@contextlib.contextmanager
def locked(fd: int, what: str, *, exclusive: bool) -> Iterator[None]:
    """Hold an ``flock`` on ``fd``, waiting at most a few seconds for another process."""
    mode = fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH
    deadline = time.monotonic() + _LOCK_WAIT
    while True:
        try:
            fcntl.flock(fd, mode | fcntl.LOCK_NB)
            break
        except BlockingIOError:
            if time.monotonic() > deadline:
                raise TimeoutError(
                    f"{what} is locked by another process (waited {_LOCK_WAIT:g} s)"
                ) from None
            time.sleep(0.01)
    try:
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)


def read_all(fd: int) -> bytes:
    """Everything in ``fd`` from its start."""
    chunks = []
    offset = 0
    while chunk := os.pread(fd, 1 << 20, offset):
        chunks.append(chunk)
        offset += len(chunk)
    return b"".join(chunks)


def write_all(fd: int, data: bytes) -> None:
    """Write all of ``data`` (``fd`` is in append mode)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def backup_path(path: Path) -> Path:
    """A free name next to ``path`` for the copy kept before a repair."""
    candidate = path.with_name(f"{path.name}.damaged")
    number = 1
    while candidate.exists():
        number += 1
        candidate = path.with_name(f"{path.name}.damaged-{number}")
    return candidate
