"""Hostile extensions: what they do must not end the session or hang it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.cli import conftest as cli

# The command-line fixtures of tests/cli, shared with this folder.
tau = cli.tau
script = cli.script


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("import sys\n\ndef setup(tau):\n    sys.exit(3)\n", "SystemExit: 3"),
        ("raise KeyError('at import')\n", "KeyError: 'at import'"),
        ("def setup(tau):\n    tau.register_tool(object())\n", "loading failed"),
        (
            "def setup(tau):\n    tau.register_command('model', 'x', print)\n",
            "/model is already a command",
        ),
        ("setup = 'not a function'\n", "has no setup(tau) function"),
        ("\x00\x01 binary", "loading failed"),
    ],
)
def test_a_hostile_extension_is_reported_and_left_out(
    tau, script, tmp_path: Path, source: str, expected: str
) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "hostile.py"
    path.write_text(source)
    done = tau("--model", script([{"text": "still here"}]), "-e", str(path), "--no-session", "hi")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "still here"
    assert expected in done.stderr and "Traceback" not in done.stderr


def test_extension_paths_that_are_not_files(tau, script, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    missing = tmp_path / "missing.py"
    empty_dir = tmp_path / "empty"
    empty_dir.mkdir()
    args = ["-e", str(missing), "-e", str(empty_dir)]
    if hasattr(os, "mkfifo"):
        fifo = tmp_path / "pipe.py"
        os.mkfifo(fifo)
        args += ["-e", str(fifo)]
    done = tau("--model", script([{"text": "ok"}]), *args, "--no-session", "hi", timeout=30)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
    assert f"no such extension file: {missing}" in done.stderr
