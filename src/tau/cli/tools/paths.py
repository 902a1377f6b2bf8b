"""Where the built-in tools may look: paths resolve against the working directory and must stay
inside it (or inside a root the user allowed)."""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

_UNICODE_SPACES = re.compile("[\u00a0\u2000-\u200a\u202f\u205f\u3000]")


class PathNotAllowedError(PermissionError):
    """A tool was asked for a path outside the allowed roots."""


@dataclass(slots=True)
class Workspace:
    """The working directory of the tools and the extra roots they may reach."""

    cwd: Path
    allowed: Sequence[Path] = field(default_factory=tuple)

    def resolve(self, raw: str | None) -> Path:
        """The absolute path for ``raw`` (``@`` prefix stripped, ``~`` expanded), if allowed."""
        text = _UNICODE_SPACES.sub(" ", (raw or ".").strip())
        text = text.removeprefix("@") or "."
        path = Path(os.path.expanduser(text))
        if not path.is_absolute():
            path = self.cwd / path
        resolved = path.resolve()
        for root in (self.cwd, *self.allowed):
            if resolved == root or resolved.is_relative_to(root.resolve()):
                return resolved
        raise PathNotAllowedError(
            f"Path {raw!r} is outside the working directory {self.cwd} "
            "(start tau with --allow-path to allow it)"
        )

    def display(self, path: Path) -> str:
        """``path`` relative to the working directory when it is inside it."""
        try:
            return str(path.relative_to(self.cwd)) or "."
        except ValueError:
            return str(path)


def iter_files(root: Path) -> Iterator[Path]:
    """Files under ``root``, skipping what git ignores when ``root`` is in a repository."""
    if root.is_file():
        yield root
        return
    listed = _git_files(root)
    if listed is not None:
        yield from listed
        return
    for directory, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d != ".git")
        for name in sorted(files):
            yield Path(directory) / name


def _git_files(root: Path) -> list[Path] | None:
    try:
        done = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=root,
            capture_output=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None
    names = sorted(n for n in done.stdout.decode("utf-8", "replace").split("\0") if n)
    return [p for p in (root / n for n in names) if p.is_file()]
