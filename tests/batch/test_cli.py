"""``tau batch`` as a user runs it: a subprocess with no keys and a faux model."""

from __future__ import annotations

import argparse
import json
import os
import pickle
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tau.cli.batch import BatchAgent, _make_agent
from tau.cli.main import subcommand_parser
from tests.cli.conftest import clean_env

COUNT = 40


def write_input(path: Path, count: int = COUNT) -> Path:
    path.write_text(
        "".join(json.dumps({"id": f"r{n}", "prompt": f"row {n}"}) + "\n" for n in range(count))
    )
    return path


def write_script(path: Path, responses: list[dict[str, Any]]) -> str:
    path.write_text(json.dumps(responses))
    return f"faux/{path}"


def output_ids(path: Path) -> list[str]:
    return [json.loads(line)["id"] for line in path.read_bytes().splitlines()]


def tau(tmp_path: Path, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tau.cli", *args],
        cwd=tmp_path,
        env=clean_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def test_help_lists_the_flags_and_tau_help_names_the_command(tmp_path: Path) -> None:
    done = tau(tmp_path, "batch", "--help")
    assert done.returncode == 0
    for flag in (
        "-o OUT.jsonl",
        "--model",
        "--system",
        "--tools",
        "--concurrency",
        "--rpm",
        "--tpm",
        "--output-schema",
        "--max-cost-per-item",
        "--ray [ADDRESS]",
        "--grace",
    ):
        assert flag in done.stdout, flag
    assert "tau batch" in tau(tmp_path, "--help").stdout


def test_a_batch_runs_writes_every_item_and_resumes(tmp_path: Path) -> None:
    source, output = write_input(tmp_path / "in.jsonl"), tmp_path / "out.jsonl"
    done = tau(
        tmp_path,
        "batch",
        str(source),
        "-o",
        str(output),
        "--model",
        "faux/echo",
        "--concurrency",
        "8",
        "--rpm",
        "60000",
    )
    assert done.returncode == 0, done.stderr
    assert f"{COUNT} of {COUNT} items done this run ({COUNT} ok, 0 error, 0 limited)" in done.stdout
    assert "tokens:" in done.stdout and "cost $" in done.stdout and "wall time" in done.stdout
    assert sorted(output_ids(output)) == sorted(f"r{n}" for n in range(COUNT))
    first = json.loads(output.read_bytes().splitlines()[0])
    assert first["text"] == first["id"].replace("r", "row ")
    again = tau(tmp_path, "batch", str(source), "-o", str(output), "--model", "faux/echo")
    assert again.returncode == 0
    assert f"resuming {output}: {COUNT} items already done" in again.stderr
    assert f"0 of {COUNT} items done this run" in again.stdout
    fresh = tau(tmp_path, "batch", str(source), "-o", str(output), "-m", "faux/echo", "--no-resume")
    assert fresh.returncode == 0 and len(output_ids(output)) == COUNT


def test_failed_and_limited_items(tmp_path: Path) -> None:
    # Each item plays the script from its start: one script per outcome, one item each, all
    # in one output file (each run resumes it).
    output = tmp_path / "out.jsonl"
    outcomes = [
        ([{"text": "fine"}], 0, "(1 ok, 0 error, 0 limited)"),
        ([{"error": "400 no such thing", "status": 400}], 1, "(0 ok, 1 error, 0 limited)"),
        (
            [{"tool_calls": [{"name": "calculate", "arguments": {"expression": "1+1"}}]}],
            0,
            "(0 ok, 0 error, 1 limited)",
        ),
    ]
    for number, (responses, status, counts) in enumerate(outcomes):
        source = write_input(tmp_path / f"in{number}.jsonl", number + 1)
        model = write_script(tmp_path / f"script{number}.json", responses)
        args = ["batch", str(source), "-o", str(output), "-m", model]
        done = tau(tmp_path, *args, "--tools", "calculator", "--max-turns", "1")
        assert done.returncode == status, done.stderr
        assert f"1 of {number + 1} items done this run {counts}" in done.stdout
    statuses = {
        line["id"]: line["status"] for line in map(json.loads, output.read_bytes().splitlines())
    }
    assert statuses == {"r0": "ok", "r1": "error", "r2": "limited"}


def test_typed_output_is_written_per_item(tmp_path: Path) -> None:
    schema = {
        "type": "object",
        "properties": {"name": {"type": "string"}, "population": {"type": "integer"}},
        "required": ["name", "population"],
    }
    (tmp_path / "city.json").write_text(json.dumps(schema))
    paris = {"name": "Paris", "population": 2100000}

    def answer(arguments: dict[str, Any]) -> dict[str, Any]:
        return {"tool_calls": [{"name": "final_result", "arguments": arguments}]}

    # Every item plays the script from its start: r0 and r1 answer Paris; then r2, run with a
    # script that never answers with a valid city (the first try and its one retry), fails.
    output = tmp_path / "out.jsonl"
    valid = write_script(tmp_path / "valid.json", [answer(paris)])
    two = write_input(tmp_path / "two.jsonl", 2)
    args = ["batch", str(two), "-o", str(output), "--output-schema", "city.json"]
    done = tau(tmp_path, *args, "-m", valid)
    assert done.returncode == 0, done.stderr
    assert "2 of 2 items done this run (2 ok, 0 error, 0 limited)" in done.stdout
    invalid = answer({"name": "Nowhere"})
    model = write_script(tmp_path / "invalid.json", [invalid, invalid])
    three = write_input(tmp_path / "three.jsonl", 3)
    args = ["batch", str(three), "-o", str(output), "-m", model]
    done = tau(tmp_path, *args, "--output-schema", "city.json")
    assert done.returncode == 1, done.stderr
    assert "1 of 3 items done this run (0 ok, 1 error, 0 limited)" in done.stdout
    lines = {line["id"]: line for line in map(json.loads, output.read_bytes().splitlines())}
    assert lines["r0"]["output"] == paris and lines["r1"]["output"] == paris
    assert lines["r2"]["status"] == "error" and "output" not in lines["r2"]
    assert lines["r2"]["error"].startswith("No valid output (city) after 2 attempts")
    bad = tau(tmp_path, *args, "--output-schema", "nowhere.json")
    assert bad.returncode == 2 and "--output-schema nowhere.json: no such file" in bad.stderr


def test_malformed_input_is_bad_usage_with_line_numbers(tmp_path: Path) -> None:
    source = tmp_path / "in.jsonl"
    source.write_text('{"id": "a", "prompt": "x"}\n{"id": "a", "prompt": "y"}\nnot json\n')
    done = tau(tmp_path, "batch", str(source), "-o", str(tmp_path / "out.jsonl"), "-m", "faux/echo")
    assert done.returncode == 2
    assert "line 2: duplicate id 'a' (first at line 1)" in done.stderr
    assert "line 3: not valid JSON" in done.stderr
    assert not (tmp_path / "out.jsonl").exists()
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--model", "nope/x"], "unknown provider"),
        (["--tools", "bash"], "would run unattended on every item: add --yes"),
        (["--tools", "telepathy"], "unknown tool 'telepathy'"),
        (["--concurrency", "0"], "must be a whole number above 0"),
        (["--rpm", "-5"], "must be a number above 0"),
    ],
)
def test_bad_flags_are_bad_usage(tmp_path: Path, args: list[str], message: str) -> None:
    source = write_input(tmp_path / "in.jsonl", 1)
    done = tau(
        tmp_path, "batch", str(source), "-o", str(tmp_path / "o.jsonl"), "-m", "faux/echo", *args
    )
    assert done.returncode == 2
    assert message in done.stderr


def test_ctrl_c_stops_new_items_writes_what_finished_and_a_rerun_completes(tmp_path: Path) -> None:
    source, output = write_input(tmp_path / "in.jsonl"), tmp_path / "out.jsonl"
    model = write_script(tmp_path / "slow.json", [{"echo": True, "first_delay": 0.15}] * COUNT)
    args = [
        sys.executable,
        "-m",
        "tau.cli",
        "batch",
        str(source),
        "-o",
        str(output),
        "-m",
        model,
        "--concurrency",
        "4",
    ]
    child = subprocess.Popen(
        args,
        cwd=tmp_path,
        env=clean_env(tmp_path),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
    )
    deadline = time.monotonic() + 30
    while not output.exists() or len(output.read_bytes().splitlines()) < 6:
        assert time.monotonic() < deadline and child.poll() is None
        time.sleep(0.02)
    child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=30)
    assert child.returncode == 130, err
    assert "stopping: no new items; running ones get 30 s to finish" in err
    first = output_ids(output)
    assert 6 <= len(first) < COUNT
    assert f"interrupted: {COUNT - len(first)} items left (run again to resume)" in out
    again = tau(
        tmp_path, "batch", str(source), "-o", str(output), "-m", model, "--concurrency", "8"
    )
    assert again.returncode == 0, again.stderr
    assert sorted(output_ids(output)) == sorted(f"r{n}" for n in range(COUNT))


def parse(*argv: str) -> argparse.Namespace:
    return subcommand_parser("batch").parse_args(["in.jsonl", "-o", "out.jsonl", *argv])


def test_the_agent_factory_carries_the_flags_and_pickles_for_ray(tmp_path: Path) -> None:
    model = write_script(tmp_path / "s.json", [{"echo": True}])
    factory = _make_agent(
        parse(
            "-m",
            model,
            "--system",
            "Be brief.",
            "--tools",
            "calculator",
            "--max-cost-per-item",
            "$0.25",
            "--max-turns",
            "3",
            "--max-tokens",
            "100",
        )
    )
    for made in (factory, pickle.loads(pickle.dumps(factory))):
        assert isinstance(made, BatchAgent)
        agent = made()
        assert agent.state.model is not None and agent.state.model.id == str(tmp_path / "s.json")
        assert agent.state.system_prompt == "Be brief."
        assert [t.name for t in agent.state.tools] == ["calculate"]
        assert agent.usage_limits is not None
        assert (agent.usage_limits.max_cost, agent.usage_limits.max_turns) == (0.25, 3)
        assert agent.stream_options == {"max_tokens": 100}
    assert pickle.loads(pickle.dumps(factory)).model is None  # re-made from its name


def test_tau_batch_help_is_fast_to_import() -> None:
    code = "import sys, tau.cli.batch; print(sorted(m for m in ('tau.agent', 'tau.batch', 'httpx2', 'pydantic') if m in sys.modules))"
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2] / "src")},
    )
    assert done.stdout.strip() == "[]", done.stderr


def test_each_item_plays_the_scripted_model_from_its_start(tmp_path: Path) -> None:
    # One response in the script: every item gets it, not only the first (issue 29, item 7).
    source, output = write_input(tmp_path / "in.jsonl", 20), tmp_path / "out.jsonl"
    model = write_script(tmp_path / "s.json", [{"text": "the one answer"}])
    done = tau(tmp_path, "batch", str(source), "-o", str(output), "-m", model)
    assert done.returncode == 0, done.stderr
    assert "20 of 20 items done this run (20 ok, 0 error, 0 limited)" in done.stdout
    results = [json.loads(line) for line in output.read_bytes().splitlines()]
    assert {r["text"] for r in results} == {"the one answer"}
