"""MCP servers in the ``tau`` command: the config's ``mcpServers``, ``--mcp FILE``, trust and
confirmation, ``tau mcp list``, and a server that fails to start. Real FastMCP servers."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.agent.mcp.servers import FIXTURE, http_fixture
from tests.cli.conftest import TauRunner


def fixture_entry(*args: str, **extra: Any) -> dict[str, Any]:
    return {"command": sys.executable, "args": [str(FIXTURE), *args], **extra}


def write_config(tmp_path: Path, servers: dict[str, Any]) -> None:
    home = tmp_path / "tau-home"
    home.mkdir(exist_ok=True)
    (home / "config.json").write_text(json.dumps({"mcpServers": servers}))


def write_file(tmp_path: Path, servers: dict[str, Any]) -> str:
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": servers}))
    return str(path)


CALL_ECHO = [
    {"tool_calls": [{"name": "echo", "arguments": {"text": "hi"}}]},
    {"text": "The server said hi."},
]


def warnings(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("tau: warning:")]


def test_config_with_two_servers_one_broken(tau: TauRunner, script, tmp_path: Path) -> None:
    write_config(
        tmp_path,
        {
            "files": fixture_entry("--name", "files"),
            "broken": fixture_entry("--crash-on-start"),
        },
    )
    done = tau("--model", script(CALL_ECHO), "--yes", "say hi")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "The server said hi.\n"
    (warning,) = warnings(done.stderr)
    assert warning.startswith("tau: warning: MCP server 'broken' (")
    assert warning.endswith(
        "the server exited (or closed the connection) during startup; "
        "stderr: RuntimeError: missing FIXTURE_TOKEN; continuing without it"
    )
    assert '→ echo({"text": "hi"})' in done.stderr
    assert "← files: hi" in done.stderr
    assert "Traceback" not in done.stderr


def test_print_mode_with_mcp_file_and_yes(tau: TauRunner, script, tmp_path: Path) -> None:
    path = write_file(tmp_path, {"fixture": fixture_entry()})
    model = script(
        [
            {"tool_calls": [{"name": "add", "arguments": {"a": 20, "b": 22}}]},
            {"text": "It is 42."},
        ]
    )
    done = tau("--model", model, "--mcp", path, "--yes", "--json", "add them")
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    (end,) = [e for e in events if e["type"] == "tool_execution_end"]
    assert end["toolName"] == "add" and not end["isError"]
    assert end["result"]["content"] == [{"type": "text", "text": "42"}]
    assert end["result"]["details"] == {"result": 42}
    assert warnings(done.stderr) == []


def test_mcp_tools_ask_first_unless_yes_or_trusted(tau: TauRunner, script, tmp_path: Path) -> None:
    untrusted = write_file(tmp_path, {"fixture": fixture_entry()})
    done = tau("--model", script(CALL_ECHO), "--mcp", untrusted, "say hi")
    assert done.returncode == 0, done.stderr
    assert "✗ The user has not allowed echo to run (tau needs --yes without a terminal)." in (
        done.stderr
    )

    trusted = write_file(tmp_path, {"fixture": fixture_entry(trust=True)})
    done = tau("--model", script(CALL_ECHO), "--mcp", trusted, "say hi")
    assert done.returncode == 0, done.stderr
    assert "← fixture: hi" in done.stderr


def test_http_server_and_a_name_clash_with_a_builtin_tool(
    tau: TauRunner, script, tmp_path: Path
) -> None:
    with http_fixture("--name", "web") as (url, _process):
        path = write_file(tmp_path, {"web": {"url": url, "trust": True}})
        model = script(
            [
                {"tool_calls": [{"name": "echo", "arguments": {"text": "over http"}}]},
                {"tool_calls": [{"name": "web_read", "arguments": {"path": "x.txt"}}]},
                {"text": "ok"},
            ]
        )
        # tau's own read tool keeps its name; the server's read is offered as web_read.
        done = tau("--model", model, "--mcp", path, "go")
    assert done.returncode == 0, done.stderr
    assert warnings(done.stderr) == []
    assert "← web: over http" in done.stderr
    assert "← web read x.txt" in done.stderr


def test_mcp_list(tau: TauRunner, tmp_path: Path) -> None:
    write_config(
        tmp_path,
        {
            "files": fixture_entry(trust=True),
            "broken": fixture_entry("--crash-on-start"),
            "off": {"command": "nothing", "disabled": True},
        },
    )
    done = tau("mcp", "list")
    assert done.returncode == 1, done.stderr  # one server failed
    lines = done.stdout.splitlines()
    assert lines[0].startswith("files: connected (")
    assert lines[0].endswith("), 11 tools, trusted")
    assert "  echo — Return the text, prefixed with the server's name." in lines
    assert "  add — Add two integers." in lines
    (broken,) = [line for line in lines if line.startswith("broken:")]
    assert broken.startswith("broken: failed: MCP server 'broken' (")
    assert broken.endswith("stderr: RuntimeError: missing FIXTURE_TOKEN")
    # A disabled server is listed as such (issue 29), never started.
    config = tmp_path / "tau-home" / "config.json"
    assert f'off: disabled ("disabled": true in {config})' in lines


def test_mcp_list_file_and_usage(tau: TauRunner, tmp_path: Path) -> None:
    path = write_file(tmp_path, {"fixture": fixture_entry()})
    done = tau("mcp", "list", path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0].endswith("11 tools, asks before each call")
    assert tau("mcp", "list").stdout.startswith("no MCP servers configured")
    usage = tau("mcp", "run")
    assert usage.returncode == 2
    assert usage.stderr.startswith("usage: tau mcp [-h] COMMAND")
    assert "invalid choice: 'run' (choose from 'list')" in usage.stderr


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "cannot read MCP server file"),
        ("{not json", "is not JSON"),
        ("[" * 100_000 + "]" * 100_000, "is nested too deeply"),
        ('{"mcpServers": []}', '"mcpServers" must be an object of servers'),
    ],
)
def test_bad_mcp_file_is_a_one_line_error(
    tau: TauRunner, tmp_path: Path, content: str | None, message: str
) -> None:
    path = tmp_path / "servers.json"
    if content is not None:
        path.write_text(content)
    done = tau("--model", "faux/echo", "--mcp", str(path), "hi")
    assert done.returncode == 1
    (line,) = done.stderr.splitlines()
    assert line.startswith("tau: error: ") and message in line


def test_malformed_entries_are_skipped_with_a_warning(
    tau: TauRunner, script, tmp_path: Path
) -> None:
    path = write_file(
        tmp_path,
        {
            "fixture": fixture_entry(),
            "nocommand": {"args": ["x"]},
            "badargs": {"command": "x", "args": "not a list"},
        },
    )
    done = tau("--model", script(CALL_ECHO), "--mcp", path, "--yes", "say hi")
    assert done.returncode == 0, done.stderr
    assert sorted(warnings(done.stderr)) == [
        f"tau: warning: MCP server 'badargs' in {path}: \"args\" must be a list of strings; skipped",
        f"tau: warning: MCP server 'nocommand' in {path}: needs \"command\" (a local server) or "
        '"url" (a remote one); skipped',
    ]
    assert "← fixture: hi" in done.stderr


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pty")
def test_interactive_session_asks_before_an_mcp_call_and_stops_the_server(tmp_path: Path) -> None:
    from tests.agent.mcp.servers import pid_alive
    from tests.cli.terminal import Terminal

    pid_file = tmp_path / "server.pid"
    path = write_file(tmp_path, {"fixture": fixture_entry(env={"FIXTURE_PID_FILE": str(pid_file)})})
    term = Terminal.scripted(tmp_path, [*CALL_ECHO, *CALL_ECHO], "--mcp", path)
    term.wait_prompt()
    term.send("say hi\r")
    term.wait("""Allow MCP tool 'echo' of server 'fixture' with {"text": "hi"}? [y/N]""")
    term.send("y\r")
    term.wait("The server said hi.")
    term.wait_prompt()
    term.send("again\r")
    term.wait_count("[y/N]", 2)
    term.send("n\r")
    term.wait("The user declined to run echo.")
    term.wait_prompt()
    assert term.exit() == 0
    assert not pid_alive(int(pid_file.read_text()))  # stopped on exit, not left behind
