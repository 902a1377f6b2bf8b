"""Issue 24 item 3: ``tau sessions rm PATH`` removes session files only.

``tau sessions rm ../../../outside/secret.txt`` removed the file. Now only a file in the
session store, or one whose first line is a tau/pi session header, is removed; anything else
is refused with the reason, and left as it was.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.cli.conftest import clean_env


def _tau(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    work = tmp_path / "deep" / "er" / "work"
    work.mkdir(parents=True, exist_ok=True)
    return subprocess.run(
        [sys.executable, "-m", "tau.cli", *args],
        cwd=work,
        env=clean_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_rm_refuses_a_file_that_is_not_a_session(tmp_path: Path) -> None:
    secret = tmp_path / "outside" / "secret.txt"
    secret.parent.mkdir()
    secret.write_text("do not delete\n")
    run = _tau(tmp_path, "sessions", "rm", "../../../outside/secret.txt")
    assert run.returncode != 0
    assert "not a session file" in run.stderr
    assert "Traceback" not in run.stderr
    assert secret.read_text() == "do not delete\n"
    # JSON lines that are not a session are refused too.
    other = tmp_path / "outside" / "data.jsonl"
    other.write_text(json.dumps({"type": "message", "id": "x"}) + "\n")
    assert _tau(tmp_path, "sessions", "rm", str(other)).returncode != 0
    assert other.exists()


def test_rm_removes_a_session_file_given_by_path_or_id(tmp_path: Path) -> None:
    header = {"type": "session", "version": 3, "id": "0b4c5c1e-7d2f-4b43-9f4e-5a3c2d1e0f9a"}
    loose = tmp_path / "outside" / "kept-session.jsonl"
    loose.parent.mkdir()
    loose.write_text(json.dumps({**header, "cwd": "/x", "timestamp": "t"}) + "\n")
    run = _tau(tmp_path, "sessions", "rm", str(loose))
    assert run.returncode == 0, run.stderr
    assert not loose.exists()
    run = _tau(tmp_path, "-m", "faux/echo", "hello")
    assert run.returncode == 0, run.stderr
    (stored,) = (tmp_path / "tau-home" / "sessions").rglob("*.jsonl")
    run = _tau(tmp_path, "sessions", "rm", stored.stem.rpartition("_")[2][:8])
    assert run.returncode == 0, run.stderr
    assert not stored.exists()
