"""The interactive session under a pseudo-terminal: prompt, steering, follow-up, Ctrl-C."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pexpect
import pytest

from tests.cli.conftest import spawn_tau

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs a pty")


def _spawn(tmp_path: Path, responses: list[dict], *args: str) -> pexpect.spawn:
    child = spawn_tau(tmp_path, responses, *args)
    child.expect_exact("/help for commands")
    child.expect_exact("> ")
    return child


def _exit(child: pexpect.spawn) -> None:
    child.sendline("/exit")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_prompt_answer_and_usage(tmp_path: Path) -> None:
    child = _spawn(tmp_path, [{"text": "Hi there, human."}])
    child.sendline("hello")
    child.expect_exact("Hi there, human.")
    child.expect_exact("> ")
    child.sendline("/usage")
    child.expect(r"last run: \d+ input \+ \d+ output tokens, \$0\.0000, \d+\.\ds, 1 turn\(s\)")
    _exit(child)


def test_typing_during_a_run_steers_it(tmp_path: Path) -> None:
    slow = {"text": "Working on it, step by step, slowly...", "delay": 0.15, "chunk_size": 2}
    child = _spawn(tmp_path, [slow, {"echo": True}])
    child.sendline("start")
    child.expect_exact("Work")
    child.sendline("change of plan")
    child.expect_exact("[steering queued]")
    # The steering message is delivered after the first answer: the next turn echoes it.
    child.expect_exact("slowly...")
    child.expect_exact("change of plan")
    child.expect_exact("> ")
    _exit(child)


def test_follow_up_is_delivered_when_the_agent_would_stop(tmp_path: Path) -> None:
    slow = {"text": "First answer, taking its time.", "delay": 0.1, "chunk_size": 2}
    child = _spawn(tmp_path, [slow, {"echo": True}])
    child.sendline("go")
    child.expect_exact("First")
    child.sendline("/follow and then this")
    child.expect_exact("[follow-up queued]")
    child.expect_exact("its time.")
    child.expect_exact("and then this")
    _exit(child)


def test_ctrl_c_aborts_the_run_and_a_second_exits(tmp_path: Path) -> None:
    endless = {"text": "tick " * 400, "delay": 0.05, "chunk_size": 5}
    child = _spawn(tmp_path, [endless, {"text": "after abort"}])
    child.sendline("count forever")
    child.expect_exact("tick tick")
    child.sendintr()
    child.expect_exact("[aborting")
    child.expect(r"\[aborted: [^\]]+\]")
    child.expect_exact("> ")
    # The session goes on after an abort.
    child.sendline("again")
    child.expect_exact("after abort")
    child.expect_exact("> ")
    child.sendintr()
    child.expect_exact("Ctrl-C again to exit")
    child.expect_exact("> ")
    # CPython's readline misses a SIGINT that lands before it starts waiting for input (the
    # interrupt then waits for the next key); give it a moment to get there.
    time.sleep(0.2)
    child.sendintr()
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_mutating_tool_asks_first(tmp_path: Path) -> None:
    call = {"tool_calls": [{"name": "write", "arguments": {"path": "a.txt", "content": "hi"}}]}
    child = _spawn(
        tmp_path, [call, {"text": "declined ok"}, call, {"text": "written"}], "--tools", "write"
    )
    child.sendline("write a file")
    child.expect_exact("Allow write a.txt? [y/N]")
    child.sendline("n")
    child.expect_exact("declined to run write")
    child.expect_exact("declined ok")
    child.expect_exact("> ")
    assert not (tmp_path / "work" / "a.txt").exists()
    child.sendline("write it now")
    child.expect_exact("Allow write a.txt? [y/N]")
    child.sendline("y")
    child.expect_exact("written")
    child.expect_exact("> ")
    assert (tmp_path / "work" / "a.txt").read_text() == "hi"
    _exit(child)


def test_usage_counts_an_aborted_run(tmp_path: Path) -> None:
    endless = {"text": "tick " * 400, "delay": 0.05, "chunk_size": 5}
    child = _spawn(tmp_path, [endless])
    child.sendline("count forever")
    child.expect_exact("tick tick tick")
    child.sendintr()
    child.expect(r"\[aborted: [^\]]+\]")
    child.expect_exact("> ")
    child.sendline("/usage")
    # The prompt and what streamed before the abort were paid for: they are counted.
    child.expect(r"last run: (\d+) input \+ (\d+) output tokens")
    assert int(child.match.group(1)) > 0 and int(child.match.group(2)) > 0
    child.expect(r"session:  (\d+) input \+ (\d+) output tokens")
    assert int(child.match.group(1)) > 0 and int(child.match.group(2)) > 0
    _exit(child)
