"""``--max-turns``, ``--max-cost`` and fallback models in print and JSON mode (a subprocess each)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.cli.conftest import TauRunner

OVERLOADED = {"error": "Overloaded", "status": 529}
WEATHER_CALL = {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}]}


def json_lines(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines()]


def test_print_mode_shows_the_fallback_notice_and_the_answer(tau: TauRunner, script) -> None:
    busy = script([OVERLOADED])
    backup = script([{"text": "Hello from the fallback."}])
    done = tau("--model", busy, "--fallback", backup, "hi")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Hello from the fallback.\n"
    assert done.stderr == f"[{busy} failed: Overloaded; falling back to {backup}]\n"


def test_json_mode_has_a_fallback_event_and_the_totals_on_its_last_line(
    tau: TauRunner, script
) -> None:
    busy, backup = script([OVERLOADED]), script([{"text": "ok"}])
    done = tau("--model", busy, "--fallback", backup, "--json", "hi")
    assert done.returncode == 0, done.stderr
    lines = json_lines(done.stdout)
    types = [line["type"] for line in lines]
    at = types.index("fallback")
    assert types[at + 1] == "message_start"  # announced before the answer starts
    fallback = lines[at]
    assert fallback["kind"] == "overloaded" and fallback["status"] == 529
    assert fallback["message"]["errorMessage"] == "Overloaded"
    assert fallback["next"] == {"provider": "faux", "model": backup.removeprefix("faux/")}
    last = lines[-1]
    assert last["type"] == "agent_end"
    assert (last["usage"]["turns"], last["usage"]["requests"]) == (1, 2)
    assert last["messages"][-1]["model"] == backup.removeprefix("faux/")


def test_every_model_failing_is_one_error_line(tau: TauRunner, script) -> None:
    first, second = script([OVERLOADED]), script([OVERLOADED])
    done = tau("--model", first, "--fallback", second, "hi")
    assert done.returncode == 1
    assert done.stderr.splitlines()[-1] == (
        f"tau: error: All 2 models failed: [{first}] Overloaded; [{second}] Overloaded"
    )


def test_the_config_files_fallback_list(tau: TauRunner, script, tmp_path: Path) -> None:
    busy, backup = script([OVERLOADED]), script([{"text": "configured backup"}])
    home = tmp_path / "tau-home"
    home.mkdir()
    (home / "config.json").write_text(json.dumps({"fallback": ["nosuch/model", backup]}))
    done = tau("--model", busy, "hi")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "configured backup\n"
    warning, notice = done.stderr.splitlines()
    assert warning.startswith("tau: warning: fallback 'nosuch/model' in ")
    assert "unknown provider 'nosuch'" in warning
    assert notice == f"[{busy} failed: Overloaded; falling back to {backup}]"


def test_a_bad_fallback_flag_stops_tau_like_a_bad_model(tau: TauRunner) -> None:
    bad_model = tau("--model", "nosuch/model", "hi")
    done = tau("--model", "faux/echo", "--fallback", "nosuch/model", "hi")
    assert done.returncode == bad_model.returncode == 2  # bad usage
    assert done.stderr.splitlines() == bad_model.stderr.splitlines()
    assert done.stderr.splitlines() == ["tau: unknown provider 'nosuch'"]


def test_print_mode_shows_the_limit_message(tau: TauRunner, script) -> None:
    model = script([WEATHER_CALL, WEATHER_CALL, {"text": "never"}])
    done = tau("--model", model, "--tools", "weather", "--max-turns", "1", "weather?")
    assert done.returncode == 1
    lines = done.stderr.splitlines()
    assert lines[0] == '→ get_weather({"city": "Paris"})'  # the last turn's tools still run
    assert lines[1].startswith("← The weather in Paris")
    assert lines[-1] == "tau: error: Usage limit reached: turns 1 of 1"


def test_json_mode_shows_the_limit_message_and_the_totals(tau: TauRunner, script) -> None:
    model = script([WEATHER_CALL, WEATHER_CALL, {"text": "never"}])
    done = tau("--model", model, "--tools", "weather", "--max-turns", "2", "--json", "weather?")
    assert done.returncode == 1
    lines = json_lines(done.stdout)
    ends = [line["message"] for line in lines if line["type"] == "message_end"]
    assert ends[-1]["role"] == "assistant" and ends[-1]["stopReason"] == "error"
    assert ends[-1]["errorMessage"] == "Usage limit reached: turns 2 of 2"
    usage = lines[-1]["usage"]
    assert (usage["turns"], usage["requests"], usage["toolCalls"]) == (2, 2, 2)
    assert done.stderr.splitlines()[-1] == "tau: error: Usage limit reached: turns 2 of 2"


def test_a_cost_limit_not_reached_changes_nothing(tau: TauRunner, script) -> None:
    done = tau("--model", script([{"text": "cheap"}]), "--max-cost", "$0.50", "hi")
    assert (done.returncode, done.stdout) == (0, "cheap\n")


def test_bad_limits_are_usage_errors(tau: TauRunner) -> None:
    for flag, value, problem in (
        ("--max-turns", "0", "must be a whole number above 0, got '0'"),
        ("--max-turns", "many", "must be a whole number above 0, got 'many'"),
        ("--max-cost", "-1", "must be an amount of US dollars above 0, got '-1'"),
        ("--max-cost", "inf", "must be an amount of US dollars above 0, got 'inf'"),
    ):
        done = tau("--model", "faux/echo", flag, value, "hi")
        assert done.returncode == 2, (flag, value)
        assert f"argument {flag}: {problem}" in done.stderr
        assert "Traceback" not in done.stderr
