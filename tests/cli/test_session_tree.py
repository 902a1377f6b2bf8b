"""Sessions as a tree: a file pi writes (v3, with a branch, a branch summary, a name, a label
and a custom entry) opens in tau; a file tau writes, branched with /tree and forked, keeps to
pi's format; the tree drawn by ``tau sessions show --tree``; /tree, /fork, /name and /resume in
the interactive session."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from tau.ai import AssistantMessage, TextContent, UserMessage
from tau.cli.session import BRANCH_SUMMARY_PREFIX, Session
from tau.cli.session_tree import draw, path_to
from tests.cli.terminal import Terminal


def _assistant(text: str) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "api": "anthropic-messages",
        "provider": "anthropic",
        "model": "claude-sonnet-4-5",
        "usage": {
            "input": 10,
            "output": 5,
            "cacheRead": 0,
            "cacheWrite": 0,
            "totalTokens": 15,
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
        },
        "stopReason": "stop",
        "timestamp": 1733234401000,
    }


def _user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text, "timestamp": 1733234400000}


# As pi's docs/session.md writes each entry type: the first branch asks about A, then the user
# went back to the first answer (/tree, with a summary) and asked about B.
PI_FILE = [
    {
        "type": "session",
        "version": 3,
        "id": "5f0c1a52-3c1f-4b5c-9d56-2d1b2f0f7a11",
        "timestamp": "2024-12-03T14:00:00.000Z",
        "cwd": "/work/project",
    },
    {
        "type": "model_change",
        "id": "a0000001",
        "parentId": None,
        "timestamp": "2024-12-03T14:00:00.500Z",
        "provider": "anthropic",
        "modelId": "claude-sonnet-4-5",
    },
    {
        "type": "message",
        "id": "a1b2c3d4",
        "parentId": "a0000001",
        "timestamp": "2024-12-03T14:00:01.000Z",
        "message": _user("Hello"),
    },
    {
        "type": "message",
        "id": "b2c3d4e5",
        "parentId": "a1b2c3d4",
        "timestamp": "2024-12-03T14:00:02.000Z",
        "message": _assistant("Hi!"),
    },
    {
        "type": "message",
        "id": "c3d4e5f6",
        "parentId": "b2c3d4e5",
        "timestamp": "2024-12-03T14:00:03.000Z",
        "message": _user("Try approach A"),
    },
    {
        "type": "message",
        "id": "d4e5f6a7",
        "parentId": "c3d4e5f6",
        "timestamp": "2024-12-03T14:00:04.000Z",
        "message": _assistant("A failed."),
    },
    {
        "type": "branch_summary",
        "id": "e5f6a7b8",
        "parentId": "b2c3d4e5",
        "timestamp": "2024-12-03T14:05:00.000Z",
        "fromId": "d4e5f6a7",
        "summary": "Approach A failed on the parser.",
    },
    {
        "type": "label",
        "id": "f6a7b8c9",
        "parentId": "e5f6a7b8",
        "timestamp": "2024-12-03T14:05:01.000Z",
        "targetId": "b2c3d4e5",
        "label": "checkpoint",
    },
    {
        "type": "custom",
        "id": "a7b8c9d0",
        "parentId": "f6a7b8c9",
        "timestamp": "2024-12-03T14:05:02.000Z",
        "customType": "my-ext",
        "data": {"count": 1},
    },
    {
        "type": "session_info",
        "id": "b8c9d0e1",
        "parentId": "a7b8c9d0",
        "timestamp": "2024-12-03T14:05:03.000Z",
        "name": "Parser work",
    },
    {
        "type": "message",
        "id": "c9d0e1f2",
        "parentId": "b8c9d0e1",
        "timestamp": "2024-12-03T14:06:00.000Z",
        "message": _user("Try approach B"),
    },
    {
        "type": "message",
        "id": "d0e1f2a3",
        "parentId": "c9d0e1f2",
        "timestamp": "2024-12-03T14:06:01.000Z",
        "message": _assistant("B works."),
    },
]


def _texts(messages: list[Any]) -> list[str]:
    out = []
    for message in messages:
        content = message.content
        out.append(content if isinstance(content, str) else "".join(b.text for b in content))
    return out


def test_a_pi_file_opens_in_tau(tmp_path: Path) -> None:
    path = tmp_path / "pi.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in PI_FILE))
    session = Session.open(path, on_warning=pytest.fail)
    texts = _texts(session.messages)
    assert texts[:2] == ["Hello", "Hi!"]
    assert texts[2].startswith(BRANCH_SUMMARY_PREFIX) and "Approach A failed" in texts[2]
    assert texts[3:] == ["Try approach B", "B works."]
    assert session.name == "Parser work"
    assert session.custom_entries == [("my-ext", {"count": 1})]
    assert session.model == "anthropic/claude-sonnet-4-5"
    lines = draw(session.entries(), session.leaf)
    assert lines[0] == "a0000001 model: anthropic/claude-sonnet-4-5"
    assert "├─ c3d4e5f6 user: Try approach A" in lines
    assert "│  d4e5f6a7 assistant: A failed." in lines
    assert "└─ e5f6a7b8 branch summary: Approach A failed on the parser." in lines
    assert lines[-1] == "   d0e1f2a3 assistant: B works.  ← here"
    # Going back to the first branch: its context, no summary in it.
    session.checkout(path_to(session.entries(), "d4e5f6a7"))
    assert _texts(session.messages) == ["Hello", "Hi!", "Try approach A", "A failed."]


ENTRY_FIELDS = {
    "message": {"message"},
    "model_change": {"provider", "modelId"},
    "thinking_level_change": {"thinkingLevel"},
    "compaction": {"summary", "firstKeptEntryId", "tokensBefore"},
    "branch_summary": {"fromId", "summary"},
    "custom": {"customType"},
    "session_info": {"name"},
}


def check_pi_format(path: Path) -> list[dict[str, Any]]:
    """The entries of ``path``, each checked against pi's session format (docs/session.md)."""
    entries = [json.loads(line) for line in path.read_text().splitlines()]
    header = entries[0]
    assert header["type"] == "session" and header["version"] == 3
    assert {"id", "timestamp", "cwd"} <= header.keys()
    ids: set[str] = set()
    for entry in entries[1:]:
        assert re.fullmatch(r"[0-9a-f]{8}", entry["id"]), entry
        assert entry["parentId"] is None or entry["parentId"] in ids, entry
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", entry["timestamp"])
        assert ENTRY_FIELDS[entry["type"]] <= entry.keys(), entry
        if entry["type"] == "message":
            message = entry["message"]
            assert message["role"] in ("user", "assistant", "toolResult")
            assert isinstance(message["timestamp"], int)
            if message["role"] == "assistant":
                assert {"provider", "model", "usage", "stopReason", "api"} <= message.keys()
        ids.add(entry["id"])
    return entries


def _answer(text: str) -> AssistantMessage:
    return AssistantMessage([TextContent(text)], api="faux", provider="faux", model="echo")


def _tau_session(tmp_path: Path) -> Session:
    session = Session.create(tmp_path / "sessions")
    session.record_model("faux", "echo")
    for question in ("first", "second"):
        session.record_message(UserMessage(question))
        session.record_message(_answer(f"answer to {question}"))
    return session


def test_a_tau_file_keeps_to_pis_format_through_branch_and_fork(tmp_path: Path) -> None:
    from tau.cli.session_tree import fork_file

    session = _tau_session(tmp_path)
    entries = session.entries()
    first_answer = next(
        e["id"]
        for e in entries
        if e.get("type") == "message" and e["message"]["role"] == "assistant"
    )
    session.checkout(path_to(entries, first_answer))
    session.record_branch_summary(entries[-1]["id"], "The second question was answered.")
    session.record_name("tree test")
    session.record_message(UserMessage("another second"))
    session.record_message(_answer("another answer"))
    written = check_pi_format(session.path)
    assert sum(1 for e in written if e.get("parentId") == first_answer) == 2  # a branch point
    again = Session.open(session.path, on_warning=pytest.fail)
    assert _texts(again.messages)[-2:] == ["another second", "another answer"]
    assert again.name == "tree test"
    forked = fork_file(again, path_to(again.entries(), again.leaf or ""))
    header = check_pi_format(forked)[0]
    assert header["parentSession"] == str(session.path)
    assert _texts(Session.open(forked).messages) == _texts(again.messages)


def test_sessions_show_draws_the_tree(tau, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "pi.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in PI_FILE))
    done = tau("sessions", "show", str(path), "--tree")
    assert done.returncode == 0, done.stderr
    assert "├─ c3d4e5f6 user: Try approach A" in done.stdout
    assert done.stdout.rstrip().endswith("d0e1f2a3 assistant: B works.  ← here")


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pty")
def test_tree_fork_name_and_resume_in_the_session(tmp_path: Path) -> None:
    term = Terminal.scripted(tmp_path, [{"echo": True}] * 6)
    term.wait("/help for commands")
    term.wait_prompt()
    for question in ("question one", "question two"):
        term.send(question + "\r")
        term.wait_count(question, 2)
        term.wait_prompt()
    term.send("/tree\r")
    match = term.wait_match(r"([0-9a-f]{8}) assistant: question one")
    first_answer = match.group(1)
    term.wait("assistant: question two  ← here")
    term.wait_prompt()
    term.send(f"/tree {first_answer}\r")
    term.wait(f"at {first_answer}: assistant: question one")
    term.wait_prompt()
    term.send("question three\r")
    term.wait_count("question three", 2)
    term.wait_prompt()
    term.send("/tree\r")
    term.wait("├─ ")
    term.wait("assistant: question three  ← here")
    term.wait_prompt()
    term.send("/name branching\r")
    term.wait("name: branching")
    term.wait_prompt()
    term.send("/fork\r")
    term.wait("forked into")
    term.wait("(6 entries)")
    term.wait_prompt()
    term.send("/resume\r")
    term.wait_match(r"  2  [0-9a-f]{8}  question one")
    term.wait_prompt()
    term.send("/resume 2\r")
    term.wait("resumed ")
    term.wait_match(r"\.jsonl: \d+ messages")
    term.wait_prompt()
    assert term.exit() == 0
    files = sorted((tmp_path / "tau-home" / "sessions").rglob("*.jsonl"))
    assert len(files) == 2
    for file in files:
        check_pi_format(file)


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pty")
def test_leaving_a_branch_with_a_summary(tmp_path: Path) -> None:
    responses = [
        {"text": "first answer"},
        {"text": "second answer"},
        {"text": "SUMMARY: the second question was answered."},
        {"echo": True},
    ]
    term = Terminal.scripted(tmp_path, responses)
    term.wait("/help for commands")
    term.wait_prompt()
    for question, answer in (("question one", "first answer"), ("question two", "second answer")):
        term.send(question + "\r")
        term.wait(answer)
        term.wait_prompt()
    term.send("/tree\r")
    first_answer = term.wait_match(r"([0-9a-f]{8}) assistant: first answer").group(1)
    term.wait_prompt()
    term.send(f"/tree {first_answer} summarize\r")
    term.wait("summarising the branch left…")
    term.wait(f"at {first_answer}")
    term.wait_prompt()
    term.send("question three\r")
    term.wait_count("question three", 2)
    term.wait_prompt()
    assert term.exit() == 0
    path = next((tmp_path / "tau-home" / "sessions").rglob("*.jsonl"))
    entries = check_pi_format(path)
    [summary] = [e for e in entries if e["type"] == "branch_summary"]
    assert summary["summary"] == "SUMMARY: the second question was answered."
    assert summary["parentId"] == first_answer
    # Resumed: the model reads the summary on the new branch, in pi's words.
    texts = _texts(Session.open(path).messages)
    assert texts[2].startswith(BRANCH_SUMMARY_PREFIX) and "SUMMARY: the second" in texts[2]
    assert texts[-2:] == ["question three", "question three"]
