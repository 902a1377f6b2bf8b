"""Hostile input to the session engine: a broken models.json, malformed RPC lines, a sessions
folder that is a file or full of things that are not sessions, hostile compaction entries, and
markup in an exported conversation. Each gets a clear message; nothing hangs or is lost."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tau.ai import AssistantMessage, ToolResultMessage, UserMessage
from tau.ai.providers.faux import text, tool_call
from tau.cli.custom_models import parse_models_file
from tau.cli.rpc import MAX_LINE
from tau.cli.session import Session
from tau.cli.session_store import directory_key
from tau.cli.transcript import to_html
from tests.cli import conftest as cli
from tests.cli.conftest import TauRunner, clean_env
from tests.cli.rpc_client import RpcClient

tau = cli.tau
script = cli.script

# --------------------------------------------------------------------------- models.json

GOOD = {"api": "faux", "baseUrl": "faux://good", "models": [{"id": "m"}]}


@pytest.mark.parametrize(
    ("provider", "problem"),
    [
        (
            {"api": "faux", "baseUrl": "faux://x", "models": [{"id": "m", "contextWindow": "big"}]},
            "contextWindow: expected int, got str",
        ),
        (
            {"api": "faux", "baseUrl": "faux://x", "models": [{"id": "m", "contextWindow": -5}]},
            "contextWindow must be a whole number above 0",
        ),
        (
            {"api": "telepathy", "baseUrl": "http://x", "models": [{"id": "m"}]},
            "unknown api 'telepathy' (known: ",
        ),
        (
            {"api": "faux", "baseUrl": "faux://x", "models": [{"id": "m", "colour": 1}]},
            'unknown field "colour"',
        ),
        (
            {"api": "faux", "baseUrl": "faux://x", "models": [{"id": ""}]},
            "id must be a non-empty string",
        ),
        (
            {"api": "faux", "baseUrl": "faux://x", "models": [{"id": "m"}, {"id": "m"}]},
            "model 'm' given twice",
        ),
        ({"api": "faux", "baseUrl": "faux://x", "models": "m"}, "models must be a list of models"),
        (
            {"api": "faux", "baseUrl": "faux://x", "models": []},
            "no models (and no catalog provider of that name)",
        ),
        ({"models": [{"id": "m"}]}, "no api (give it on the provider or the model)"),
        (
            {"api": "faux", "baseUrl": "faux://x", "headers": {"X": 1}, "models": [{"id": "m"}]},
            "headers.X must be a string",
        ),
        (
            {"api": "faux", "baseUrl": "faux://x", "models": [{"id": "m", "input": ["smell"]}]},
            "unknown modality 'smell'",
        ),
        ({"api": 3, "baseUrl": "faux://x", "models": [{"id": "m"}]}, "api must be a string"),
        ([1, 2], "providers.bad must be an object"),
    ],
)
def test_a_bad_provider_is_left_out_with_a_warning_naming_the_field(
    provider: Any, problem: str
) -> None:
    data = json.dumps({"providers": {"bad": provider, "good": GOOD}}).encode()
    parsed = parse_models_file(data, "models.json")
    assert list(parsed.providers) == ["good"], "the other providers still work"
    [warning] = parsed.warnings
    assert warning.startswith("models.json: providers.bad") and problem in warning
    assert warning.endswith("; provider 'bad' left out")


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        (b"{not json", "is not valid JSON"),
        (b"\xff\xfe", "is not valid JSON"),
        (b"[]", 'expected {"providers": {...}}'),
        (b'{"providers": 3}', 'expected {"providers": {...}}'),
        (b'{"providers": {"a/b": {}}}', "provider name 'a/b' must be non-empty, no '/'"),
        (b"[" * 100_000 + b"]" * 100_000, "is not valid JSON"),
    ],
)
def test_a_broken_file_is_a_warning(data: bytes, problem: str) -> None:
    parsed = parse_models_file(data, "models.json")
    assert not parsed.providers
    assert problem in parsed.warnings[0]


def test_tau_starts_with_a_broken_models_json(tau: TauRunner, tmp_path: Path) -> None:
    home = tmp_path / "tau-home"
    home.mkdir()
    (home / "models.json").write_text('{"providers": {"x": {"models": [}')
    done = tau("--no-session", "-m", "faux/echo", "hi")
    assert (done.returncode, done.stdout) == (0, "hi\n")
    assert done.stderr.startswith(f"tau: warning: {home / 'models.json'} is not valid JSON")
    unknown = tau("--no-session", "-m", "x/m", "hi")
    assert unknown.returncode == 2 and "unknown provider 'x'" in unknown.stderr


def test_a_fifo_or_folder_as_models_json_never_hangs(tau: TauRunner, tmp_path: Path) -> None:
    home = tmp_path / "tau-home"
    home.mkdir()
    os.mkfifo(home / "models.json")
    done = tau("--no-session", "-m", "faux/echo", "hi", timeout=20)
    assert done.returncode == 0 and "models.json: not a regular file" in done.stderr
    (home / "models.json").unlink()
    (home / "models.json").mkdir()
    done = tau("--no-session", "-m", "faux/echo", "hi", timeout=20)
    assert done.returncode == 0 and "cannot read" in done.stderr


# --------------------------------------------------------------------------- RPC lines


def test_malformed_rpc_lines_each_get_an_error_and_the_process_goes_on(tmp_path: Path) -> None:
    client = RpcClient(tmp_path, "--model", "faux/echo")
    deep = b"[" * 100_000 + b"]" * 100_000  # past the JSON parser's recursion limit
    for raw in (b"\xff\xfe not utf-8", b"[1, 2]", b'"a string"', b"{", b"null", deep):
        client.send(raw)
        answer = client.wait_for(lambda d: d.get("type") == "response")
        assert answer["command"] == "parse" and answer["success"] is False, raw
    bad = [
        ({"id": [1], "type": "prompt", "message": 7}, '"message" must be a non-empty string'),
        ({"id": {"x": 1}, "type": "steer", "message": ""}, '"message" must be a non-empty string'),
        ({"id": 3, "type": "prompt", "message": "hi", "images": [1]}, '"images"[0] must be {'),
        ({"id": 3, "type": "prompt", "message": "hi", "images": {"a": 1}}, '"images" must be a'),
        ({"id": 4, "type": "set_model"}, '"provider" must be a non-empty string'),
        ({"id": 5, "type": "compact", "customInstructions": 5}, '"customInstructions" must be'),
        (
            {"id": 6, "type": "export_html", "outputPath": "/nonexistent/x.html"},
            "is outside the working directory",
        ),
        ({"id": 7, "type": 42}, "unknown command 42"),
        ({"id": 8}, "unknown command None"),
    ]
    for command, problem in bad:
        answer = client.call(command)
        assert answer["id"] == command["id"], "the id comes back as it was sent"
        assert answer["success"] is False and problem in answer["error"], answer
    # A line longer than the limit is refused without reading it into a command.
    client.send(b"x" * (MAX_LINE + 10))
    too_long = client.wait_for(lambda d: d.get("type") == "response")
    assert "over 16777216 bytes" in too_long["error"]
    assert client.call({"id": 9, "type": "prompt", "message": "still here"})["success"]
    assert (
        client.wait_for(lambda d: d.get("type") == "agent_end")["messages"][-1]["content"][0][
            "text"
        ]
        == "still here"
    )
    assert client.close() == 0


def test_an_export_never_overwrites_a_file_that_is_not_a_tau_export(tmp_path: Path) -> None:
    # An RPC client (or a user's /export or `tau sessions export -o`) names a file that holds
    # something else, or a link to it: refused, and the file is left as it was.
    precious = tmp_path / "passwd"
    precious.write_text("root:x:0:0:root:/root:/bin/bash\n")
    link = tmp_path / "link.html"
    link.symlink_to(precious)
    # --allow-path: the export path policy lets the client name these; the overwrite check holds.
    client = RpcClient(tmp_path, "--model", "faux/echo", "--allow-path", str(tmp_path))
    assert client.call({"id": 1, "type": "prompt", "message": "hello"})["success"]
    client.wait_for(lambda d: d.get("type") == "agent_end")
    for number, target in enumerate((precious, link), start=2):
        answer = client.call({"id": number, "type": "export_html", "outputPath": str(target)})
        assert answer["success"] is False and "refusing to overwrite" in answer["error"], answer
    assert precious.read_text() == "root:x:0:0:root:/root:/bin/bash\n"
    # An earlier export under that name is replaced, as a user re-exporting expects.
    page = tmp_path / "page.html"
    for number in (4, 5):
        answer = client.call({"id": number, "type": "export_html", "outputPath": str(page)})
        assert answer["success"] is True, answer
    assert page.read_text().startswith("<!DOCTYPE html>")
    assert not list(tmp_path.glob(".*.tau-export")), "no temporary file is left behind"
    assert client.close() == 0


# --------------------------------------------------------------------------- session folders


def test_a_sessions_folder_that_is_a_file_does_not_stop_a_run(
    tau: TauRunner, tmp_path: Path
) -> None:
    home = tmp_path / "tau-home"
    home.mkdir()
    (home / "sessions").write_text("not a folder")
    done = tau("-m", "faux/echo", "hi")
    assert (done.returncode, done.stdout) == (0, "hi\n")
    assert "tau: warning: the session is not being saved: cannot create" in done.stderr
    assert done.stderr.count("warning") == 1, "said once, not for every message"
    assert tau("sessions").returncode == 0
    again = tau("-c", "-m", "faux/echo", "hi")
    assert again.returncode == 0 and "no earlier session" in again.stderr


def test_things_that_are_not_sessions_are_listed_never_resumed(
    tau: TauRunner, tmp_path: Path
) -> None:
    assert tau("-m", "faux/echo", "the real one").returncode == 0
    folder = tmp_path / "tau-home" / "sessions" / directory_key((tmp_path / "work").resolve())
    os.mkfifo(folder / "fifo.jsonl")
    (folder / "folder.jsonl").mkdir()
    (folder / "binary.jsonl").write_bytes(b"\x00\xff" * 100)
    (folder / "other.jsonl").write_text('{"type": "not-a-session"}\n')
    listing = tau("sessions", timeout=20)
    assert listing.returncode == 0
    assert "the real one" in listing.stdout and "(not a regular file)" in listing.stdout
    assert "(not a session file)" in listing.stdout
    again = tau("-c", "-m", "faux/echo", "and again", timeout=20)
    assert again.returncode == 0 and again.stderr.startswith("resumed 2 messages")


def test_hostile_compaction_entries_still_load(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    session = Session.open(path)
    session.record_message(UserMessage("first"))
    session.record_message(AssistantMessage([text("one")], api="faux", provider="faux", model="m"))
    lines = path.read_text().splitlines()
    leaf = json.loads(lines[-1])["id"]
    hostile = [
        {
            "type": "compaction",
            "id": "c0000001",
            "parentId": leaf,
            "timestamp": "yesterday",
            "summary": ["not", "text"],
            "firstKeptEntryId": "nowhere",
            "tokensBefore": "many",
            "details": {"readFiles": "a.py", "modifiedFiles": [1, "b.py"]},
        },
        {
            "type": "message",
            "id": "m0000002",
            "parentId": "c0000001",
            "timestamp": "2026-01-01T00:00:00.000Z",
            "message": {"role": "user", "content": "after"},
        },
    ]
    path.write_text("\n".join([*lines, *(json.dumps(e) for e in hostile)]) + "\n")
    warnings: list[str] = []
    resumed = Session.open(path, on_warning=warnings.append)
    summary, after = resumed.messages
    assert summary.role == "compactionSummary" and summary.tokens_before == 0  # type: ignore[union-attr]
    assert summary.modified_files == ["b.py"] and summary.read_files == []  # type: ignore[union-attr]
    assert isinstance(after, UserMessage) and after.content == "after"
    assert any("first kept entry 'nowhere' is not on the branch" in w for w in warnings)


def test_markup_in_a_conversation_is_text_in_the_export() -> None:
    call = tool_call("bash", {"command": "echo '<script>alert(1)</script>'"})
    messages = [
        UserMessage("<img src=x onerror=alert(1)>"),
        AssistantMessage(
            [text("</div><script>x()</script>"), call], api="f", provider="f", model="m"
        ),
        ToolResultMessage(call.id, "bash", [text("</pre></details><script>y()</script>")]),
    ]
    page = to_html(messages, "<title>")
    assert "<script>" not in page and "<img" not in page
    assert page.count("&lt;script&gt;") == 3 and "&lt;title&gt;" in page


def test_a_resumed_session_whose_model_is_gone_falls_back_with_a_warning(
    tau: TauRunner, script, tmp_path: Path
) -> None:
    model = script([{"text": "from the script"}])
    assert tau("--model", model, "hi").stdout == "from the script\n"
    Path(model.removeprefix("faux/")).unlink()
    home = tmp_path / "tau-home"
    (home / "config.json").write_text('{"model": "faux/echo"}')
    again = tau("-c", "still there?")
    assert again.returncode == 0, again.stderr
    assert again.stdout == "still there?\n", "the default model answered"
    assert "the session's model faux/" in again.stderr and "cannot be used here" in again.stderr


def test_resume_picker_of_a_closed_terminal_input(tmp_path: Path) -> None:
    """``tau -r`` whose stdin is not a terminal refuses at once (never waits for input)."""
    work = tmp_path / "work"
    work.mkdir()
    done = subprocess.run(
        [sys.executable, "-m", "tau.cli", "-r", "-m", "faux/echo"],
        cwd=work,
        env=clean_env(tmp_path),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 2 and "--resume picks from a list on a terminal" in done.stderr
