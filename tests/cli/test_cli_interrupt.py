"""Ctrl-C in one-shot mode, under a pseudo-terminal: whatever the run is doing, it stops at
once with the "aborted" line and exit status 130."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pexpect
import pytest

from tests.cli.conftest import spawn_tau as _spawn

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs a pty")


def _ends_aborted(child: pexpect.spawn, within: float) -> None:
    started = time.monotonic()
    child.expect_exact("tau: aborted")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 130, (child.exitstatus, child.signalstatus)
    assert time.monotonic() - started < within


def test_ctrl_c_while_text_streams(tmp_path: Path) -> None:
    child = _spawn(tmp_path, [{"text": "tick " * 400, "delay": 0.05, "chunk_size": 5}], "count")
    child.expect_exact("tick tick")
    child.sendintr()
    _ends_aborted(child, within=5)


def test_ctrl_c_while_a_tool_runs(tmp_path: Path) -> None:
    call = {"tool_calls": [{"name": "bash", "arguments": {"command": "sleep 30"}}]}
    child = _spawn(tmp_path, [call, {"text": "never shown"}], "--tools", "bash", "--yes", "wait")
    child.expect_exact("sleep 30")  # the call, as drawn on a terminal
    time.sleep(0.3)  # the command is running
    child.sendintr()
    _ends_aborted(child, within=10)
    assert "never shown" not in (child.before or "")


def test_ctrl_c_at_a_confirmation_prompt(tmp_path: Path) -> None:
    call = {"tool_calls": [{"name": "write", "arguments": {"path": "x.txt", "content": "hi"}}]}
    child = _spawn(tmp_path, [call, {"text": "never shown"}], "--tools", "write,bash", "write x")
    child.expect_exact("Allow write x.txt? [y/N]")
    child.sendintr()
    # At once: no Enter needed.
    _ends_aborted(child, within=5)
    assert not (tmp_path / "work" / "x.txt").exists()
