"""Every command the demo suggests ("Try next") runs against the embedded model and succeeds
(issue 29): a newcomer's first commands must work with the default model. Read from
scripts/demo.sh itself, so a new suggestion is tested as soon as it is written."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.conftest import clean_env

ROOT = Path(__file__).resolve().parents[2]


def suggested_commands() -> list[str]:
    """The shell commands of the demo's "Try next" list (the interactive one left out: it
    waits for a person)."""
    text = (ROOT / "scripts" / "demo.sh").read_text(encoding="utf-8")
    block = text.split("Try next", 1)[1].split("\nNEXT", 1)[0]
    commands = []
    for line in block.splitlines()[1:]:
        command = re.split(r"\s{2,}", line.strip(), maxsplit=1)[0]
        if "$TAU" in command and command != "$TAU":
            commands.append(command)
    return commands


def test_the_list_is_read() -> None:
    assert len(suggested_commands()) >= 3


@pytest.mark.parametrize("command", suggested_commands())
def test_each_suggested_command_succeeds_with_the_embedded_model(
    command: str, tmp_path: Path
) -> None:
    tau = f"{shlex.quote(sys.executable)} -m tau.cli"
    work = tmp_path / "work"
    work.mkdir()
    done = subprocess.run(
        ["/bin/sh", "-c", command.replace("$TAU", tau)],
        cwd=work,
        env=clean_env(tmp_path),  # no key: the embedded model is the default
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip()
    assert "error" not in done.stderr.lower()
