"""Hostile input to the terminal front end: attachments that are huge, binary, FIFOs, devices
or too many; terminals one column wide; Markdown that never closes; a history file that is
not one; the [cli] extra missing."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from rich.console import Console

from tau.ai.providers.faux import faux_model
from tau.cli.attach import MAX_ATTACHMENTS, AttachmentError, build_prompt
from tau.cli.display import TerminalRenderer
from tau.cli.markdown_blocks import BlockSplitter
from tau.cli.tools import Workspace
from tests.cli import conftest as cli
from tests.cli.conftest import SRC, TauRunner, clean_env
from tests.cli.terminal import Terminal

tau = cli.tau


def _work(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    return work


def test_a_huge_attachment_is_cut_to_the_read_limit_with_a_note(
    tau: TauRunner, tmp_path: Path
) -> None:
    work = _work(tmp_path)
    with (work / "big.log").open("w") as handle:
        for number in range(400_000):  # about 5 MB
            handle.write(f"log line {number}\n")
    done = tau("--json", "--model", "faux/echo", "what failed in @big.log")
    assert done.returncode == 0, done.stderr
    assert "tau: note: big.log: Showing lines 1-" in done.stderr
    start = next(json.loads(line) for line in done.stdout.splitlines() if '"message_start"' in line)
    attached = start["message"]["content"][1]["text"]
    assert attached.startswith('<file path="big.log">\nlog line 0\n')
    assert len(attached.encode()) < 60 * 1024
    assert "Use offset=" in attached


def test_a_binary_file_is_refused(tau: TauRunner, tmp_path: Path) -> None:
    (_work(tmp_path) / "blob.bin").write_bytes(b"ELF\x00\x01\x02" * 100)
    done = tau("--model", "faux/echo", "what is @blob.bin")
    assert done.returncode == 2
    assert done.stderr == "tau: cannot attach blob.bin: a binary file (not text or an image)\n"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_is_refused_at_once(tau: TauRunner, tmp_path: Path) -> None:
    os.mkfifo(_work(tmp_path) / "pipe")
    started = time.monotonic()
    done = tau("--model", "faux/echo", "read @pipe", timeout=20)
    assert done.returncode == 2
    assert done.stderr == "tau: cannot attach pipe: Not a regular file: pipe (a FIFO)\n"
    assert time.monotonic() - started < 15


def test_a_device_is_refused(tau: TauRunner, tmp_path: Path) -> None:
    _work(tmp_path)
    done = tau("--model", "faux/echo", "--allow-path", "/dev", "-a", "/dev/zero", "read it")
    assert done.returncode == 2
    assert "a character device" in done.stderr


def test_too_many_attachments_are_refused(tmp_path: Path) -> None:
    work = _work(tmp_path)
    names = []
    for number in range(MAX_ATTACHMENTS + 1):
        (work / f"f{number}.txt").write_text("x")
        names.append(f"@f{number}.txt")
    with pytest.raises(AttachmentError, match=f"at most {MAX_ATTACHMENTS}"):
        build_prompt(" ".join(names), Workspace(work), faux_model())


def test_a_damaged_image_is_refused(tau: TauRunner, tmp_path: Path) -> None:
    (_work(tmp_path) / "fake.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"junk" * 10)
    done = tau("--model", "faux/echo", "look at @fake.png")
    assert done.returncode == 2
    assert done.stderr.startswith("tau: cannot attach fake.png: ")


class _Surface:
    def __init__(self, columns: int, rows: int) -> None:
        self.columns, self.rows = columns, rows
        self.printed: list[str] = []

    def print(self, text: str) -> None:
        self.printed.append(text)

    def changed(self) -> None:
        pass

    def size(self) -> tuple[int, int]:
        return self.columns, self.rows


def _renderer(columns: int, rows: int = 24) -> tuple[TerminalRenderer, _Surface]:
    surface = _Surface(columns, rows)
    console = Console(file=io.StringIO(), force_terminal=True, width=max(columns, 1))
    return TerminalRenderer(console, surface, faux_model), surface


@pytest.mark.parametrize("columns", [1, 2, 5, 19])
def test_a_terminal_one_column_wide_still_gets_every_word(columns: int) -> None:
    from tau.agent import MessageUpdateEvent
    from tau.ai import AssistantMessage, TextContent, TextDeltaEvent

    renderer, surface = _renderer(columns)
    text = (
        "# Title\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n```\ncode\n```\n\n- item\n\nwords at the end"
    )
    message = AssistantMessage([TextContent(text)], "faux", "faux", "faux-model")
    for piece in text:
        renderer(MessageUpdateEvent(message, TextDeltaEvent(0, piece, message)))
        assert renderer.live() == ""  # no live region that would wrap and could not be erased
    for block in renderer._text.flush():
        renderer._block(block)
    shown = "".join(surface.printed)
    for word in ("Title", "code", "item", "words", "end"):
        assert word in shown


def test_markdown_that_never_closes_a_fence_stays_bounded() -> None:
    splitter = BlockSplitter()
    assert splitter.feed("```python\n") == []
    for number in range(50_000):
        assert splitter.feed(f"line {number}\n") == []
    tail = splitter.tail(10)
    assert tail.startswith("```python\n") and tail.count("\n") == 9
    [block] = splitter.flush()
    assert block.count("\n") == 50_000


def _garbage(path: Path) -> None:
    path.write_bytes(b"\xff\xfe garbage\x00\n+not utf-8 \xc3\n")


@pytest.mark.parametrize("make", [_garbage, Path.mkdir], ids=["garbage", "a directory"])
def test_a_history_file_that_is_not_one_loses_only_history(
    tmp_path: Path, make: Callable[[Path], object]
) -> None:
    (tmp_path / "tau-home").mkdir()
    make(tmp_path / "tau-home" / "history")
    term = Terminal(tmp_path, ["--model", "faux/echo"])
    term.wait_prompt()
    term.send("still works\r")
    term.wait_count("still works", 2)
    term.wait_prompt()
    assert term.exit() == 0


@pytest.mark.parametrize("module", ["prompt_toolkit", "rich"])
def test_without_the_cli_extra_the_session_says_how_to_get_it(module: str, tmp_path: Path) -> None:
    import pexpect

    fake = tmp_path / f"without-{module}" / module
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text(f"raise ImportError(\"No module named '{module}'\")\n")
    child = pexpect.spawn(
        sys.executable,
        ["-m", "tau.cli", "--model", "faux/echo"],
        cwd=str(tmp_path),
        env=clean_env(tmp_path, PYTHONPATH=f"{fake.parent}:{SRC}", TERM="xterm"),
        encoding="utf-8",
        timeout=20,
    )
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 1
    assert child.before.strip() == (
        "tau: error: the interactive session needs prompt_toolkit and rich (pip install 'tau[cli]')"
    )
    # One-shot mode needs neither: piped, it prints the answer; on a terminal without rich,
    # plain text with a note.
    done = subprocess.run(
        [sys.executable, "-m", "tau.cli", "--model", "faux/echo", "hello"],
        cwd=tmp_path,
        env=clean_env(tmp_path, PYTHONPATH=f"{fake.parent}:{SRC}"),
        capture_output=True,
        text=True,
        input="",
        timeout=60,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "hello\n", "")
