"""Where the built-in tools may look, and how they open what they find.

One policy for every file a tool touches, whether the model named it or a walk found it: the
path, with every symlink resolved, must stay inside the working directory or a root the user
allowed (``--allow-path``). Files are opened only when they are regular files, and without
blocking: a FIFO or a device is refused by name and skipped while walking, so no tool can wait
forever on a pipe with no writer or read ``/dev/zero`` without end.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
import subprocess
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

_UNICODE_SPACES = re.compile("[\u00a0\u2000-\u200a\u202f\u205f\u3000]")


class PathNotAllowedError(PermissionError):
    """A tool was asked for a path outside the allowed roots."""


class NotRegularFileError(OSError):
    """A tool was pointed at something that is not a regular file (a FIFO, a device, a socket)."""


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
        if self.contains(resolved):
            return resolved
        raise PathNotAllowedError(
            f"Path {raw!r} is outside the working directory {self.cwd} "
            "(start tau with --allow-path to allow it)"
        )

    def contains(self, resolved: Path) -> bool:
        """Whether the fully resolved ``resolved`` lies inside one of the allowed roots."""
        for root in (self.cwd, *self.allowed):
            real = root.resolve()
            if resolved == real or resolved.is_relative_to(real):
                return True
        return False

    def may_change_linked(self, resolved: Path) -> bool:
        """Whether a file with several hard links may be changed at ``resolved``: only inside
        an ``--allow-path`` root, where the user vouched for what is there."""
        return any(resolved.is_relative_to(root.resolve()) for root in self.allowed)

    def display(self, path: Path) -> str:
        """``path`` relative to the working directory when it is inside it."""
        try:
            return str(path.relative_to(self.cwd)) or "."
        except ValueError:
            return str(path)

    def walk(self, root: Path) -> Iterator[Path]:
        """Every non-directory under ``root`` (as found, links unresolved) that the policy allows.

        ``root`` comes from :meth:`resolve`. What git ignores is skipped when ``root`` is in a
        repository. A symlink is yielded only when its target is inside an allowed root; walks
        never descend into linked directories.
        """
        for path in _candidates(root):
            if path.is_symlink():
                try:
                    target = path.resolve(strict=True)
                except (OSError, RuntimeError):  # dangling, or a loop of links
                    continue
                if not self.contains(target) or target.is_dir():
                    continue
            yield path


def _candidates(root: Path) -> Iterator[Path]:
    if not root.is_dir():
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
    # Cached files may be gone from the disk; directories appear for submodules.
    return [p for p in (root / n for n in names) if p.is_symlink() or p.is_file()]


_KINDS: tuple[tuple[Callable[[int], bool], str], ...] = (
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def _check_regular(mode: int, shown: str) -> None:
    if stat.S_ISREG(mode):
        return
    if stat.S_ISDIR(mode):
        raise IsADirectoryError(f"Is a directory: {shown} (use ls to list it)")
    kind = next((name for test, name in _KINDS if test(mode)), "not a file")
    raise NotRegularFileError(f"Not a regular file: {shown} ({kind})")


def _open_checked(path: Path, shown: str, flags: int) -> BinaryIO:
    # O_NONBLOCK: opening a FIFO never waits for the other end; it is refused right after.
    fd = os.open(path, flags | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC, 0o666)
    try:
        _check_regular(os.fstat(fd).st_mode, shown)
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb" if flags == os.O_RDONLY else "r+b")
    except BaseException:
        os.close(fd)
        raise


def open_regular(path: Path, shown: str) -> BinaryIO:
    """``path`` opened for reading in binary mode; anything but a regular file is refused.

    ``shown`` is how the path is named in messages (what the model asked for).
    """
    try:
        _check_regular(os.stat(path).st_mode, shown)
    except FileNotFoundError:
        raise FileNotFoundError(f"File not found: {shown}") from None
    return _open_checked(path, shown, os.O_RDONLY)


def open_regular_for_writing(path: Path, shown: str, *, linked_ok: bool = False) -> BinaryIO:
    """``path`` opened to be overwritten (created if missing); a non-regular file is refused,
    and so is one with more than one hard link unless ``linked_ok`` (it is in an
    ``--allow-path`` root): its other name may be outside every allowed root."""
    with contextlib.suppress(FileNotFoundError):  # a new file
        info = os.stat(path)
        _check_regular(info.st_mode, shown)
        _check_links(info.st_nlink, shown, linked_ok)
    # Truncated only once it is known to be a regular file: a failed check changes nothing.
    handle = _open_checked(path, shown, os.O_RDWR | os.O_CREAT)
    try:
        _check_links(os.fstat(handle.fileno()).st_nlink, shown, linked_ok)  # linked meanwhile
    except BaseException:
        handle.close()
        raise
    handle.truncate(0)
    return handle


def _check_links(count: int, shown: str, linked_ok: bool) -> None:
    if count > 1 and not linked_ok:
        raise PathNotAllowedError(
            f"Refusing to change {shown}: it has {count} hard links, so the same file may also "
            "be outside the working directory (copy it to a new file first, or start tau with "
            "--allow-path for its directory)"
        )
