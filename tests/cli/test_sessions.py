"""Sessions without thinking about them: every run saved per directory, ``-c``, ``-r``,
``--session ID``, ``--no-session`` and ``tau sessions``, driven as a user would."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from tau.cli.session_store import directory_key
from tests.cli.conftest import TauRunner, clean_env


def _saved(tmp_path: Path) -> list[Path]:
    folder = tmp_path / "tau-home" / "sessions" / directory_key((tmp_path / "work").resolve())
    return sorted(folder.glob("*.jsonl")) if folder.is_dir() else []


def _entries(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _ids(tau: TauRunner) -> list[str]:
    return [line.split()[0] for line in tau("sessions").stdout.splitlines()]


def _spawn(tmp_path: Path, *args: str) -> Any:
    """``tau ARGS`` under a pseudo-terminal in ``tmp_path/work``."""
    import pexpect

    return pexpect.spawn(
        sys.executable,
        ["-m", "tau.cli", *args],
        cwd=str(tmp_path / "work"),
        env=clean_env(tmp_path, TERM="dumb"),
        encoding="utf-8",
        timeout=20,
    )


def test_every_run_is_saved_in_its_directorys_folder(tau: TauRunner, tmp_path: Path) -> None:
    assert tau("-m", "faux/echo", "remember 42").returncode == 0
    [path] = _saved(tmp_path)
    header, *entries = _entries(path)
    assert header["type"] == "session" and header["version"] == 3
    assert header["cwd"] == str((tmp_path / "work").resolve())
    assert path.stem.endswith(header["id"]), "the file is named by its session's id"
    assert [e["type"] for e in entries] == ["model_change", "message", "message"]
    assert tau("-m", "faux/echo", "another").returncode == 0
    assert len(_saved(tmp_path)) == 2, "each run without -c is a session of its own"


def test_no_session_saves_nothing(tau: TauRunner, tmp_path: Path) -> None:
    assert tau("--no-session", "-m", "faux/echo", "hi").stdout == "hi\n"
    assert _saved(tmp_path) == []


def test_continue_restores_the_model_and_thinking_level(tau: TauRunner, tmp_path: Path) -> None:
    assert tau("-m", "faux/echo", "--thinking", "high", "remember 42").returncode == 0
    again = tau("-c", "what was it?")  # no -m: the session's model answers
    assert (again.returncode, again.stdout) == (0, "what was it?\n"), again.stderr
    assert again.stderr == "resumed 2 messages · faux/echo\n"
    [path] = _saved(tmp_path)
    entries = _entries(path)[1:]
    assert [e["type"] for e in entries] == [
        "model_change",
        "thinking_level_change",
        *["message"] * 4,
    ]
    assert entries[1]["thinkingLevel"] == "high"
    state = tau("-c", "--mode", "rpc", input='{"id": 1, "type": "get_state"}\n')
    data = json.loads(state.stdout.splitlines()[0])["data"]
    assert (data["thinkingLevel"], data["model"]["id"], data["messageCount"]) == ("high", "echo", 4)
    # A level named on the command line wins, and the change is recorded.
    assert tau("-c", "--thinking", "off", "ok").returncode == 0
    last = [e for e in _entries(path) if e["type"] == "thinking_level_change"][-1]
    assert last["thinkingLevel"] == "off"


def test_continue_with_no_session_yet_starts_one(tau: TauRunner, tmp_path: Path) -> None:
    done = tau("-c", "-m", "faux/echo", "first")
    assert done.returncode == 0
    assert "no earlier session in this directory: starting a new one" in done.stderr
    assert len(_saved(tmp_path)) == 1


def test_resume_needs_a_terminal_and_says_what_to_do_instead(tau: TauRunner) -> None:
    assert tau("-m", "faux/echo", "hi").returncode == 0
    done = tau("-r", "more")
    assert done.returncode == 2
    assert "`tau sessions`" in done.stderr and "--session ID" in done.stderr


def test_resume_picks_from_a_numbered_list_on_a_terminal(tau: TauRunner, tmp_path: Path) -> None:
    import pexpect

    assert tau("-m", "faux/echo", "the older one").returncode == 0
    assert tau("-m", "faux/echo", "the newer one").returncode == 0
    child = _spawn(tmp_path, "-r", "-m", "faux/echo", "and then?")
    child.expect(r"1\. \w{8} .*the newer one")
    child.expect(r"2\. \w{8} .*the older one")
    child.expect(r"resume which\? \[1-2, Enter to cancel\] ")
    child.sendline("99")  # a typo asks again (issue 29)
    child.expect(r"no session number '99' \(1 to 2\)")
    child.expect(r"resume which\? \[1-2, Enter to cancel\] ")
    child.sendline("2")
    child.expect("resumed 2 messages · faux/echo")
    child.expect("and then\\?")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    older = next(p for p in _saved(tmp_path) if "the older one" in p.read_text())
    assert "and then?" in older.read_text()


def test_interactive_resume_shows_the_last_exchange(tau: TauRunner, tmp_path: Path) -> None:
    import pexpect

    assert tau("-m", "faux/echo", "remember 42").returncode == 0
    child = _spawn(tmp_path, "-c")
    child.expect("resumed 2 messages · faux/echo")
    child.expect("> remember 42\r\nremember 42")
    child.sendline("/exit")
    child.expect(pexpect.EOF)


def test_sessions_show_without_an_id_shows_the_latest(tau: TauRunner) -> None:
    nothing = tau("sessions", "show")
    assert nothing.returncode == 2 and "no saved session in this directory" in nothing.stderr
    assert tau("-m", "faux/echo", "the older one").returncode == 0
    assert tau("-m", "faux/echo", "the newer one").returncode == 0
    shown = tau("sessions", "show")
    assert shown.returncode == 0, shown.stderr
    assert "the newer one" in shown.stdout and "the older one" not in shown.stdout


def test_sessions_list_show_export_and_rm(tau: TauRunner, tmp_path: Path) -> None:
    assert tau("-m", "faux/echo", "first <b>prompt</b>").returncode == 0
    assert tau("-m", "faux/echo", "second prompt").returncode == 0
    listing = tau("sessions").stdout.splitlines()
    assert len(listing) == 2
    assert "second prompt" in listing[0] and "first <b>prompt</b>" in listing[1]
    assert all("2 msgs" in line and "faux/echo" in line for line in listing)
    assert tau("sessions", "list", "--all").stdout.count(str((tmp_path / "work").resolve())) == 2
    # As the README and the empty listing's hint write it: `tau sessions --all`.
    assert tau("sessions", "--all").stdout.count(str((tmp_path / "work").resolve())) == 2
    assert len(tau("sessions", "-n", "1").stdout.splitlines()) == 1
    older = _ids(tau)[1]
    shown = tau("sessions", "show", older)
    assert shown.returncode == 0
    assert "## User\n\nfirst <b>prompt</b>" in shown.stdout
    page = tmp_path / "s.html"
    done = tau("sessions", "export", older, "--html", "-o", str(page))
    assert done.returncode == 0, done.stderr
    html = page.read_text()
    assert html.startswith("<!DOCTYPE html>") and "first &lt;b&gt;prompt&lt;/b&gt;" in html
    assert "<b>prompt" not in html and "<script" not in html
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n")
    refused = tau("sessions", "export", older, "--md", "-o", str(notes))
    assert refused.returncode == 1 and "refusing to overwrite" in refused.stderr
    assert notes.read_text() == "my notes\n"
    markdown = tau("sessions", "export", older, "--md").stdout
    assert markdown.startswith("# tau session ")
    # --session takes an id (or its first characters) as well as a file.
    resumed = tau("--session", older[:6], "-m", "faux/echo", "third")
    assert resumed.stderr.startswith("resumed 2 messages")
    assert tau("sessions", "rm", older).returncode == 0
    assert len(tau("sessions").stdout.splitlines()) == 1
    missing = tau("sessions", "show", older)
    assert missing.returncode == 2 and f"no saved session {older!r}" in missing.stderr


def test_sessions_help_and_bad_ids(tau: TauRunner, tmp_path: Path) -> None:
    for args in (["sessions", "--help"], ["sessions", "export", "--help"]):
        done = tau(*args)
        assert done.returncode == 0 and done.stdout.startswith("usage: tau sessions")
    assert "no saved sessions in this directory" in tau("sessions").stderr
    short = tau("sessions", "show", "ab")
    assert short.returncode == 2 and "at least 4 characters" in short.stderr
    # --session FILE still names a file: an id that matches nothing starts a file of that name.
    unknown = tau("--session", "deadbeef", "-m", "faux/echo", "hi")
    assert unknown.returncode == 0
    assert "no saved session 'deadbeef'" in unknown.stderr and "the file deadbeef" in unknown.stderr
    assert (tmp_path / "work" / "deadbeef").is_file()
    assert tau("--session", "chat", "-m", "faux/echo", "hi").stderr == ""
    assert (tmp_path / "work" / "chat").is_file()


def test_an_attachment_is_saved_and_resumed_but_listed_as_typed(
    tau: TauRunner, tmp_path: Path
) -> None:
    (tmp_path / "work" / "notes.txt").write_text("THE FILE'S CONTENTS\n")
    assert tau("-m", "faux/echo", "summarise @notes.txt").returncode == 0
    [line] = tau("sessions").stdout.splitlines()
    assert line.endswith("summarise @notes.txt"), "what was typed, not the attached file"
    again = tau("-c", "and now?")
    assert again.returncode == 0 and again.stderr == "resumed 2 messages · faux/echo\n"
    shown = tau("sessions", "show", line.split()[0]).stdout
    assert '<file path="notes.txt">\nTHE FILE\'S CONTENTS\n</file>' in shown
    assert "and now?" in shown
