"""Item 13 (and the second part of 19): ``bash`` never waits on, or leaves behind, the children
of its shell, and leaves no temporary files.

``sleep 1000 &`` keeps the shell's output pipe open after the shell exits. The call returns
when the shell exits, and the children still holding the pipe are killed with the process
group; a timeout or an abort kills the group whether or not the shell is still there.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from tests.cli.conftest import clean_env

from .tool_calls import call, process_alive, text_of, tool, wait_gone


def _pid(path: Path) -> int:
    return int(path.read_text().split()[0])


def test_background_child_does_not_hold_the_call(tmp_path: Path) -> None:
    started = time.monotonic()
    result = call(tool("bash", tmp_path), {"command": "sleep 1000 & echo $! > pid; echo started"})
    assert time.monotonic() - started < 5
    assert text_of(result) == "started"
    assert wait_gone(_pid(tmp_path / "pid")), "the background sleep survived the call"


def test_background_child_that_lets_go_of_the_output_is_left_alone(tmp_path: Path) -> None:
    # Redirected away from the pipe, a background job is a deliberate daemon: not killed.
    result = call(
        tool("bash", tmp_path),
        {"command": "sleep 30 > /dev/null 2>&1 & echo $! > pid; echo started"},
    )
    pid = _pid(tmp_path / "pid")
    try:
        assert text_of(result) == "started"
        time.sleep(0.3)
        assert process_alive(pid)
    finally:
        os.kill(pid, signal.SIGKILL)


def test_timeout_kills_children_after_the_shell_has_exited(tmp_path: Path) -> None:
    # The case: before, the timeout fired after the shell had exited and spared the
    # child. Now the call ends with the shell, well before the timeout, and the child dies.
    started = time.monotonic()
    result = call(
        tool("bash", tmp_path),
        {"command": "sleep 1000 & echo $! > pid; echo started", "timeout": 3},
    )
    assert text_of(result) == "started" and time.monotonic() - started < 3
    assert wait_gone(_pid(tmp_path / "pid")), "the background sleep survived"


def test_timeout_kills_the_whole_group(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match=r"Command timed out after 1 seconds"):
        call(
            tool("bash", tmp_path),
            {"command": "sleep 1000 & echo $! > pid; sleep 1000", "timeout": 1},
        )
    assert wait_gone(_pid(tmp_path / "pid")), "the background sleep survived the timeout"


def test_abort_kills_the_whole_group(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match=r"Command aborted"):
        call(
            tool("bash", tmp_path),
            {"command": "sleep 1000 & echo $! > pid; sleep 1000"},
            abort_after=0.5,
        )
    assert wait_gone(_pid(tmp_path / "pid")), "the background sleep survived the abort"


def test_output_after_the_shell_exits_is_not_lost(tmp_path: Path) -> None:
    # What the shell printed is read to the end before the group is killed.
    result = call(tool("bash", tmp_path), {"command": "sleep 1000 & seq 1 1500"})
    assert text_of(result).splitlines() == [str(i) for i in range(1, 1501)]


def test_no_temporary_file_is_left_behind(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    work = tmp_path / "work"
    work.mkdir()
    result = call(tool("bash", work), {"command": "seq 1 5000"})
    assert text_of(result).startswith("3001\n")
    assert list(scratch.iterdir()) == []


@pytest.mark.parametrize(
    "command",
    ["sleep 1000 & echo $! > pid; echo started", "sleep 1000 & echo $! > pid; sleep 1000"],
    ids=["shell-exited", "shell-running"],
)
def test_ctrl_c_in_the_cli_kills_the_group_without_event_loop_noise(
    tmp_path: Path, command: str
) -> None:
    # Ctrl-C comes while the tool runs, or (once the call has returned) while the slow answer
    # streams; either way the child dies and the process exits without asyncio's noise.
    work = tmp_path / "work"
    work.mkdir()
    model = tmp_path / "script.json"
    model.write_text(
        json.dumps(
            [
                {"tool_calls": [{"name": "bash", "arguments": {"command": command}}]},
                {"text": "done", "first_delay": 10},
            ]
        )
    )
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tau.cli",
            "--model",
            f"faux/{model}",
            "--tools",
            "bash",
            "--yes",
            "go",
        ],
        cwd=work,
        env=clean_env(tmp_path),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 30
        while not (work / "pid").exists() or not (work / "pid").read_text().strip():
            assert time.monotonic() < deadline, "the bash call never started"
            time.sleep(0.05)
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert "Event loop is closed" not in stderr, stderr
    assert "Exception ignored" not in stderr, stderr
    assert wait_gone(_pid(work / "pid")), "the background sleep survived Ctrl-C"
