"""Items 5-10 of issue 17 and the session parts of issue 18 (items 3 and 11): the ``--session``
file never loses an entry, never stops saving, and never hangs a resume.

Each test makes the fault on disk (or in a message) first, then checks the clean behaviour:
empty files start a session, unserialisable messages are reduced (or recorded as an error
entry), two writers keep one chain, damaged lines are skipped with a warning naming the file and
line and repaired at the next save, parent loops are broken, and undecodable files are named.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pytest

from tau.agent import AgentToolResult, agent_tool
from tau.ai.core.types import (
    AssistantMessage,
    TextContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from tau.ai.providers.faux import FauxResponse, faux_model, text, tool_call
from tau.cli.app import App, Settings
from tau.cli.session import Session, SessionError
from tau.cli.tools import Workspace
from tests.cli.conftest import clean_env

from .tool_calls import make_fifo, unblock_fifo


def _assistant(words: str, *calls: ToolCall) -> AssistantMessage:
    return AssistantMessage([text(words), *calls], api="faux", provider="faux", model="faux-model")


def _entries(path: Path) -> list[dict[str, Any]]:
    raw = path.read_bytes()
    raw.decode("utf-8")  # strict: the whole file is UTF-8
    return [json.loads(line) for line in raw.splitlines()]


def _texts(session: Session) -> list[str]:
    out = []
    for message in session.messages:
        content = message.content  # type: ignore[union-attr]
        if isinstance(content, str):
            out.append(content)
        else:
            out.append("".join(b.text for b in content if isinstance(b, TextContent)))
    return out


def _open(path: Path) -> tuple[Session, list[str]]:
    warnings: list[str] = []
    return Session.open(path, on_warning=warnings.append), warnings


def _write_pairs(path: Path, count: int) -> Session:
    session = Session.open(path)
    for i in range(count):
        session.record_message(UserMessage(f"question {i}"))
        session.record_message(_assistant(f"answer {i}"))
    return session


def _tau(tmp_path: Path, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """The CLI in a subprocess with a memory ceiling: a runaway resume fails, never swaps."""
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)

    def limit_memory() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (2 * 1024**3, 2 * 1024**3))

    return subprocess.run(
        [sys.executable, "-m", "tau.cli", *args],
        cwd=work,
        env=clean_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        preexec_fn=limit_memory,
    )


# --------------------------------------------------------------------------- item 5


def test_an_empty_file_is_a_new_session(tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.touch()
    session, warnings = _open(path)
    assert session.messages == [] and warnings == []
    session.record_message(UserMessage("hi"))
    session.record_message(_assistant("hello"))
    header, *entries = _entries(path)
    assert header["type"] == "session" and header["version"] == 3
    assert [e["type"] for e in entries] == ["message", "message"]
    assert _texts(Session.open(path)) == ["hi", "hello"]


def test_an_empty_file_given_to_the_cli_is_resumable(tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.touch()
    first = _tau(tmp_path, "--model", "faux/echo", "--session", str(path), "one")
    assert first.returncode == 0, first.stderr
    second = _tau(tmp_path, "--model", "faux/echo", "--session", str(path), "two")
    assert second.returncode == 0, second.stderr
    assert _texts(Session.open(path)) == ["one", "one", "two", "two"]
    assert [e["type"] for e in _entries(path)].count("session") == 1


# --------------------------------------------------------------------------- item 6


def _deep(levels: int) -> dict[str, Any]:
    value: dict[str, Any] = {"leaf": True}
    for _ in range(levels):
        value = {"down": value}
    return value


def test_unserialisable_details_are_reduced_and_saving_goes_on(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    session = Session.open(path)
    call = ToolCall("c1", "probe", {"deep": _deep(10_000)})
    session.record_message(UserMessage("go"))
    session.record_message(_assistant("calling", call))
    details = {"tags": {"b", "a"}, "handle": object(), "score": float("nan"), "ok": 1}
    session.record_message(ToolResultMessage("c1", "probe", [text("done")], details=details))
    for i in range(5):
        session.record_message(UserMessage(f"later {i}") if i % 2 == 0 else _assistant(f"a{i}"))
    resumed, warnings = _open(path)
    assert warnings == []
    assert len(resumed.messages) == 8, "every message must be saved"
    saved = resumed.messages[2]
    assert isinstance(saved, ToolResultMessage)
    assert saved.details["ok"] == 1 and saved.details["tags"] == ["a", "b"]
    assert saved.details["handle"].startswith("<object object at")
    assert saved.details["score"] == "nan"
    entries = _entries(path)
    notes = [e.get("note", "") for e in entries]
    assert any("message.details.tags: a set" in n for n in notes), notes
    assert any("message.content[1].arguments" in n and "deeper than" in n for n in notes), notes


@dataclass
class Scribble:  # an application message nobody registered: it cannot be serialised at all
    text: str
    role: Literal["scribble"] = "scribble"


def test_a_message_that_cannot_be_dumped_becomes_an_error_entry(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    session = Session.open(path)
    session.record_message(UserMessage("go"))
    session.record_message(_assistant("ok"))
    session.record_message(Scribble("lost?"))  # type: ignore[arg-type]
    session.record_message(UserMessage("after"))
    session.record_message(_assistant("still saving"))
    kinds = [(e["type"], e.get("customType")) for e in _entries(path)[1:]]
    assert kinds == [
        ("message", None),
        ("message", None),
        ("custom", "tau.unsaved_message"),
        ("message", None),
        ("message", None),
    ]
    error = _entries(path)[3]["data"]
    assert error["role"] == "scribble" and "register_message_type" in error["error"]
    assert _texts(Session.open(path)) == ["go", "ok", "after", "still saving"]


async def test_a_tool_with_set_details_does_not_poison_the_cli_session(tmp_path: Path) -> None:
    @agent_tool
    def tagger() -> AgentToolResult:
        """Returns tags."""
        return AgentToolResult([text("tagged")], {"tags": {"x"}})

    model = faux_model(
        [
            FauxResponse([tool_call("tagger", {}, id="t1")]),
            FauxResponse([text("first done")]),
            FauxResponse([text("second done")]),
        ]
    )
    path = tmp_path / "s.jsonl"
    settings = Settings(
        model=model, tool_names=[], workspace=Workspace(tmp_path), session=Session.open(path)
    )
    app = App(settings, None)
    app.agent.state.tools = [tagger]
    assert (await app.run("tag it")).text == "first done"  # type: ignore[union-attr]
    assert (await app.run("again")).text == "second done"  # type: ignore[union-attr]
    roles = [m.role for m in Session.open(path).messages]
    assert roles == ["user", "assistant", "toolResult", "assistant", "user", "assistant"]


# --------------------------------------------------------------- issue 18 item 3


def test_surrogates_never_corrupt_the_session(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    session = Session.open(path)
    session.record_message(UserMessage("caf\udce9"))  # what sys.argv holds for b"caf\xe9"
    session.record_message(_assistant("caf\udce9 is a word"))
    entries = _entries(path)
    assert [e["type"] for e in entries] == ["session", "message", "message"]
    assert _texts(Session.open(path)) == ["caf\ufffd", "caf\ufffd is a word"]


def test_a_non_utf8_prompt_through_the_cli_leaves_a_valid_session(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    work = tmp_path / "work"
    work.mkdir()
    prompt = os.fsdecode(b"caf\xe9")  # undecodable argv bytes arrive as a lone surrogate
    command = [sys.executable, "-m", "tau.cli", "--model", "faux/echo", "--session", str(path)]
    subprocess.run(
        [*command, prompt],
        cwd=work,
        env=clean_env(tmp_path),
        capture_output=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    entries = _entries(path)
    assert [e["type"] for e in entries].count("session") == 1
    resumed = Session.open(path)
    assert resumed.messages and resumed.messages[0].role == "user"


# --------------------------------------------------------------------------- item 7


def test_two_writers_keep_one_chain_and_a_resume_sees_every_entry(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    _write_pairs(path, 1)
    first, second = Session.open(path), Session.open(path)  # both resume the same leaf
    first.record_message(UserMessage("from first"))
    second.record_message(UserMessage("from second"))
    first.record_message(_assistant("first answer"))
    second.record_message(_assistant("second answer"))
    assert _texts(Session.open(path)) == [
        "question 0",
        "answer 0",
        "from first",
        "from second",
        "first answer",
        "second answer",
    ]


_WRITER = """
import sys, time
from pathlib import Path
from tau.ai.core.types import AssistantMessage, TextContent, UserMessage
from tau.cli.session import Session

path, name = Path(sys.argv[1]), sys.argv[2]
session = Session.open(path)
# A barrier: both writers have read the file before either writes.
(path.parent / f"ready-{name}").touch()
deadline = time.monotonic() + 30
while len(list(path.parent.glob("ready-*"))) < 2 and time.monotonic() < deadline:
    time.sleep(0.01)
for i in range(40):
    session.record_message(UserMessage(f"{name} {i}"))
    session.record_message(AssistantMessage([TextContent(f"{name} reply {i}")], "faux", "faux", "m"))
"""


def test_two_processes_writing_at_once_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    _write_pairs(path, 1)
    env = clean_env(tmp_path)
    writers = [
        subprocess.Popen([sys.executable, "-c", _WRITER, str(path), name], env=env)
        for name in ("left", "right")
    ]
    for writer in writers:
        assert writer.wait(timeout=60) == 0
    texts = _texts(Session.open(path))
    assert len(texts) == 2 + 160
    for name in ("left", "right"):
        mine = [t for t in texts if t.startswith(f"{name} ") and "reply" not in t]
        assert mine == [f"{name} {i}" for i in range(40)]


# --------------------------------------------------------------------------- item 8


def _damage(path: Path, how: str) -> tuple[int, int]:
    """Damage a 3-pair session; returns (damaged line number, complete messages left)."""
    lines = path.read_bytes().splitlines(keepends=True)
    if how == "cut-last":
        lines[-1] = lines[-1][: len(lines[-1]) // 2]
        path.write_bytes(b"".join(lines))
        return len(lines), 5
    if how == "cut-middle":
        lines[3] = lines[3][: len(lines[3]) // 2] + b"\n"
        path.write_bytes(b"".join(lines))
        return 4, 5
    path.write_bytes(b"".join(lines) + b"\0" * 4096)  # a crash left the file padded
    return len(lines) + 1, 6


@pytest.mark.parametrize("how", ["cut-last", "cut-middle", "nul-padding"])
def test_damaged_lines_are_skipped_with_a_warning_and_repaired_at_the_next_save(
    tmp_path: Path, how: str
) -> None:
    path = tmp_path / "s.jsonl"
    _write_pairs(path, 3)
    line, left = _damage(path, how)
    original = path.read_bytes()
    session, warnings = _open(path)
    assert len(session.messages) == left
    assert any(w.startswith(f"{path}:{line}: ") for w in warnings), warnings
    assert path.read_bytes() == original, "resuming alone must not touch the file"
    if how == "cut-middle":
        # "question 1" is lost; the entry after it still chains to the entries before it.
        assert _texts(session) == ["question 0", "answer 0", "answer 1", "question 2", "answer 2"]
    session.record_message(UserMessage("after repair"))
    backups = [p for p in tmp_path.iterdir() if p.name.startswith("s.jsonl.damaged")]
    assert len(backups) == 1 and backups[0].read_bytes() == original
    entries = _entries(path)  # every line is JSON again
    assert entries[0]["type"] == "session"
    resumed, warnings = _open(path)
    assert warnings == []
    assert len(resumed.messages) == left + 1 and _texts(resumed)[-1] == "after repair"


def test_a_non_utf8_line_inside_a_session_is_one_damaged_line(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    _write_pairs(path, 2)
    lines = path.read_bytes().splitlines(keepends=True)
    lines[2] = lines[2].replace(b"answer 0", b"answ\xe9r 0")
    path.write_bytes(b"".join(lines))
    session, warnings = _open(path)
    assert any(w.startswith(f"{path}:3: ") and "UTF-8" in w for w in warnings), warnings
    assert len(session.messages) == 3


# --------------------------------------------------------------------------- item 9


def _looping_session(path: Path) -> None:
    header = {"type": "session", "version": 3, "id": "s", "timestamp": "t", "cwd": "/"}

    def message(entry_id: str, parent: str, words: str) -> dict[str, Any]:
        return {
            "type": "message",
            "id": entry_id,
            "parentId": parent,
            "timestamp": "t",
            "message": {"role": "user", "content": words, "timestamp": 1},
        }

    entries = [
        header,
        message("aaaa0001", "aaaa0002", "one"),
        message("aaaa0002", "aaaa0001", "two"),
    ]
    path.write_text("".join(json.dumps(e) + "\n" for e in entries))


def test_a_parent_loop_is_broken_with_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "loop.jsonl"
    _looping_session(path)
    done = _tau(tmp_path, "--model", "faux/echo", "--session", str(path), "still works", timeout=30)
    assert done.returncode == 0, done.stderr
    assert f"{path}:2: " in done.stderr and "loop" in done.stderr
    assert done.stdout == "still works\n"


# --------------------------------------------------------------------------- item 10


def test_a_latin1_file_is_named_in_the_error(tmp_path: Path) -> None:
    path = tmp_path / "notes-latin1.txt"
    path.write_bytes("première ligne\ndeuxième\n".encode("latin-1"))
    done = _tau(tmp_path, "--model", "faux/echo", "--session", str(path), "hi")
    assert done.returncode == 1
    assert str(path) in done.stderr and "not a session file" in done.stderr
    assert "codec" not in done.stderr
    assert path.read_bytes() == "première ligne\ndeuxième\n".encode("latin-1")


def test_a_fifo_as_session_is_refused_at_once(tmp_path: Path) -> None:
    path = make_fifo(tmp_path / "session.fifo")
    outcome: list[BaseException | None] = []

    def target() -> None:
        try:
            Session.open(path)
            outcome.append(None)
        except BaseException as exc:
            outcome.append(exc)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(10)
    unblock_fifo(path)
    assert outcome, "opening a FIFO as the session blocked"
    assert isinstance(outcome[0], SessionError)
    assert "session.fifo" in str(outcome[0]) and "not a regular file" in str(outcome[0])
