"""The session's commands in the interactive terminal UI, read from the screen a person sees:
``/compact`` (and Ctrl-C during one), ``/session``, ``/model`` and ``/thinking`` with completion,
what ``-c`` shows on resuming, and what the session file records."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tau.cli.session_store import directory_key
from tests.cli.terminal import Terminal

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs a pty")


def _start(tmp_path: Path, terminal: Terminal) -> Terminal:
    terminal.wait("/help for commands")
    terminal.wait_prompt()
    return terminal


def _keep_little_when_compacting(tmp_path: Path) -> None:
    # The scripted model's window is 128k; keeping only the newest message makes the short
    # conversation below worth compacting.
    home = tmp_path / "tau-home"
    home.mkdir(exist_ok=True)
    (home / "config.json").write_text(json.dumps({"compaction": {"keepRecentTokens": 1}}))


def _entries(tmp_path: Path) -> list[dict[str, Any]]:
    folder = tmp_path / "tau-home" / "sessions" / directory_key((tmp_path / "work").resolve())
    [path] = folder.glob("*.jsonl")
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _ask(term: Terminal, prompt: str, answer: str) -> None:
    term.send(prompt + "\r")
    term.wait(answer)
    term.wait_prompt()


def test_compact_session_model_and_thinking_then_resume(tmp_path: Path) -> None:
    _keep_little_when_compacting(tmp_path)
    responses = [
        {"text": "The first answer."},
        {"text": "The second answer."},
        {"text": "SUMMARY: two questions were answered."},
    ]
    term = _start(tmp_path, Terminal.scripted(tmp_path, responses))
    # Long enough that the summary is smaller (a summary that is not is rejected).
    first = "question one" + ", asked at some length" * 12
    _ask(term, first, "The first answer.")
    _ask(term, "question two", "The second answer.")

    term.send("/compact keep the numbers\r")
    term.wait_match(r"compacted: \d+ messages summarised: [\d,]+ → [\d,]+ tokens")
    term.wait_prompt()
    term.send("/session\r")
    term.wait("messages: 2 user, 2 assistant, 0 tool results")
    term.wait_prompt()

    # /help and the completion menu list the session's commands.
    term.send("/help\r")
    for usage in ("/new", "/session", "/copy", "/export [FILE]", "/compact [INSTRUCTIONS]"):
        term.wait(usage)
    term.wait_prompt()
    term.send("/thi")
    term.wait("show or set the reasoning level")  # the menu, with the command's help
    term.send("\t")
    term.wait(lambda: term.cursor_line() == "> /thinking")
    term.send(" hi")
    term.send("\t")
    term.wait(lambda: term.cursor_line() == "> /thinking high")
    term.send("\r")
    term.wait("thinking: high (this model does not reason)")
    term.wait_prompt()
    term.send("/model faux/ec")
    term.wait(lambda: "faux/echo" in term.text().split("/model faux/ec")[-1])
    term.send("\t")
    term.wait(lambda: term.cursor_line() == "> /model faux/echo")
    term.send("\r")
    term.wait("model: faux/echo (Faux echo")
    # The status line follows the switch, and the next turn is the new model's.
    term.wait_match(r"faux/echo · \d+% of 128k context")
    term.wait_prompt()
    _ask(term, "say this back", "say this back\n")
    assert term.exit() == 0

    entries = _entries(tmp_path)
    [compaction] = [e for e in entries if e["type"] == "compaction"]
    assert compaction["summary"] == "SUMMARY: two questions were answered."
    models = [e["modelId"] for e in entries if e["type"] == "model_change"]
    assert models[0].endswith("script.json") and models[-1] == "echo"
    levels = [e["thinkingLevel"] for e in entries if e["type"] == "thinking_level_change"]
    assert levels[-1:] == ["high"]
    prompts = [
        e["message"]["content"] for e in entries if e.get("message", {}).get("role") == "user"
    ]
    assert [p if isinstance(p, str) else p[0]["text"] for p in prompts] == [
        first,
        "question two",
        "say this back",
    ]

    # -c: the model and the level come back, with what was loaded and the last exchange.
    again = _start(tmp_path, Terminal(tmp_path, ["-c"]))
    again.wait_match(r"resumed \d+ messages · faux/echo")
    again.wait("> say this back")
    again.wait_match(r"faux/echo · \d+% of 128k context")
    again.send("/thinking\r")
    again.wait("thinking: high")
    again.wait_prompt()
    assert again.exit() == 0


def test_ctrl_c_aborts_a_compaction_and_the_session_goes_on(tmp_path: Path) -> None:
    _keep_little_when_compacting(tmp_path)
    slow_summary = {"text": "a summary that takes its time " * 20, "delay": 0.1}
    responses = [{"text": "The first answer."}, {"text": "Second."}, slow_summary]
    term = _start(tmp_path, Terminal.scripted(tmp_path, responses))
    _ask(term, "question one", "The first answer.")
    _ask(term, "question two", "Second.")
    term.send("/compact\r")
    term.wait("compacting…")
    term.send("\x03")
    term.wait("[aborting — Ctrl-C again to exit]")
    term.wait("/compact: aborted")
    term.wait_prompt()
    term.send("/session\r")
    # Nothing was compacted: the context still holds all four messages.
    term.wait("(4 in the context)")
    term.wait_prompt()
    assert term.exit() == 0
    assert not [e for e in _entries(tmp_path) if e["type"] == "compaction"]
