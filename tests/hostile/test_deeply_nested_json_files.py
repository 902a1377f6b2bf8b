"""JSON nested past the parser's recursion limit, in every file tau reads: ``json.loads``
raises ``RecursionError`` there, not ``ValueError``, which escaped as ``tau: error: maximum
recursion depth exceeded`` (exit 1, the run never started). Each file now gets the treatment
its other malformations get."""

from __future__ import annotations

from pathlib import Path

import pytest

from tau.ai import get_model
from tau.batch import BatchInputError, BatchOutputError, run_batch
from tests.cli import conftest as cli
from tests.cli.conftest import TauRunner

tau = cli.tau

DEEP = "[" * 100_000 + "]" * 100_000


def test_a_deep_config_json_counts_as_empty(tau: TauRunner, tmp_path: Path) -> None:
    home = tmp_path / "tau-home"
    home.mkdir()
    (home / "config.json").write_text(DEEP)
    done = tau("--no-session", "-m", "faux/echo", "hi")
    assert (done.returncode, done.stdout, done.stderr) == (0, "hi\n", "")


def test_a_deep_faux_script_is_bad_usage(tau: TauRunner, tmp_path: Path) -> None:
    (tmp_path / "work" / "deep.json").write_text(DEEP)
    done = tau("--no-session", "-m", "faux/deep.json", "hi")
    assert done.returncode == 2
    assert done.stderr == "tau: faux script 'deep.json' is nested too deeply\n"


def test_a_deep_mcp_file_is_a_one_line_error(tau: TauRunner, tmp_path: Path) -> None:
    (tmp_path / "work" / "deep.json").write_text(DEEP)
    done = tau("--no-session", "-m", "faux/echo", "--mcp", "deep.json", "hi")
    assert done.returncode == 1  # as for any unusable --mcp file (tests/cli/test_mcp_cli.py)
    assert done.stderr == "tau: error: MCP server file 'deep.json' is nested too deeply\n"


def test_a_deep_line_in_a_session_is_one_damaged_line(tau: TauRunner, tmp_path: Path) -> None:
    assert tau("-m", "faux/echo", "--session", "s.jsonl", "first").returncode == 0
    path = tmp_path / "work" / "s.jsonl"
    with path.open("a") as file:
        file.write(DEEP + "\n")
    done = tau("-m", "faux/echo", "--session", "s.jsonl", "second")
    assert done.returncode == 0 and done.stdout == "second\n"
    assert "s.jsonl:5: damaged line skipped: JSON nested too deeply" in done.stderr
    assert "resumed 2 messages" in done.stderr
    assert (tmp_path / "work" / "s.jsonl.damaged").read_text().endswith(DEEP + "\n")


def test_a_deep_batch_input_line_is_listed_and_nothing_runs(tau: TauRunner, tmp_path: Path) -> None:
    work = tmp_path / "work"
    (work / "in.jsonl").write_text(DEEP + '\n{"id": "a", "prompt": "x"}\n')
    done = tau("batch", "in.jsonl", "-o", "out.jsonl", "-m", "faux/echo")
    assert done.returncode == 2
    assert "line 1: not valid JSON: nested too deeply" in done.stderr
    assert not (work / "out.jsonl").exists()
    with pytest.raises(BatchInputError, match="nested too deeply"):
        run_batch(work / "in.jsonl", get_model("faux", "echo"))


def test_a_deep_line_in_a_batch_output_is_not_a_result(tau: TauRunner, tmp_path: Path) -> None:
    work = tmp_path / "work"
    (work / "in.jsonl").write_text('{"id": "a", "prompt": "x"}\n')
    (work / "out.jsonl").write_text(DEEP + "\n")
    done = tau("batch", "in.jsonl", "-o", "out.jsonl", "-m", "faux/echo")
    assert done.returncode == 2
    assert "has a line that is not a batch result (line 1)" in done.stderr
    assert (work / "out.jsonl").read_text() == DEEP + "\n"
    with pytest.raises(BatchOutputError, match="not a batch result"):
        run_batch(work / "in.jsonl", get_model("faux", "echo"), output=work / "out.jsonl")
