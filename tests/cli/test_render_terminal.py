"""One-shot runs drawn on a terminal (Markdown, edit diffs, live bash output, collapsed tool
output, spinner, status line), and the same runs piped: exactly the answer text, nothing else."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pexpect
import pytest

from tests.cli.conftest import TauRunner, clean_env
from tests.cli.terminal import Terminal

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs a pty")

ANSWER = "Some **bold** words.\n\n```python\ndef f():\n    return 1\n```\n\nThe end."
_ESCAPE = re.compile(r"\x1b")


def _script(tmp_path: Path, responses: list[dict[str, Any]]) -> str:
    path = tmp_path / "one-shot.json"
    path.write_text(json.dumps(responses))
    return f"faux/{path}"


def test_markdown_spinner_and_status_line_on_a_terminal(tmp_path: Path) -> None:
    model = _script(tmp_path, [{"text": ANSWER, "first_delay": 1.5}])
    term = Terminal(tmp_path, ["--model", model, "show me"])
    term.wait("waiting for the model")
    term.wait("The end.")
    assert term.wait_exit() == 0
    text = term.text()
    assert "Some bold words." in text and "**" not in text and "```" not in text
    assert " def f():" in text
    assert "waiting for the model" not in text.split("Some bold")[-1]  # erased once it answers
    assert re.search(r"faux/\S+ · \d+% of 128k context · \d+ tokens · \$0\.0000", text)


def test_the_same_run_piped_is_the_answer_text_only(tau: TauRunner, tmp_path: Path) -> None:
    model = _script(tmp_path, [{"text": ANSWER, "first_delay": 0.3}])
    done = tau("--model", model, "show me")
    assert done.returncode == 0, done.stderr
    assert done.stdout == ANSWER + "\n"
    assert done.stderr == ""


def test_spinner_on_stderr_when_only_stdout_is_piped(tmp_path: Path) -> None:
    model = _script(tmp_path, [{"text": "piped answer", "first_delay": 1.0}])
    out = tmp_path / "out.txt"
    work = tmp_path / "work"
    work.mkdir()
    child = pexpect.spawn(
        "/bin/sh",
        ["-c", f'"{sys.executable}" -m tau.cli --model "{model}" go > "{out}"'],
        cwd=str(work),
        env=clean_env(tmp_path, TERM="xterm-256color"),
        encoding="utf-8",
        timeout=20,
    )
    child.expect("[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]")  # the spinner, on the terminal (stderr)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert out.read_text() == "piped answer\n"


def test_edit_diff_is_shown_coloured(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "a.py").write_text("x = 1\ny = 2\nz = 3\n")
    edit = {"path": "a.py", "oldText": "y = 2", "newText": "y = 20"}
    model = _script(
        tmp_path, [{"tool_calls": [{"name": "edit", "arguments": edit}]}, {"text": "ok"}]
    )
    term = Terminal(tmp_path, ["--model", model, "--tools", "edit", "--yes", "fix"])
    term.wait("ok")
    assert term.wait_exit() == 0
    rows = [line.rstrip() for line in term.screen.display]
    removed = next(i for i, line in enumerate(rows) if line.startswith("-") and "y = 2" in line)
    added = next(i for i, line in enumerate(rows) if line.startswith("+") and "y = 20" in line)
    assert added == removed + 1
    assert term.screen.buffer[removed][0].fg == "red"
    assert term.screen.buffer[added][0].fg == "green"
    assert (work / "a.py").read_text() == "x = 1\ny = 20\nz = 3\n"


def test_bash_output_is_live_then_collapsed(tmp_path: Path) -> None:
    command = "seq 1 100; sleep 2; printf 'all-%s\\n' done"
    call = {"tool_calls": [{"name": "bash", "arguments": {"command": command}}]}
    model = _script(tmp_path, [call, {"text": "finished"}])
    term = Terminal(tmp_path, ["--model", model, "--tools", "bash", "--yes", "count"])
    # While the command sleeps, its last lines are on the screen already.
    term.wait(lambda: any(line.strip() == "100" for line in term.screen.display), timeout=10)
    assert "all-done" not in term.text()
    term.wait("all-done")
    term.wait("finished")
    assert term.wait_exit() == 0
    lines = [line.strip() for line in term.text().split("seq 1 100", 1)[1].splitlines()]
    assert "… 91 more lines" in lines
    shown = lines[: lines.index("finished")]
    assert [x for x in shown if x.isdigit()] == ["1", "2", "3", "4", "96", "97", "98", "99", "100"]
    assert "all-done" in shown


def test_tool_output_piped_stays_one_line_on_stderr(tau: TauRunner, tmp_path: Path) -> None:
    call = {"tool_calls": [{"name": "bash", "arguments": {"command": "seq 1 3"}}]}
    model = _script(tmp_path, [call, {"text": "done"}])
    done = tau("--model", model, "--tools", "bash", "--yes", "count")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "done\n"
    assert done.stderr == '→ bash({"command": "seq 1 3"})\n← 1 2 3\n'
    assert not _ESCAPE.search(done.stdout + done.stderr)


def test_an_answers_single_line_breaks_are_kept_on_a_terminal(tmp_path: Path) -> None:
    # A poem is Markdown with single newlines: CommonMark joins them, the terminal must not.
    poem = "The sea is wide,\nthe sea is deep,\nits waves are *loud*\nand never sleep."
    model = _script(tmp_path, [{"text": poem}])
    term = Terminal(tmp_path, ["--model", model, "Write a short poem about the sea."])
    term.wait("never sleep.")
    assert term.wait_exit() == 0
    lines = [line.strip() for line in term.lines()]
    for verse in ("The sea is wide,", "the sea is deep,", "its waves are loud", "and never sleep."):
        assert verse in lines, lines
