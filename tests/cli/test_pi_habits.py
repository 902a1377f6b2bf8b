"""pi's habits: -p, -i, --provider, --api-key, --no-tools, -m MODEL:THINKING, --models with
Ctrl+P, !command and !!command, /settings and /hotkeys."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tau.cli.pi_habits import split_thinking, use_api_key
from tests.cli.terminal import Terminal


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("sonnet:high", ("sonnet", "high")),
        ("anthropic/claude-sonnet-4-5:OFF", ("anthropic/claude-sonnet-4-5", "off")),
        ("ollama/llama3:8b", ("ollama/llama3:8b", None)),  # a tag, not a level
        ("gpt-4o", ("gpt-4o", None)),
        (":high", (":high", None)),
    ],
)
def test_model_thinking_shorthand(spec: str, expected: tuple[str, str | None]) -> None:
    assert split_thinking(spec) == expected


def test_api_key_is_the_providers_for_this_process(monkeypatch: pytest.MonkeyPatch) -> None:
    from tau.cli.models import parse_model

    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    use_api_key("sk-test-123", parse_model("anthropic/claude-sonnet-4-5"))
    import os

    assert os.environ["ANTHROPIC_API_KEY"] == "sk-test-123"


def test_flags_in_print_mode(tau, script, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    echo = script([{"echo": True}])
    done = tau("-p", "--model", f"{echo}:high", "say hi")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "say hi"
    session = next((tmp_path / "tau-home" / "sessions").rglob("*.jsonl"))
    entries = [json.loads(line) for line in session.read_text().splitlines()]
    assert {"type": "thinking_level_change", "thinkingLevel": "high"}.items() <= next(
        e for e in entries if e["type"] == "thinking_level_change"
    ).items()
    done = tau("--provider", "faux", "--model", "echo", "--no-session", "x")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "x"
    clash = tau("--model", echo, "--no-tools", "--tools", "read", "x")
    assert clash.returncode == 2 and "--no-tools and --tools exclude each other" in clash.stderr
    clash = tau("--model", echo, "-p", "-i", "x")
    assert clash.returncode == 2 and "-p and -i exclude each other" in clash.stderr
    calls = [{"tool_calls": [{"name": "ls", "arguments": {}}]}, {"text": "no tools"}]
    done = tau("--model", script(calls), "--no-tools", "--json", "--no-session", "list")
    lines = done.stdout.splitlines()
    result = next(json.loads(line) for line in lines if "tool_execution_end" in line)
    assert result["isError"] and "not found" in json.dumps(result)


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pty")
def test_habits_in_the_session(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"echo": True}] * 4))
    other = tmp_path / "other.json"
    other.write_text(script.read_text())
    model, second = f"faux/{script}", f"faux/{other}"
    cycle = f"{model}:high,{second}:low"
    term = Terminal(tmp_path, ["-i", "the first message", "--model", model, "--models", cycle])
    term.wait("/help for commands")
    term.wait_count("the first message", 2)  # sent at once, and echoed back
    term.wait_prompt()
    term.send("\x10")  # Ctrl+P: the model after the current one
    term.wait("other.json · thinking: low")
    term.send("\x10")
    term.wait("script.json · thinking: high")
    term.wait_prompt()
    term.send("!echo shared-output\r")
    term.wait("the output goes to the model with your next message")
    term.wait_prompt()
    term.send("!!echo private-output\r")
    term.wait("private-output")
    term.wait_prompt()
    term.send("/hotkeys\r")
    term.wait("Ctrl+P")
    term.wait_prompt()
    term.send("/settings\r")
    term.wait("cycle (Ctrl+P)")
    term.wait_prompt()
    assert term.exit() == 0
    session = next((tmp_path / "tau-home" / "sessions").rglob("*.jsonl")).read_text()
    assert "shared-output" in session and "private-output" not in session
