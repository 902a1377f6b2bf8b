"""Issue 24 item 7: the model's ``grep`` pattern cannot hang the run.

``(a+)+$`` against ``'a' * 34 + '!'`` backtracks for minutes in Python's ``re``; grep runs
patterns with RE2 (linear time), stops a call at its time limit with a notice, and stops at
once on abort although the tool runs in a thread.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

from tau.ai import AbortController, AbortedError
from tau.cli.tools import search

from .tool_calls import call, text_of, tool

CATASTROPHIC = "(a+)+$"
"""Exponential in Python's backtracking ``re``: 2**34 paths on the line below."""


def test_a_catastrophic_pattern_returns_at_once(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a" * 34 + "!\n" + "x\n")
    out = text_of(call(tool("grep", tmp_path), {"pattern": CATASTROPHIC}, deadline=20))
    assert out == "No matches found"
    (tmp_path / "b.txt").write_text("a" * 40 + "\n")
    out = text_of(call(tool("grep", tmp_path), {"pattern": CATASTROPHIC}, deadline=20))
    assert out == "b.txt:1: " + "a" * 40


def _lines_file(root: Path) -> None:
    # 8 M short lines: the whole-file pass finds "x\ny", so every line is then searched alone.
    (root / "big.txt").write_bytes(b"x\ny\n" * (4 * 1024 * 1024 - 1))


def _run_in_thread(root: Path, params: dict[str, Any], abort_after: float | None) -> Any:
    """The call as the agent makes it for a synchronous tool: in a worker thread."""
    grep = tool("grep", root)
    controller = AbortController()
    outcome: list[Any] = []

    def target() -> None:
        try:
            outcome.append(grep.execute("c1", params, controller.signal, lambda _: None))
        except BaseException as exc:
            outcome.append(exc)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    if abort_after is not None:
        time.sleep(abort_after)
        controller.abort()
    thread.join(30)
    assert not thread.is_alive(), "grep kept running after abort"
    return outcome[0]


def test_abort_ends_a_long_search_in_its_thread(tmp_path: Path) -> None:
    _lines_file(tmp_path)
    outcome = _run_in_thread(tmp_path, {"pattern": "x\\ny", "limit": 10}, abort_after=0.3)
    assert isinstance(outcome, AbortedError)


def test_a_search_stops_at_its_time_limit_with_a_notice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(search, "GREP_TIME_LIMIT", 0.2)
    _lines_file(tmp_path)
    out = _run_in_thread(tmp_path, {"pattern": "x\\ny"}, abort_after=None)
    assert (
        out
        == "No matches found\n\n[Search stopped after 0.2 s: narrow the path or glob for the rest]"
    )


def test_an_unsupported_pattern_says_which_syntax_grep_takes(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("abab\n")
    with pytest.raises(ValueError, match=r"invalid escape sequence: \\1 \(RE2 syntax"):
        call(tool("grep", tmp_path), {"pattern": r"(ab)\1"})
    out = text_of(call(tool("grep", tmp_path), {"pattern": r"(ab)\1", "literal": True}))
    assert out == "No matches found"
    out = text_of(call(tool("grep", tmp_path), {"pattern": "ABAB", "ignoreCase": True}))
    assert out == "a.txt:1: abab"
