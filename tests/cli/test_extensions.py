"""Extensions in print and RPC mode: the five examples, broken extensions, the loaders."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.cli.rpc_client import RpcClient

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "extensions"


def example(name: str) -> str:
    return str(EXAMPLES / f"{name}.py")


def events(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]


def tool_results(stdout: str) -> list[dict[str, Any]]:
    return [e for e in events(stdout) if e["type"] == "tool_execution_end"]


def bash_call(command: str) -> list[dict[str, Any]]:
    return [
        {"tool_calls": [{"name": "bash", "arguments": {"command": command}}]},
        {"text": "done"},
    ]


# ---------------------------------------------------------------- print mode


def test_permission_gate_blocks_in_print_mode(tau, script) -> None:  # type: ignore[no-untyped-def]
    gate = ("-e", example("permission_gate"), "--tools", "bash", "-y", "--json")
    done = tau("--model", script(bash_call("rm -rf build")), *gate, "--no-session", "clean")
    assert done.returncode == 0, done.stderr
    [result] = tool_results(done.stdout)
    assert result["isError"]
    assert "did not allow `rm -rf build`" in json.dumps(result)
    assert "tau: warning: blocked: rm -rf build" in done.stderr
    done = tau("--model", script(bash_call("echo safe")), *gate, "--no-session", "go")
    [result] = tool_results(done.stdout)
    assert not result["isError"] and "safe" in json.dumps(result)


def test_protected_paths(tau, script, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    calls = [
        {
            "tool_calls": [
                {"name": "write", "arguments": {"path": ".env", "content": "KEY=stolen"}},
                {"name": "write", "arguments": {"path": "notes.txt", "content": "fine"}},
            ]
        },
        {"text": "done"},
    ]
    done = tau(
        "--model",
        script(calls),
        "-e",
        example("protected_paths"),
        "--tools",
        "write",
        "-y",
        "--json",
        "--no-session",
        "write them",
    )
    assert done.returncode == 0, done.stderr
    env_result, notes_result = tool_results(done.stdout)
    assert env_result["isError"] and ".env is protected" in json.dumps(env_result)
    assert not notes_result["isError"]
    assert not (tmp_path / "work" / ".env").exists()
    assert (tmp_path / "work" / "notes.txt").read_text() == "fine"


def test_custom_tool(tau, script) -> None:  # type: ignore[no-untyped-def]
    calls = [
        {"tool_calls": [{"name": "count_words", "arguments": {"text": "one two\nthree"}}]},
        {"text": "counted"},
    ]
    done = tau(
        "--model", script(calls), "-e", example("custom_tool"), "--json", "--no-session", "count"
    )
    assert done.returncode == 0, done.stderr
    [result] = tool_results(done.stdout)
    assert "3 words, 2 lines, 13 characters" in json.dumps(result)


def test_custom_command_in_print_mode(tau, script, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    ext = ("-e", example("custom_command"))
    done = tau("--model", script([{"echo": True}]), *ext, "--no-session", "/greet Ann")
    assert done.returncode == 0, done.stderr
    assert "tau: Hello, Ann!" in done.stderr and done.stdout == ""
    # The extension's own flag, anywhere on the command line; an undeclared one is refused.
    done = tau("--model", script([{"echo": True}]), *ext, "/greet Ann", "--greeting=Howdy")
    assert "tau: Howdy, Ann!" in done.stderr
    # A flag whose default is a string takes its value as the next word too.
    done = tau("--model", script([{"echo": True}]), *ext, "--greeting", "Hi", "/greet Ann")
    assert done.returncode == 0, done.stderr
    assert "tau: Hi, Ann!" in done.stderr
    done = tau("--model", script([{"echo": True}]), *ext, "--no-such-flag", "/greet Ann")
    assert done.returncode == 2 and "unrecognized arguments: --no-such-flag" in done.stderr
    # /remember keeps a note in the session and sends a message about it.
    done = tau("--model", script([{"echo": True}]), *ext, "/remember the milk")
    assert done.stdout.strip() == "Remember this for later: the milk"
    sessions = list((tmp_path / "tau-home" / "sessions").rglob("*.jsonl"))
    entries = [json.loads(line) for line in sessions[0].read_text().splitlines()]
    assert {"type": "custom", "customType": "note", "data": "the milk"}.items() <= next(
        e for e in entries if e["type"] == "custom"
    ).items()
    done = tau("--model", script([{"echo": True}]), *ext, "-c", "/remember")
    assert "1 notes: the milk" in done.stderr


# ---------------------------------------------------------------- RPC mode


def _rpc(tmp_path: Path, responses: list[dict[str, Any]], *extensions: str) -> RpcClient:
    model = tmp_path / "rpc-script.json"
    model.write_text(json.dumps(responses))
    args = [a for name in extensions for a in ("-e", example(name))]
    return RpcClient(
        tmp_path, "--model", f"faux/{model}", "--no-session", "-y", "--tools", "bash,write", *args
    )


def _request(client: RpcClient, method: str) -> dict[str, Any]:
    return client.wait_for(
        lambda line: line.get("type") == "extension_ui_request" and line["method"] == method
    )


def test_rpc_confirm_status_and_commands(tmp_path: Path) -> None:
    responses = [*bash_call("rm -rf build"), *bash_call("rm -fr dist")]
    client = _rpc(tmp_path, responses, "permission_gate", "status_line", "custom_command")
    try:
        assert _request(client, "setStatus")["statusText"] == "turns: 0 · tool calls: 0"
        client.send({"type": "prompt", "message": "clean", "id": "p1"})
        question = _request(client, "confirm")
        assert question["message"] == "Allow `rm -rf build`?"
        client.send({"type": "extension_ui_response", "id": question["id"], "confirmed": True})
        ran = client.wait_for(lambda line: line.get("type") == "tool_execution_end")
        assert not ran["isError"]
        client.event("agent_end")
        assert any(line.get("statusText") == "turns: 2 · tool calls: 1" for line in client.seen)
        client.send({"type": "prompt", "message": "again"})
        question = _request(client, "confirm")
        client.send({"type": "extension_ui_response", "id": question["id"], "cancelled": True})
        assert _request(client, "notify")["message"] == "blocked: rm -fr dist"
        blocked = client.wait_for(lambda line: line.get("type") == "tool_execution_end")
        assert blocked["isError"]
        client.event("agent_end")
        # An answer nothing waits for is an error, not a crash.
        stray = client.call({"type": "extension_ui_response", "id": "ext-999", "confirmed": True})
        assert not stray["success"] and "ext-999" in stray["error"]
        client.send({"type": "prompt", "message": "/greet Bo"})
        assert _request(client, "notify")["message"] == "Hello, Bo!"
    finally:
        client.close()


# ---------------------------------------------------------------- broken extensions


BROKEN = {
    "syntax.py": ("def setup(tau):\n    return (\n", 2, "SyntaxError"),
    "raises.py": (
        "def setup(tau):\n    x = 1\n    raise RuntimeError('no setup today')\n",
        3,
        "RuntimeError: no setup today",
    ),
    "nosetup.py": ("VALUE = 1\n", None, "has no setup(tau) function"),
}


def test_broken_extensions_are_reported_and_left_out(tau, script, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    folder = tmp_path / "work" / ".tau" / "extensions"
    folder.mkdir(parents=True)
    for name, (text, _, _) in BROKEN.items():
        (folder / name).write_text(text)
    done = tau("--model", script([{"text": "still answering"}]), "--no-session", "hi")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "still answering"
    for name, (_, line, message) in BROKEN.items():
        path = folder / name
        where = f"{path}:{line}" if line else str(path)
        [report] = [
            r for r in done.stderr.splitlines() if f"extension {path.stem}" in r and "failed" in r
        ]
        assert where in report and message in report, report
    # --no-extensions: none of them is even imported.
    done = tau("--model", script([{"text": "ok"}]), "--no-session", "--no-extensions", "hi")
    assert done.stderr == ""


HANDLERS = {
    "raising": "    raise ValueError('bad handler')\n",
    "async_forever": None,
    "sync_forever": "    import time\n    time.sleep(3600)\n",
}


@pytest.mark.parametrize("kind", list(HANDLERS))
def test_a_failing_handler_disables_its_extension(tau, script, tmp_path: Path, kind: str) -> None:  # type: ignore[no-untyped-def]
    if kind == "async_forever":
        source = (
            "import asyncio\n\ndef setup(tau):\n    tau.on('tool_call', handler)\n\n"
            "async def handler(event):\n    await asyncio.Event().wait()\n"
        )
    else:
        source = (
            "def setup(tau):\n    tau.on('tool_call', handler)\n\n"
            f"def handler(event):\n{HANDLERS[kind]}"
        )
    path = tmp_path / f"{kind}.py"
    path.write_text(source)
    home = tmp_path / "tau-home"
    home.mkdir(exist_ok=True)
    (home / "config.json").write_text(json.dumps({"extensionTimeout": 0.5}))
    calls = [
        {"tool_calls": [{"name": "ls", "arguments": {}}]},
        {"tool_calls": [{"name": "ls", "arguments": {}}]},
        {"text": "the session went on"},
    ]
    done = tau("--model", script(calls), "-e", str(path), "--json", "--no-session", "list")
    assert done.returncode == 0, done.stderr
    assert [r["isError"] for r in tool_results(done.stdout)] == [False, False]
    assert events(done.stdout)[-1]["type"] == "agent_end"
    reports = [line for line in done.stderr.splitlines() if f"extension {kind}" in line]
    if kind == "raising":
        assert f"{path}:5: its tool_call handler failed: ValueError: bad handler" in reports[0]
    else:
        assert "its tool_call handler did not finish: still running after 0.5 s" in reports[0]
    assert reports[1].endswith(f"extension {kind} is disabled; the session goes on")
    assert len(reports) == 2  # disabled: the second call did not ask it again


def test_entry_point_extension(tau, script, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    site = tmp_path / "site"
    info = site / "hello_tau-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: hello-tau\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[tau.extensions]\nhello = hello_tau_ext\n")
    (site / "hello_tau_ext.py").write_text(
        "def setup(tau):\n"
        "    tau.register_command('hello', 'say hello', lambda api, arg: api.notify('hi from pip'))\n"
    )
    done = tau("--model", script([{"text": "x"}]), "--no-session", "/hello", PYTHONPATH=str(site))
    assert done.returncode == 0, done.stderr
    assert "tau: hi from pip" in done.stderr


def test_reload_loads_a_changed_extension(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tau.cli.extensions import Customizations, ExtensionOptions
    from tau.cli.resources import ResourceOptions
    from tau.cli.tools import Workspace

    monkeypatch.setenv("TAU_HOME", str(tmp_path / "home"))
    path = tmp_path / "ext.py"
    path.write_text(
        "def setup(tau):\n    tau.register_command('one', 'first', lambda a, b: None)\n"
    )
    custom = Customizations(
        Workspace(tmp_path),
        ResourceOptions(),
        ExtensionOptions(paths=(str(path),), entry_points=False),
    )
    custom.load()
    assert "one" in custom.commands
    path.write_text(
        "def setup(tau):\n    tau.register_command('two', 'second', lambda a, b: None)\n"
    )
    custom.load()
    assert "two" in custom.commands and "one" not in custom.commands
    assert [e.name for e in custom.extensions] == ["ext"]


def test_no_handler_means_no_bus_work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tau.cli.extensions import Customizations, ExtensionOptions
    from tau.cli.resources import ResourceOptions
    from tau.cli.tools import Workspace

    monkeypatch.setenv("TAU_HOME", str(tmp_path / "home"))
    custom = Customizations(
        Workspace(tmp_path), ResourceOptions(), ExtensionOptions(entry_points=False)
    )
    custom.load()

    class Event:
        type = "turn_end"

    assert custom.on_agent_event(Event()) is None  # type: ignore[arg-type]


if sys.platform == "win32":  # pragma: no cover
    pytestmark = pytest.mark.skip(reason="the examples' tests use POSIX shells")


def test_rpc_custom_tool_and_protected_paths(tmp_path: Path) -> None:
    responses = [
        {
            "tool_calls": [
                {"name": "count_words", "arguments": {"text": "a b"}},
                {"name": "write", "arguments": {"path": ".git/config", "content": "x"}},
            ]
        },
        {"text": "done"},
    ]
    client = _rpc(tmp_path, responses, "custom_tool", "protected_paths")
    try:
        client.send({"type": "prompt", "message": "go"})
        counted = client.wait_for(lambda line: line.get("type") == "tool_execution_end")
        assert "2 words" in json.dumps(counted) and not counted["isError"]
        written = client.wait_for(lambda line: line.get("type") == "tool_execution_end")
        assert written["isError"] and ".git/config is protected" in json.dumps(written)
        client.event("agent_end")
    finally:
        client.close()


def test_status_line_in_print_mode_is_quiet(tau, script) -> None:  # type: ignore[no-untyped-def]
    done = tau(
        "--model", script([{"text": "ok"}]), "-e", example("status_line"), "--no-session", "hi"
    )
    assert done.returncode == 0 and done.stdout.strip() == "ok" and done.stderr == ""


def test_handlers_change_a_tool_call_and_the_context(tau, script, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "changer.py"
    path.write_text(
        "from tau.ai import UserMessage\n\n"
        "def setup(tau):\n"
        "    @tau.on('tool_call')\n"
        "    def rewrite(event):\n"
        "        if event.tool_name == 'bash':\n"
        "            event.input['command'] = 'echo rewritten-by-extension'\n\n"
        "    @tau.on('context')\n"
        "    async def add(event):\n"
        "        return [*event.messages, UserMessage('seen only by the model')]\n"
    )
    responses = [bash_call("echo original")[0], {"echo": True}]
    done = tau(
        "--model",
        script(responses),
        "-e",
        str(path),
        "--tools",
        "bash",
        "-y",
        "--json",
        "--no-session",
        "run it",
    )
    assert done.returncode == 0, done.stderr
    [result] = tool_results(done.stdout)
    assert "rewritten-by-extension" in json.dumps(result) and "original" not in json.dumps(result)
    final = next(e for e in events(done.stdout) if e["type"] == "agent_end")
    texts = json.dumps(final["messages"])
    # The model answered the message the handler added; the session's messages lack it.
    assert final["messages"][-1]["content"][0]["text"] == "seen only by the model"
    assert texts.count("seen only by the model") == 1


def test_minus_m_names_an_extensions_model(tau, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # An unknown -m name loads the extensions first (they may add it), then looks again.
    path = tmp_path / "models_ext.py"
    path.write_text(
        "from tau.ai import faux\n\n"
        "def setup(tau):\n"
        "    tau.register_model(faux.faux_model(provider='team', id='echo-bot'))\n"
    )
    done = tau("-e", str(path), "-m", "team/echo-bot", "echo this back")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "echo this back"  # the extension's echo model answered
    # The session remembers it; resumed with the extension, the same model answers.
    again = tau("-e", str(path), "-c", "and again")
    assert again.returncode == 0, again.stderr
    assert again.stderr.startswith("resumed 2 messages · team/echo-bot"), again.stderr
    assert again.stdout.strip() == "and again"
    # A name no extension adds is still unknown (exit 2), with the extensions' close matches.
    missing = tau("-e", str(path), "-m", "team/echo-bots", "x")
    assert missing.returncode == 2
    assert "unknown model 'echo-bots' for provider 'team' (did you mean: echo-bot?)" in (
        missing.stderr
    )
    missing = tau("--no-extensions", "-m", "team/echo-bot", "x")
    assert missing.returncode == 2
    assert "unknown provider 'team'" in missing.stderr


def test_a_switch_flag_leaves_the_next_word_to_the_prompt(tau, script, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "switch_ext.py"
    path.write_text(
        "def setup(tau):\n"
        "    tau.register_flag('loud', 'shout the prompt back')\n"
        "    def shout(event):\n"
        "        if tau.flag('loud'):\n"
        "            tau.notify('loud is on')\n"
        "    tau.on('agent_start', shout)\n"
    )
    done = tau("--model", script([{"echo": True}]), "-e", str(path), "--loud", "hello there")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "hello there"  # the word after a switch is the prompt's
    assert "loud is on" in done.stderr
