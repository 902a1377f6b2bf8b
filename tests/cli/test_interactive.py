"""The interactive session under a pseudo-terminal, read from the screen a person sees: prompt,
steering, follow-up, Ctrl-C, multi-line input and paste, completion, attachments, status line."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.cli.terminal import Terminal

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs a pty")


def _start(tmp_path: Path, responses: list[dict[str, Any]], *args: str, **options: Any) -> Terminal:
    term = Terminal.scripted(tmp_path, responses, *args, **options)
    term.wait("/help for commands")
    term.wait_prompt()
    return term


def _user_texts(session: Path) -> list[str]:
    texts = []
    for line in session.read_text(encoding="utf-8").splitlines():
        message = json.loads(line).get("message") or {}
        if message.get("role") == "user":
            content = message["content"]
            texts.append(content if isinstance(content, str) else content[0]["text"])
    return texts


def test_prompt_answer_usage_and_status_line(tmp_path: Path) -> None:
    term = _start(tmp_path, [{"text": "Hi there, human."}])
    term.send("hello\r")
    term.wait("Hi there, human.")
    term.wait_prompt()
    # The user's message stays in the scrollback above the answer.
    lines = term.lines()
    assert lines.index("> hello") < next(i for i, x in enumerate(lines) if "Hi there" in x)
    # The status line: model, context share, tokens, cost.
    term.wait_match(r"faux/\S*script\.json · \d+% of 128k context · \d+ tokens · \$0\.0000")
    term.send("/usage\r")
    term.wait_match(r"last run: \d+ input \+ \d+ output tokens, \$0\.0000, \d+\.\ds, 1 turn\(s\)")
    assert term.exit() == 0


def test_typing_during_a_run_is_not_garbled_and_steers_it(tmp_path: Path) -> None:
    slow = {"text": "Working on it, step by step, slowly...", "delay": 0.15, "chunk_size": 2}
    term = _start(tmp_path, [slow, {"echo": True}])
    term.send("start\r")
    term.wait("Work")
    term.send("change of pl")
    term.wait(lambda: term.cursor_line() == "… change of pl")
    # The answer goes on streaming above the line being typed, which stays as it was typed.
    term.wait("step by")
    assert term.cursor_line() == "… change of pl"
    assert not any("change of pl" in line for line in term.lines() if "Work" in line)
    term.send("an\r")
    term.wait("[steering queued]")
    # The steering message is delivered after the first answer: the next turn echoes it.
    term.wait("slowly...")
    term.wait_count("change of plan", 2)  # the message as sent, then the echo
    term.wait_prompt()
    assert term.exit() == 0


def test_follow_up_is_delivered_when_the_agent_would_stop(tmp_path: Path) -> None:
    slow = {"text": "First answer, taking its time.", "delay": 0.1, "chunk_size": 2}
    term = _start(tmp_path, [slow, {"echo": True}])
    term.send("go\r")
    term.wait("First")
    term.send("/follow and then this\r")
    term.wait("[follow-up queued]")
    term.wait("its time.")
    term.wait_count("and then this", 2)
    term.wait_prompt()
    assert term.exit() == 0


def test_ctrl_c_aborts_the_run_and_a_second_exits(tmp_path: Path) -> None:
    endless = {"text": "tick " * 400, "delay": 0.05, "chunk_size": 5}
    term = _start(tmp_path, [endless, {"text": "after abort"}])
    term.send("count forever\r")
    term.wait("tick tick")
    term.send("\x03")
    term.wait("[aborting")
    term.wait_match(r"\[aborted: [^\]]+\]")
    term.wait_prompt()
    # The session goes on after an abort.
    term.send("again\r")
    term.wait("after abort")
    term.wait_prompt()
    # Ctrl-C with text typed clears the line; on an empty line it asks for a second one.
    term.send("half a thought")
    term.wait(lambda: term.cursor_line() == "> half a thought")
    term.send("\x03")
    term.wait(lambda: term.cursor_line() == ">")
    term.send("\x03")
    term.wait("Ctrl-C again to exit")
    term.send("\x03")
    assert term.wait_exit() == 0


def test_mutating_tool_asks_first(tmp_path: Path) -> None:
    call = {"tool_calls": [{"name": "write", "arguments": {"path": "a.txt", "content": "hi"}}]}
    term = _start(
        tmp_path, [call, {"text": "declined ok"}, call, {"text": "written"}], "--tools", "write"
    )
    term.send("write a file\r")
    term.wait("Allow write a.txt? [y/N]")
    term.send("n\r")
    term.wait("declined to run write")
    term.wait("declined ok")
    term.wait_prompt()
    assert not (tmp_path / "work" / "a.txt").exists()
    term.send("write it now\r")
    term.wait_count("Allow write a.txt? [y/N]", 2)
    term.send("y\r")
    term.wait("written")
    term.wait_prompt()
    assert (tmp_path / "work" / "a.txt").read_text() == "hi"
    assert term.exit() == 0


def test_usage_counts_an_aborted_run(tmp_path: Path) -> None:
    endless = {"text": "tick " * 400, "delay": 0.05, "chunk_size": 5}
    term = _start(tmp_path, [endless])
    term.send("count forever\r")
    term.wait("tick tick tick")
    term.send("\x03")
    term.wait_match(r"\[aborted: [^\]]+\]")
    term.wait_prompt()
    term.send("/usage\r")
    # The prompt and what streamed before the abort were paid for: they are counted.
    found = term.wait_match(r"last run: (\d+) input \+ (\d+) output tokens")
    assert int(found.group(1)) > 0 and int(found.group(2)) > 0
    found = term.wait_match(r"session:  (\d+) input \+ (\d+) output tokens")
    assert int(found.group(1)) > 0 and int(found.group(2)) > 0
    assert term.exit() == 0


def test_a_paste_is_one_message_with_its_indentation(tmp_path: Path) -> None:
    session = tmp_path / "s.jsonl"
    term = _start(tmp_path, [{"text": "one"}, {"text": "two"}], "--session", str(session))
    pasted = "    def f():\n        return 1\n\nprint(f())"
    term.paste(pasted)
    term.wait(lambda: "print(f())" in term.cursor_line())
    term.send("\r")
    term.wait("one")
    term.wait_prompt()
    # Alt+Enter starts a new line; Enter sends both.
    term.send("first line\x1b\rsecond line")
    term.wait(lambda: term.cursor_line().strip() == "second line")
    term.send("\r")
    term.wait("two")
    term.wait_prompt()
    assert term.exit() == 0
    assert _user_texts(session) == [pasted, "first line\nsecond line"]


def test_completion_of_commands_and_paths(tmp_path: Path) -> None:
    work = tmp_path / "work"
    (work / "src").mkdir(parents=True)
    (work / "src" / "main.py").write_text("print('hi')\n")
    (work / "notes.txt").write_text("remember the milk\n")
    term = _start(tmp_path, [{"echo": True}])
    term.send("/us")
    term.wait("/usage  tokens")  # the menu, with each command's help
    term.send("\t")
    term.wait(lambda: term.cursor_line() == "> /usage")
    term.send("\r")
    term.wait("last run:")
    term.wait_prompt()
    term.send("look at @no")
    term.wait("notes.txt")
    term.send("\t")
    term.wait(lambda: term.cursor_line() == "> look at @notes.txt")
    term.send(" and @sr")
    term.wait("src/")
    term.send("\t")
    term.wait(lambda: term.cursor_line().endswith("@src/"))
    term.send("ma")
    term.wait(lambda: "main.py" in term.text().split("@src/ma")[-1])
    term.send("\t")
    term.wait(lambda: term.cursor_line().endswith("@src/main.py"))
    # Sent: both files are attached (the echo model repeats them).
    term.send("\r")
    term.wait("remember the milk")
    term.wait("print('hi')")
    term.wait_prompt()
    assert term.exit() == 0


def test_a_missing_attachment_is_an_error_and_the_text_comes_back(tmp_path: Path) -> None:
    term = _start(tmp_path, [{"echo": True}])
    term.send("see @missing.txt\r")
    term.wait("tau: cannot attach missing.txt: no such file")
    term.wait(lambda: term.cursor_line() == "> see @missing.txt")
    term.send("\x15")  # Ctrl-U: clear the line
    term.wait(lambda: term.cursor_line() == ">")
    assert term.exit() == 0


def test_markdown_is_rendered_and_the_spinner_waits_for_the_first_token(tmp_path: Path) -> None:
    answer = "Some **bold** words.\n\n```python\ndef f():\n    return 1\n```\n\nThe end."
    term = _start(tmp_path, [{"text": answer, "first_delay": 1.5}])
    term.send("show me\r")
    term.wait("waiting for the model")
    term.wait("The end.")
    term.wait_prompt()
    text = term.text()
    assert "Some bold words." in text and "**" not in text and "```" not in text
    assert " def f():" in text and "     return 1" in text
    assert "waiting for the model" not in "\n".join(term.screen.display)
    assert term.exit() == 0
