"""What a newcomer meets first: help, version, exit codes, prompt sources, flag values."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path

import pytest

from tests.cli.conftest import TauRunner, clean_env

# --------------------------------------------------------------------------- help and version


def test_every_subcommand_has_help(tau: TauRunner) -> None:
    top = tau("--help")
    assert top.returncode == 0, top.stderr
    assert top.stdout.startswith("usage: tau ")
    assert "--version" in top.stdout and "tau models" in top.stdout
    models = tau("models", "--help")
    assert models.returncode == 0, models.stderr
    assert models.stdout.startswith("usage: tau models [-h] [--json] [SEARCH]")
    assert "unknown provider" not in models.stdout + models.stderr
    short = tau("models", "-h")
    assert (short.returncode, short.stdout) == (0, models.stdout)
    mcp = tau("mcp", "--help")
    assert mcp.returncode == 0 and mcp.stdout.startswith("usage: tau mcp [-h] COMMAND")
    mcp_list = tau("mcp", "list", "--help")
    assert mcp_list.returncode == 0 and mcp_list.stdout.startswith(
        "usage: tau mcp list [-h] [FILE]"
    )


def test_help_states_the_default_timeouts(tau: TauRunner) -> None:
    from tau.ai.streaming.http import DEFAULT_TIMEOUTS

    text = " ".join(tau("--help").stdout.split())
    connect, first_byte, idle = (DEFAULT_TIMEOUTS[k] for k in ("connect", "first_byte", "idle"))
    assert first_byte == idle
    assert f"default: {connect:g} s to connect, {first_byte:g} s for each of the others" in text


def test_version(tau: TauRunner) -> None:
    done = tau("--version")
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"tau {metadata.version('tau')}\n"


def test_help_lists_the_tools_that_exist() -> None:
    from tau.cli.flags import DEFAULT_TOOL_NAMES, KNOWN_TOOL_NAMES
    from tau.cli.tools import DEFAULT_TOOLS, tool_names

    # `tau --help` names them without importing the tools (start-up time): same lists.
    assert list(KNOWN_TOOL_NAMES) == tool_names()
    assert DEFAULT_TOOL_NAMES == DEFAULT_TOOLS


# --------------------------------------------------------------------------- exit codes


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--model", "anthropic/claude-sonet-4-5", "hi"], "did you mean: claude-sonnet-4-5"),
        (["--model", "antropic/claude-sonnet-4-5", "hi"], "unknown provider 'antropic'"),
        (["--model", "claude", "hi"], "unknown model 'claude' (did you mean: "),
        (["--model", "/claude", "hi"], "--model needs provider/id"),
        (["--model", "local/nowhere.gguf", "hi"], "unknown local model 'nowhere.gguf'"),
        (["--model", "faux/echo", "--tools", "read,bsh", "hi"], "unknown tool 'bsh'"),
        (["models", "opnai"], "did you mean: openai"),
        (["models", "openai", "anthropic"], "unrecognized arguments: anthropic"),
        (["--thinking", "extreme", "hi"], "invalid choice: 'extreme'"),
        (
            ["--model", "faux/echo", "--max-tokens", "0", "hi"],
            "--max-tokens: must be a whole number above 0",
        ),
        (
            ["--model", "faux/echo", "--max-tokens", "-5", "hi"],
            "--max-tokens: must be a whole number above 0",
        ),
        (
            ["--model", "faux/echo", "--max-tokens", "many", "hi"],
            "--max-tokens: must be a whole number above 0",
        ),
        (
            ["--model", "faux/echo", "--timeout", "0", "hi"],
            "--timeout: must be a number of seconds above 0",
        ),
        (
            ["--model", "faux/echo", "--timeout", "nan", "hi"],
            "--timeout: must be a number of seconds above 0",
        ),
        (["--model", "faux/echo", "--json"], "no prompt given (stdin is empty)"),
        (["--no-such-flag"], "unrecognized arguments: --no-such-flag"),
    ],
)
def test_bad_usage_exits_2_with_one_clear_line(
    tau: TauRunner, args: list[str], message: str
) -> None:
    done = tau(*args)
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert message in done.stderr
    assert "Traceback" not in done.stderr
    assert done.stdout == ""


def test_runtime_failures_exit_1(tau: TauRunner, script) -> None:
    failed = tau("--model", script([{"error": "upstream exploded"}]), "hi")
    assert failed.returncode == 1
    no_key = tau("--model", "anthropic/claude-sonnet-4-5", "hi")
    assert no_key.returncode == 1 and "no API key" in no_key.stderr


# --------------------------------------------------------------------------- prompt sources


def test_empty_prompt_is_refused_like_empty_stdin(tau: TauRunner) -> None:
    for prompt in ("", "   ", "\n"):
        done = tau("--model", "faux/echo", prompt)
        assert done.returncode == 2, (prompt, done.stderr)
        assert done.stderr == "tau: the prompt is empty\n"
        assert done.stdout == ""
    empty_stdin = tau("--model", "faux/echo", input="  \n")
    assert empty_stdin.returncode == 2
    assert "no prompt given (stdin is empty)" in empty_stdin.stderr


def test_piped_input_follows_the_prompt(tau: TauRunner, tmp_path: Path) -> None:
    source = "def add(a, b):\n    return a + b\n"
    done = tau("--model", "faux/echo", "Explain", input=source)
    assert done.returncode == 0, done.stderr
    # Prompt, a blank line, then the piped text (the combined form of simonw's `llm`).
    assert done.stdout == "Explain\n\ndef add(a, b):\n    return a + b\n"
    # An empty argument with piped text: the piped text is the prompt.
    only_stdin = tau("--model", "faux/echo", "", input="from stdin\n")
    assert (only_stdin.returncode, only_stdin.stdout) == (0, "from stdin\n")


def test_piped_input_reaches_json_mode_too(tau: TauRunner) -> None:
    done = tau("--json", "--model", "faux/echo", "Summarise", input="the text")
    assert done.returncode == 0, done.stderr
    end = json.loads(done.stdout.splitlines()[-1])
    assert end["messages"][0]["content"][0]["text"] == "Summarise\n\nthe text"


# --------------------------------------------------------------------------- flags


def test_cut_off_answer_is_flagged_on_stderr(tau: TauRunner, script) -> None:
    model = script([{"text": "Paris, the", "stop_reason": "length"}])
    done = tau("--model", model, "--max-tokens", "3", "Capital of France?")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Paris, the\n"
    assert done.stderr == "[stopped: max tokens]\n"  # dim only on a terminal


@pytest.fixture
def silent_server() -> Iterator[str]:
    """An HTTP endpoint on 127.0.0.1 that accepts connections and never answers."""
    listener = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.1)
        while not stop.is_set():
            try:
                held.append(listener.accept()[0])
            except TimeoutError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{listener.getsockname()[1]}/openai/v1"
    stop.set()
    thread.join()
    for conn in held:
        conn.close()
    listener.close()


def test_timeout_flag_and_its_advice(tau: TauRunner, silent_server: str) -> None:
    done = tau(
        "--model",
        "azure-openai-responses/gpt-4.1",
        "--timeout",
        "0.5",
        "hi",
        AZURE_OPENAI_API_KEY="test-key",
        AZURE_OPENAI_BASE_URL=silent_server,
        timeout=30,
    )
    assert done.returncode == 1, done.stderr
    [line] = done.stderr.splitlines()
    assert "within 0.5 s" in line
    # The advice names the command's flag, not the library's option.
    assert line.endswith("(first-byte timeout; raise --timeout to wait longer)"), line


def test_malformed_faux_scripts_say_what_is_wrong(tau: TauRunner, tmp_path: Path) -> None:
    cases = [
        ([{"tool_calls": [{"arguments": {}}]}], 'response 1: tool_calls[0] needs a "name"'),
        (
            [{"tool_calls": [{"name": "x", "arguments": [1, 2]}]}],
            "response 1: tool_calls[0].arguments must be an object",
        ),
        ([{"text": "ok"}, {"tool_calls": "read"}], "response 2: tool_calls must be a list"),
        ([{"delay": "slow"}], "response 1: delay must be a number of seconds"),
        ([{"chunk_size": 2.5}], "response 1: chunk_size must be a whole number"),
        ([{"txt": "typo"}], 'response 1: unknown key "txt"'),
        ([{"stop_reason": "tired"}], "response 1: stop_reason must be one of"),
        ({"text": "not a list"}, "must be a JSON list of objects"),
    ]
    for number, (content, message) in enumerate(cases):
        path = tmp_path / f"bad{number}.json"
        path.write_text(json.dumps(content))
        done = tau("--model", f"faux/{path}", "hi")
        assert done.returncode == 2, (content, done.stderr)
        [line] = done.stderr.splitlines()
        assert line.startswith("tau: faux script ") and message in line, (content, line)


# --------------------------------------------------------------------------- start-up


@pytest.mark.parametrize("flag", ["--help", "--version"])
def test_help_and_version_load_no_agent_no_pydantic(flag: str, tmp_path: Path) -> None:
    # Start-up time is measured in benchmarks/bench_startup.py; here, what makes it: parsing
    # flags must not import the agent, pydantic, asyncio, any provider or the terminal UI (nor
    # pathlib or dataclasses: several milliseconds each, and the flags need neither).
    code = (
        "import atexit, sys\n"
        "def report():\n"
        "    heavy = ('pydantic', 'tau.agent', 'tau.ai', 'asyncio', 'httpx2', 'jiter', 'rich',\n"
        "             'prompt_toolkit', 'pathlib', 'dataclasses')\n"
        "    loaded = sorted(m for m in sys.modules if m.split('.')[0] in heavy or m.startswith(heavy))\n"
        "    sys.stderr.write(repr(loaded))\n"
        "atexit.register(report)\n"
        "from tau.cli.main import main\n"
        f"raise SystemExit(main([{flag!r}]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], env=clean_env(tmp_path), capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == "[]"


def test_the_library_loads_no_terminal_ui(tmp_path: Path) -> None:
    # rich and prompt_toolkit are the [cli] extra's: the library never needs them.
    code = (
        "import sys, tau.ai, tau.agent\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('rich', 'prompt_toolkit')))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], env=clean_env(tmp_path), capture_output=True, text=True
    )
    assert (done.returncode, done.stdout) == (0, "[]\n"), done.stderr
