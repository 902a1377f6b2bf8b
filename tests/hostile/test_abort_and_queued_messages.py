"""Issue 24 item 9: an abort never leaves queued steering to go out with the next prompt.

Interactive: ``start``, ``stale steer`` + Enter during the run, Ctrl-C, then ``fresh question``
made the model answer "stale steer". RPC: ``steer``, ``abort``, ``prompt "again"`` sent
``[again, steer msg]``. Now the queued messages go back to the editor (interactive, as in pi) or
are reported dropped (an RPC ``queue_dropped`` event).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.cli.rpc_client import RpcClient
from tests.cli.terminal import Terminal

ENDLESS = {"text": "tick " * 400, "delay": 0.05, "chunk_size": 5}


def _user_texts(messages: list[dict[str, Any]]) -> list[str]:
    texts = []
    for message in messages:
        if message.get("role") == "user":
            content = message["content"]
            texts.append(content if isinstance(content, str) else content[0]["text"])
    return texts


def test_rpc_steer_then_abort_then_prompt_sends_only_the_prompt(tmp_path: Path) -> None:
    faux_script = tmp_path / "script.json"
    faux_script.write_text(json.dumps([ENDLESS, {"echo": True}]))
    client = RpcClient(tmp_path, "--model", f"faux/{faux_script}")
    assert client.call({"id": 1, "type": "prompt", "message": "start"})["success"]
    client.wait_for(lambda d: d.get("assistantMessageEvent", {}).get("type") == "text_delta")
    assert client.call({"id": 2, "type": "steer", "message": "steer msg"})["success"]
    assert client.call({"id": 3, "type": "follow_up", "message": "later msg"})["success"]
    assert client.call({"id": 4, "type": "abort"})["success"]
    dropped = next(d for d in client.seen if d.get("type") == "queue_dropped")
    assert dropped == {
        "type": "queue_dropped",
        "steering": ["steer msg"],
        "followUp": ["later msg"],
    }
    state = client.call({"id": 5, "type": "get_state"})["data"]
    assert state["pendingMessageCount"] == 0
    assert client.call({"id": 6, "type": "prompt", "message": "again"})["success"]
    end = client.wait_for(lambda d: d.get("type") == "agent_end")
    assert _user_texts(end["messages"]) == ["again"]
    assert end["messages"][-1]["content"][0]["text"] == "again"  # the echo: nothing stale
    assert client.close() == 0, client.stderr


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pty")
def test_ctrl_c_puts_queued_steering_back_in_the_editor(tmp_path: Path) -> None:
    term = Terminal.scripted(tmp_path, [ENDLESS, {"echo": True}])
    term.wait("/help for commands")
    term.wait_prompt()
    term.send("start\r")
    term.wait("tick tick")
    term.send("stale steer\r")
    term.wait("[steering queued]")
    term.send("\x03")
    term.wait("[1 queued message back in the editor]")
    term.wait_match(r"\[aborted: [^\]]+\]")
    term.wait(lambda: term.cursor_line() == "> stale steer")
    term.send("\x03")  # the user clears it (Ctrl-C with text on the line)
    term.wait(lambda: term.cursor_line() == ">")
    term.send("fresh question\r")
    term.wait_count("fresh question", 2)  # as sent, then the echo
    term.wait_prompt()
    assert term.exit() == 0
    (session,) = (tmp_path / "tau-home" / "sessions").rglob("*.jsonl")
    entries = [json.loads(line) for line in session.read_text().splitlines()]
    messages = [e["message"] for e in entries if e.get("type") == "message"]
    assert _user_texts(messages) == ["start", "fresh question"]
    assert messages[-1]["content"][0]["text"] == "fresh question"
