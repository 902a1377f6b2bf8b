"""Hostile input and faults at the ``tau`` command's edges: bytes that are not UTF-8 (argv,
stdin, the interactive line), a reader that closes the pipe early, a calculator bomb."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pexpect
import pytest

from tests.cli import conftest as cli
from tests.cli.conftest import TauRunner, clean_env

# The command-line fixtures of tests/cli, shared with this folder.
tau = cli.tau
script = cli.script

# --------------------------------------------------------------------------- bytes, not UTF-8

# What a shell passes for `tau $'caf\xe9'`: Python decodes argv with surrogateescape.
LATIN1_ARG = "caf\udce9"


def test_non_utf8_prompt_argument(tau: TauRunner, tmp_path: Path) -> None:
    session = tmp_path / "s.jsonl"
    done = tau("--model", "faux/echo", "--session", str(session), LATIN1_ARG)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "caf\ufffd\n"
    assert done.stderr == "tau: note: the prompt is not valid UTF-8: undecodable bytes became �\n"
    entries = [json.loads(line) for line in session.read_text(encoding="utf-8").splitlines()]
    assert [e["type"] for e in entries] == ["session", "model_change", "message", "message"]
    assert entries[2]["message"]["content"][0]["text"] == "caf\ufffd"


def test_non_utf8_system_prompt_argument(tau: TauRunner) -> None:
    done = tau("--model", "faux/echo", "--system", LATIN1_ARG, "hi")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "hi\n"
    assert "--system is not valid UTF-8" in done.stderr


def test_non_utf8_stdin(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    done = subprocess.run(
        [sys.executable, "-m", "tau.cli", "--model", "faux/echo", "Explain"],
        cwd=work,
        env=clean_env(tmp_path),
        input=b"na\xefve bytes\n",
        capture_output=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.decode() == "Explain\n\nna\ufffdve bytes\n"
    assert b"stdin is not valid UTF-8" in done.stderr


# The plain prompt of a terminal that cannot be drawn on (TERM=dumb) gets the bytes as typed.
_NO_READLINE = (
    "import sys; sys.modules['readline'] = None; from tau.cli.main import main; "
    "raise SystemExit(main(sys.argv[1:]))"
)


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pty")
def test_non_utf8_interactive_line(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    session = tmp_path / "s.jsonl"
    child = pexpect.spawn(
        sys.executable,
        ["-c", _NO_READLINE, "--model", "faux/echo", "--session", str(session)],
        cwd=str(work),
        env=clean_env(tmp_path, TERM="dumb"),
        timeout=20,
    )
    child.expect_exact(b"> ")
    child.send(b"caf\xe9 au lait\r")
    child.expect_exact("caf\ufffd au lait\r\n".encode())
    child.expect_exact(b"> ")
    child.sendline(b"/exit")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    texts = [
        json.loads(line)["message"]["content"][0]["text"]
        for line in session.read_text(encoding="utf-8").splitlines()
        if '"message"' in line
    ]
    assert texts == ["caf\ufffd au lait", "caf\ufffd au lait"]


# --------------------------------------------------------------------------- a reader that leaves


def _read_two_lines_then_close(args: list[str], tmp_path: Path) -> tuple[int, str]:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    proc = subprocess.Popen(
        [sys.executable, "-m", "tau.cli", *args],
        cwd=work,
        env=clean_env(tmp_path),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.readline()
    proc.stdout.readline()
    proc.stdout.close()  # what `| head -2` does
    try:
        status = proc.wait(timeout=30)
    finally:
        proc.kill()
    return status, proc.stderr.read().decode()


def test_models_into_a_closed_pipe_exits_quietly(tmp_path: Path) -> None:
    status, err = _read_two_lines_then_close(["models"], tmp_path)
    assert err == ""
    assert status == 141  # as a process killed by SIGPIPE (what `ls | head` reports)


@pytest.mark.parametrize("mode", [[], ["--json"]])
def test_a_run_into_a_closed_pipe_stops_quietly(tmp_path: Path, mode: list[str]) -> None:
    path = tmp_path / "long.json"
    lines = "".join(f"line {n}\n" for n in range(20_000))
    path.write_text(json.dumps([{"text": lines, "chunk_size": 64, "delay": 0.0005}]))
    started = time.monotonic()
    status, err = _read_two_lines_then_close([*mode, "--model", f"faux/{path}", "go"], tmp_path)
    assert (status, err) == (141, "")
    # The run stops when its reader leaves, instead of streaming the rest into nowhere.
    assert time.monotonic() - started < 20


# --------------------------------------------------------------------------- calculator bomb

BOMB = "((10**1000)**1000)**1000"


def _calculate_in_a_child(expression: str, timeout: float = 10) -> subprocess.CompletedProcess[str]:
    code = (
        "import sys\n"
        "from tau.cli.tools.examples import calculate\n"
        "try:\n"
        "    print(calculate(sys.argv[1]))\n"
        "except ValueError as exc:\n"
        "    print('error:', exc)\n"
    )
    return subprocess.run(
        [sys.executable, "-c", code, expression],
        env=clean_env(Path("/tmp")),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        (BOMB, "result too large"),
        ("9**9**9", "exponent too large"),
        ("7**3000", "result too large"),
        ("10**1000 * 10**1000 * 10**1000 * 10**1000", "result too large"),
        ("2**99999999", "exponent too large"),
        ("1.5**5000", "result out of range"),
        ("10**400 / 10**-400", "result out of range"),
        ("1e308 * 10", "result out of range"),
        ("-" * 50_000 + "1", "expression too long"),
        ("(" * 250 + "1" + ")" * 250, "nested too deeply"),
        ("+".join(["1"] * 1500), "expression too long"),
    ],
)
def test_calculator_bombs_fail_fast_with_a_reason(expression: str, message: str) -> None:
    started = time.monotonic()
    done = _calculate_in_a_child(expression)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("error: ") and message in done.stdout, done.stdout
    assert time.monotonic() - started < 10


def test_calculator_still_calculates() -> None:
    from tau.cli.tools.examples import calculate

    assert calculate("6*7") == "6*7 = 42"
    assert calculate("2**100") == f"2**100 = {2**100}"
    assert calculate("10**999 // 10**998") == "10**999 // 10**998 = 10"
    assert calculate("(1+2)*3 - 4/8") == "(1+2)*3 - 4/8 = 8.5"
    assert calculate("-2**-2") == "-2**-2 = -0.25"


def test_calculator_bomb_through_the_command(tau: TauRunner, script) -> None:
    call = {"tool_calls": [{"name": "calculate", "arguments": {"expression": BOMB}}]}
    model = script([call, {"text": "too big"}])
    done = tau("--model", model, "--tools", "calculator", "compute it", timeout=30)
    assert done.returncode == 0, done.stderr
    assert "✗ result too large" in done.stderr
    assert done.stdout == "too big\n"
