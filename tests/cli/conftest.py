"""Helpers for driving the ``tau`` command as a user would: a subprocess with a clean environment."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"

_KEY_MARKERS = ("API_KEY", "_TOKEN", "AWS_", "GOOGLE_", "GCLOUD_", "TAU_")


def clean_env(home: Path, **extra: str) -> dict[str, str]:
    """The environment of a user with no API keys and a fresh ``TAU_HOME``."""
    env = {k: v for k, v in os.environ.items() if not any(m in k for m in _KEY_MARKERS)}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SRC), extra.pop("PYTHONPATH", "")]))
    env["TAU_HOME"] = str(home / "tau-home")
    env["HOME"] = str(home)
    env["PYTHONUNBUFFERED"] = "1"
    env.update(extra)
    return env


TauRunner = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def tau(tmp_path: Path) -> TauRunner:
    """Run ``python -m tau.cli ARGS`` in ``tmp_path/work``; returns the completed process."""
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)

    def run(*args: str, timeout: float = 60, input: str | None = None, **env: str) -> Any:
        return subprocess.run(
            [sys.executable, "-m", "tau.cli", *args],
            cwd=work,
            env=clean_env(tmp_path, **env),
            capture_output=True,
            text=True,
            timeout=timeout,
            input=input if input is not None else "",
        )

    return run


@pytest.fixture
def script(tmp_path: Path) -> Callable[[list[dict[str, Any]]], str]:
    """Write a faux script; returns the ``--model`` value that plays it."""
    count = 0

    def write(responses: list[dict[str, Any]]) -> str:
        nonlocal count
        count += 1
        path = tmp_path / f"script{count}.json"
        path.write_text(json.dumps(responses))
        return f"faux/{path}"

    return write


def spawn_tau(tmp_path: Path, responses: list[dict[str, Any]], *args: str) -> Any:
    """``tau --model faux/<script> ARGS`` under a pseudo-terminal (a ``pexpect.spawn``), in
    ``tmp_path/work``, playing ``responses``."""
    import pexpect

    script = tmp_path / "script.json"
    script.write_text(json.dumps(responses))
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    return pexpect.spawn(
        sys.executable,
        ["-m", "tau.cli", "--model", f"faux/{script}", *args],
        cwd=str(work),
        env=clean_env(tmp_path, TERM="xterm-256color", PROMPT_TOOLKIT_NO_CPR="1"),
        encoding="utf-8",
        timeout=20,
        dimensions=(40, 200),
    )
