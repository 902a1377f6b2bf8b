"""``--session FILE``: persisted as JSONL while the run happens, resumed by the next run."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

from tau.ai.core.types import AssistantMessage, UserMessage
from tau.ai.providers.faux import FauxResponse, faux_calls, faux_model, text
from tau.cli.app import App, Settings
from tau.cli.session import Session
from tau.cli.tools import Workspace
from tests.cli.conftest import TauRunner


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_session_file_is_written_and_resumed(tau: TauRunner, tmp_path: Path) -> None:
    path = tmp_path / "chat.jsonl"
    first = tau("--model", "faux/echo", "--session", str(path), "first question")
    assert first.returncode == 0, first.stderr
    header, *entries = _lines(path)
    assert header["type"] == "session" and header["version"] == 3 and header["cwd"]
    assert [e["type"] for e in entries] == ["model_change", "message", "message"]
    assert [e["message"]["role"] for e in entries[1:]] == ["user", "assistant"]
    assert entries[0]["parentId"] is None
    assert all(b["parentId"] == a["id"] for a, b in itertools.pairwise(entries))

    second = tau("--model", "faux/echo", "--session", str(path), "second question")
    assert second.returncode == 0, second.stderr
    header2, *entries2 = _lines(path)
    assert header2 == header, "resuming must append, not rewrite"
    assert [e["type"] for e in entries2] == ["model_change", *["message"] * 4]
    assert [e["message"]["role"] for e in entries2[1:]] == ["user", "assistant"] * 2
    assert entries2[3]["parentId"] == entries2[2]["id"]
    assert entries2[4]["message"]["content"][0]["text"] == "second question"


async def test_resumed_messages_are_sent_to_the_model(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    session = Session.open(path)
    session.record_message(UserMessage("remember: the code is 1234"))
    session.record_message(
        AssistantMessage([text("noted")], api="faux", provider="faux", model="faux-model")
    )
    model = faux_model([FauxResponse([text("1234")])])
    app = App(
        Settings(
            model=model, tool_names=[], workspace=Workspace(tmp_path), session=Session.open(path)
        ),
        None,
    )
    await app.run("what is the code?")
    context, _ = faux_calls(model)[0]
    sent = [m.content if isinstance(m, UserMessage) else m.text for m in context.messages]  # type: ignore[union-attr]
    assert (
        sent[0] == [text("remember: the code is 1234")] or sent[0] == "remember: the code is 1234"
    )
    assert sent[1] == "noted"
    assert len(_lines(path)) == 1 + 2 + 1 + 2  # header, old pair, model_change, new pair


def test_nothing_is_written_before_an_assistant_message(tau: TauRunner, tmp_path: Path) -> None:
    path = tmp_path / "never.jsonl"
    done = tau("--model", "anthropic/claude-sonnet-4-5", "--session", str(path), "hi")
    assert done.returncode == 1
    assert not path.exists()
