"""The output file: one JSON line per finished item, appended as each finishes, never a partial line.

* **Writing.** Each result is one line written with a single ``os.write`` of the whole line to
  a file opened ``O_APPEND``: a process killed at any moment (Ctrl-C, SIGKILL, an exception)
  leaves either the whole line or nothing of it, because the bytes are in the kernel once the
  call returns. Should the kernel accept only part of a line (a full disk), the part is cut off
  again before the error is raised.
* **fsync.** What a dead *process* wrote is safe; what a dead *machine* (power loss, kernel
  crash) had not yet flushed is not. ``fsync`` bounds that loss: with the default of 1.0 the
  file is flushed to disk after a write when the previous flush is a second old, and at the
  end; 0 flushes after every line (slower); None only at the end.
* **Resume.** Opening an existing file reads the ids already in it; those items are not run
  again. A last line without its newline (the machine died mid-write) is cut off, and its item
  runs again. A line that is not a batch result is an error: tau does not append to a file it
  does not understand.
* **One writer.** The file is locked (``flock``) while a batch writes it: a second batch on the
  same file is refused instead of interleaving lines.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import stat
import time
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tau.batch.result import BatchResult

__all__ = ["BatchOutputError", "ResultFile", "read_results"]


_CHUNK = 1 << 20


class BatchOutputError(OSError):
    """The output file cannot be used (unwritable, locked, or not a batch's results)."""


class ResultFile:
    """An output file opened for a batch (see the module docstring)."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        resume: bool = True,
        fsync: float | None = 1.0,
        source: str | os.PathLike[str] | None = None,
    ) -> None:
        """Open ``path``; ``source`` is the input file, which the output must not be."""
        self.path = Path(path)
        self.fsync = fsync
        self.done: set[str] = set()
        """Ids already in the file when it was opened (empty when not resuming)."""
        self.notes: list[str] = []
        """What opening it repaired (a cut-off last line), for the user."""
        self._fd = self._open()
        # An output never closed (a batch never iterated) still lets go of the file.
        self._release = weakref.finalize(self, os.close, self._fd)
        self._synced = time.monotonic()
        try:
            if source is not None and _same_file(self._fd, source):
                # Truncating (or appending to) the input would destroy the items themselves.
                raise BatchOutputError(
                    errno.EINVAL,
                    f"the output {str(path)!r} is the input file; give another output file",
                )
            if resume:
                self._scan()
            else:
                os.ftruncate(self._fd, 0)
            self.size = os.fstat(self._fd).st_size
        except BaseException:
            self._release()
            raise

    def _open(self) -> int:
        path = self.path
        existed = path.exists()
        flags = os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
        try:
            fd = os.open(path, flags, 0o644)
        except OSError as exc:
            raise BatchOutputError(
                exc.errno, f"cannot write the output {str(path)!r}: {exc.strerror}"
            ) from None
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise BatchOutputError(
                    errno.EINVAL, f"the output {str(path)!r} is not a regular file"
                )
            os.set_blocking(fd, True)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise BatchOutputError(
                    errno.EBUSY, f"another batch is writing {str(path)!r} (it is locked)"
                ) from None
            if not existed:
                _sync_directory(path.parent)
        except BaseException:
            os.close(fd)
            raise
        return fd

    def _scan(self) -> None:
        fd = self._fd
        end = 0
        pending = b""
        # A second descriptor of the same open file: reading moves its shared offset, which
        # O_APPEND writes ignore.
        with os.fdopen(os.dup(fd), "rb", buffering=_CHUNK) as file:
            for number, line in enumerate(file, 1):
                if not line.endswith(b"\n"):
                    pending = line
                    break
                end += len(line)
                if line.strip():
                    self.done.add(_result_id(line, number, self.path))
        if pending:
            os.ftruncate(fd, end)
            os.fsync(fd)
            self.notes.append(
                f"{self.path}: cut off an unfinished last line ({len(pending):,} bytes) left by "
                "an interrupted run; its item runs again"
            )

    def write(self, result: BatchResult) -> None:
        """Append ``result`` as one line (see the module docstring)."""
        data = result.to_line()
        fd = self._fd
        written = 0
        try:
            while written < len(data):
                written += os.write(fd, data[written:] if written else data)
        except OSError:
            if written:
                with contextlib.suppress(OSError):
                    os.ftruncate(fd, self.size)
            raise
        self.size += written
        interval = self.fsync
        if interval is not None:
            now = time.monotonic()
            if now - self._synced >= interval:
                os.fsync(fd)
                self._synced = now

    def close(self) -> None:
        """Flush to disk, unlock and close."""
        fd, self._fd = self._fd, -1
        if fd < 0:
            return
        try:
            os.fsync(fd)
        finally:
            self._release()  # closing releases the lock


def _result_id(line: bytes, number: int, path: Path) -> str:
    try:
        data: Any = json.loads(line)
    except (ValueError, RecursionError):
        data = None
    ident = data.get("id") if isinstance(data, dict) else None
    if not isinstance(ident, str) or "status" not in data:
        raise BatchOutputError(
            errno.EINVAL,
            f"the output {str(path)!r} has a line that is not a batch result (line {number}); "
            "give another output file, or start it afresh (resume=False, tau batch --no-resume)",
        )
    return ident


def _same_file(fd: int, other: str | os.PathLike[str]) -> bool:
    try:
        theirs = os.stat(other)
    except OSError:
        return False
    ours = os.fstat(fd)
    return (ours.st_dev, ours.st_ino) == (theirs.st_dev, theirs.st_ino)


def _sync_directory(directory: Path) -> None:
    # A new file's name must reach the disk too, or a crash can lose the whole file.
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def read_results(path: str | os.PathLike[str]) -> Iterator[BatchResult]:
    """The results in a batch's output file, in file order (an unfinished last line is skipped)."""
    with open(path, "rb") as file:
        for line in file:
            if line.endswith(b"\n") and line.strip():
                yield BatchResult.from_json(json.loads(line))
