"""Items 12 and 15: FIFOs and devices never block or flood a tool; grep reads a bounded amount
of each file.

A FIFO with no writer blocks ``open()`` for reading forever (and one with no reader blocks it for
writing); ``/dev/zero`` never ends. Each tool must skip such files while walking, refuse them
when named, and return promptly.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tau.cli.tools.search import GREP_MAX_FILE_BYTES

from .tool_calls import call, make_fifo, text_of, tool, unblock_fifo


@pytest.fixture
def ws(tmp_path: Path) -> Iterator[Path]:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.txt").write_text("needle in a\n")
    fifo = make_fifo(root / "pipe")
    yield root
    unblock_fifo(fifo)  # frees a thread left blocked by a failing (pre-fix) run


@pytest.mark.parametrize("git", [False, True], ids=["plain", "git"])
def test_grep_skips_a_fifo_while_walking(ws: Path, git: bool) -> None:
    if git:
        subprocess.run(["git", "init", "-q", str(ws)], check=True, timeout=30)
    out = text_of(call(tool("grep", ws), {"pattern": "needle"}))
    assert out == "a.txt:1: needle in a"


def test_grep_refuses_a_fifo_named_directly(ws: Path) -> None:
    with pytest.raises(OSError, match=r"Not a regular file: pipe \(a FIFO\)"):
        call(tool("grep", ws), {"pattern": "x", "path": "pipe"})


def test_read_refuses_a_fifo(ws: Path) -> None:
    with pytest.raises(OSError, match=r"Not a regular file: pipe \(a FIFO\)"):
        call(tool("read", ws), {"path": "pipe"})


def test_find_lists_without_opening_a_fifo(ws: Path) -> None:
    assert text_of(call(tool("find", ws), {"pattern": "*"})).splitlines() == ["a.txt", "pipe"]


def test_write_refuses_a_fifo_instead_of_blocking(ws: Path) -> None:
    with pytest.raises(OSError, match=r"Not a regular file: pipe \(a FIFO\)"):
        call(tool("write", ws), {"path": "pipe", "content": "data"})


def test_edit_refuses_a_fifo(ws: Path) -> None:
    with pytest.raises(OSError, match=r"Not a regular file: pipe \(a FIFO\)"):
        call(tool("edit", ws), {"path": "pipe", "oldText": "a", "newText": "b"})


def test_write_through_a_symlink_to_a_fifo_is_refused(ws: Path) -> None:
    (ws / "alias").symlink_to("pipe")
    with pytest.raises(OSError, match=r"Not a regular file: alias \(a FIFO\)"):
        call(tool("write", ws), {"path": "alias", "content": "data"})


def test_grep_never_reads_a_link_to_dev_zero(tmp_path: Path) -> None:
    # /dev is an allowed root here, so only the regular-file rule stands between grep and an
    # endless read.
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("needle\n")
    (ws / "zero").symlink_to("/dev/zero")
    grep = tool("grep", ws, (Path("/dev"),))
    assert text_of(call(grep, {"pattern": "needle"})) == "a.txt:1: needle"
    with pytest.raises(OSError, match=r"Not a regular file: zero \(a character device\)"):
        call(grep, {"pattern": "needle", "path": "zero"})


def test_grep_reads_at_most_the_cap_of_each_file(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    line = b"x" * 99 + b"\n"
    with (ws / "big.log").open("wb") as out:
        out.write(b"needle at the start\n")
        out.write(line * (GREP_MAX_FILE_BYTES // len(line) + 1))
        out.write(b"needle past the cap\n")
    out = text_of(call(tool("grep", ws), {"pattern": "needle"}))
    assert "big.log:1: needle at the start" in out
    assert "past the cap" not in out
    assert f"[big.log: only the first {GREP_MAX_FILE_BYTES // (1024 * 1024)}.0MB searched]" in out
