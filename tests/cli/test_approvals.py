"""Approval in the ``tau`` command: the y/N prompt is the agent's approver, a session killed at
the question asks again on ``tau -c``, an RPC client decides with ``approve``/``deny``, and
``--tools task`` delegates to a sub-agent."""

from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import Any

from tests.cli.conftest import TauRunner
from tests.cli.rpc_client import RpcClient
from tests.cli.terminal import Terminal


def _start(tmp_path: Path, responses: list[dict[str, Any]], *args: str) -> Terminal:
    term = Terminal.scripted(tmp_path, responses, *args)
    term.wait("/help for commands")
    term.wait_prompt()
    return term


def _entries(tmp_path: Path) -> list[dict[str, Any]]:
    (session,) = (tmp_path / "tau-home" / "sessions").rglob("*.jsonl")
    return [json.loads(line) for line in session.read_text(encoding="utf-8").splitlines()]


def _messages(tmp_path: Path) -> list[dict[str, Any]]:
    return [e["message"] for e in _entries(tmp_path) if e["type"] == "message"]


def _results(tmp_path: Path) -> dict[str, dict[str, Any]]:
    return {m["toolCallId"]: m for m in _messages(tmp_path) if m["role"] == "toolResult"}


def _calls(tmp_path: Path) -> list[dict[str, Any]]:
    return [
        block
        for m in _messages(tmp_path)
        if m["role"] == "assistant"
        for block in m["content"]
        if block["type"] == "toolCall"
    ]


WRITE = {"name": "write", "arguments": {"path": "a.txt", "content": "hi"}}


def test_the_prompt_is_the_approver(tmp_path: Path) -> None:
    term = _start(
        tmp_path,
        [
            {"tool_calls": [{"name": "bash", "arguments": {"command": "echo ran > b.txt"}}]},
            {"text": "bash done"},
        ],
        "--tools",
        "bash",
    )
    term.send("run it\r")
    term.wait("Allow run `echo ran > b.txt`? [y/N]")
    # What a new process needs is in the session before the answer.
    assert any(e.get("customType") == "tau.paused_run" for e in _entries(tmp_path))
    term.send("y\r")
    term.wait("bash done")
    term.wait_prompt()
    assert (tmp_path / "work" / "b.txt").read_text() == "ran\n"
    assert term.exit() == 0


def test_killed_at_the_question_asks_again_on_continue(tmp_path: Path) -> None:
    (tmp_path / "work").mkdir(exist_ok=True)
    (tmp_path / "work" / "notes.txt").write_text("some notes")
    read = {"name": "read", "arguments": {"path": "notes.txt"}}
    term = _start(tmp_path, [{"tool_calls": [read, WRITE]}], "--tools", "read,write")
    term.send("copy the notes\r")
    term.wait("Allow write a.txt? [y/N]")
    term.child.kill(signal.SIGKILL)
    term.child.close()
    assert not (tmp_path / "work" / "a.txt").exists()

    again = Terminal.scripted(
        tmp_path, [{"text": "resumed and written"}], "-c", "--tools", "read,write"
    )
    again.wait("the last run stopped at")
    again.wait("Allow write a.txt? [y/N]")
    again.send("y\r")
    again.wait("resumed and written")
    again.wait_prompt()
    assert again.exit() == 0
    assert (tmp_path / "work" / "a.txt").read_text() == "hi"
    # Every call of the paused turn has exactly one result (the read one ran again unasked).
    calls = _calls(tmp_path)
    results = _results(tmp_path)
    assert [c["name"] for c in calls] == ["read", "write"]
    assert set(results) == {c["id"] for c in calls}
    assert not any(r["isError"] for r in results.values())


def test_declined_on_continue_tells_the_model(tmp_path: Path) -> None:
    term = _start(tmp_path, [{"tool_calls": [WRITE]}], "--tools", "write")
    term.send("write\r")
    term.wait("Allow write a.txt? [y/N]")
    term.child.kill(signal.SIGKILL)
    term.child.close()
    again = Terminal.scripted(tmp_path, [{"text": "ok, not written"}], "-c", "--tools", "write")
    again.wait("Allow write a.txt? [y/N]")
    again.send("n\r")
    again.wait("ok, not written")
    again.wait_prompt()
    assert again.exit() == 0
    (result,) = _results(tmp_path).values()
    assert result["isError"]
    assert "declined to run write" in result["content"][0]["text"]
    assert not (tmp_path / "work" / "a.txt").exists()


def _write_script(tmp_path: Path, name: str, responses: list[dict[str, Any]]) -> str:
    path = tmp_path / name
    path.write_text(json.dumps(responses))
    return f"faux/{path}"


def test_rpc_approve_and_deny(tmp_path: Path) -> None:
    model = _write_script(
        tmp_path,
        "rpc.json",
        [
            {"tool_calls": [WRITE]},
            {"text": "first done"},
            {"tool_calls": [{"name": "write", "arguments": {"path": "b.txt", "content": "x"}}]},
            {"text": "second done"},
        ],
    )
    client = RpcClient(tmp_path, "--model", model, "--tools", "write")
    try:
        assert client.call({"id": 1, "type": "prompt", "message": "write a"})["success"]
        request = client.event("tool_approval_request")
        assert request["toolName"] == "write"
        assert request["arguments"] == {"path": "a.txt", "content": "hi"}
        assert request["question"] == "Allow write a.txt?"
        state = client.call({"id": 2, "type": "get_state"})
        assert state["data"]["pendingApprovals"] == [request["toolCallId"]]
        # Edited arguments: the file gets other content.
        edited = {"path": "a.txt", "content": "edited"}
        answer = client.call(
            {"id": 3, "type": "approve", "toolCallId": request["toolCallId"], "arguments": edited}
        )
        assert answer["data"] == {"toolCallId": request["toolCallId"], "decision": "approve"}
        client.event("agent_end")
        assert (tmp_path / "work" / "a.txt").read_text() == "edited"

        assert client.call({"id": 4, "type": "prompt", "message": "write b"})["success"]
        request = client.event("tool_approval_request")
        deny = {"id": 5, "type": "deny", "toolCallId": request["toolCallId"], "reason": "no b"}
        assert client.call(deny)["data"]["decision"] == "deny"
        end = client.event("tool_execution_end")
        assert end["isError"] and "no b" in json.dumps(end["result"])
        client.event("agent_end")
        assert not (tmp_path / "work" / "b.txt").exists()
    finally:
        client.close()


def test_rpc_stdin_closed_at_a_request_pauses_then_continue_asks(tmp_path: Path) -> None:
    model = _write_script(tmp_path, "one.json", [{"tool_calls": [WRITE]}])
    client = RpcClient(tmp_path, "--model", model, "--tools", "write")
    client.call({"id": 1, "type": "prompt", "message": "write a"})
    client.event("tool_approval_request")
    client.close()  # stdin closes: the run pauses and is kept in the session
    assert any(e.get("customType") == "tau.paused_run" for e in _entries(tmp_path))

    model = _write_script(tmp_path, "two.json", [{"text": "written after all"}])
    again = RpcClient(tmp_path, "-c", "--model", model, "--tools", "write")
    try:
        request = again.event("tool_approval_request")
        assert request["toolName"] == "write"
        again.call({"id": 1, "type": "approve", "toolCallId": request["toolCallId"]})
        again.event("agent_end")
        assert again.call({"id": 2, "type": "get_last_assistant_text"})["data"] == {
            "text": "written after all"
        }
    finally:
        again.close()
    assert (tmp_path / "work" / "a.txt").read_text() == "hi"


def test_new_prompt_closes_the_paused_calls(tmp_path: Path, tau: TauRunner) -> None:
    model = _write_script(tmp_path, "one.json", [{"tool_calls": [WRITE]}])
    client = RpcClient(tmp_path, "--model", model, "--tools", "write")
    client.call({"id": 1, "type": "prompt", "message": "write a"})
    client.event("tool_approval_request")
    client.close()
    second = _write_script(tmp_path, "two.json", [{"text": "something else"}])
    done = tau("-c", "--model", second, "--tools", "write", "never mind that")
    assert done.returncode == 0, done.stderr
    assert "something else" in done.stdout
    (result,) = _results(tmp_path).values()
    assert result["isError"] and "was not run" in result["content"][0]["text"]
    assert not (tmp_path / "work" / "a.txt").exists()


def test_task_tool_runs_a_read_only_sub_agent(tmp_path: Path, tau: TauRunner) -> None:
    (tmp_path / "work").mkdir(exist_ok=True)
    (tmp_path / "work" / "facts.txt").write_text("the answer is 42")
    model = _write_script(
        tmp_path,
        "task.json",
        [
            # The parent delegates; the sub-agent (same model) reads, then answers.
            {"tool_calls": [{"name": "task", "arguments": {"task": "what does facts.txt say?"}}]},
            {"tool_calls": [{"name": "read", "arguments": {"path": "facts.txt"}}]},
            {"text": "facts.txt says 42"},
            {"text": "The sub-agent found: 42"},
        ],
    )
    done = tau("--json", "--model", model, "--tools", "task", "delegate it")
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    updates = [e for e in events if e["type"] == "tool_execution_update"]
    inner = [u["partialResult"]["details"]["event"] for u in updates]
    read_end = [e for e in inner if e["type"] == "tool_execution_end"]
    assert read_end and read_end[0]["toolName"] == "read"
    assert "the answer is 42" in json.dumps(read_end[0]["result"])
    (task_end,) = [e for e in events if e["type"] == "tool_execution_end"]
    assert task_end["toolName"] == "task"
    assert "facts.txt says 42" in json.dumps(task_end["result"])
    assert events[-1]["type"] == "agent_end"
    finals = [e for e in events if e["type"] == "message_end"]
    assert finals[-1]["message"]["content"][-1]["text"] == "The sub-agent found: 42"


def test_batch_refuses_task(tmp_path: Path, tau: TauRunner) -> None:
    (tmp_path / "work").mkdir(exist_ok=True)
    (tmp_path / "work" / "in.jsonl").write_text('{"prompt": "x"}\n')
    model = _write_script(tmp_path, "batch.json", [{"text": "x"}])
    done = tau("batch", "in.jsonl", "-o", "out.jsonl", "--model", model, "--tools", "task")
    assert done.returncode == 2
    assert "--tools task is for the tau command" in done.stderr


def test_continue_with_nothing_to_ask_resumes_only_when_told(tmp_path: Path) -> None:
    term = _start(tmp_path, [{"tool_calls": [WRITE]}], "--tools", "write")
    term.send("write\r")
    term.wait("Allow write a.txt? [y/N]")
    term.child.kill(signal.SIGKILL)
    term.child.close()
    # With --yes the write needs no approval: tau asks before calling the model again.
    again = Terminal.scripted(
        tmp_path, [{"text": "resumed with --yes"}], "-c", "--tools", "write", "--yes"
    )
    again.wait("write a.txt (runs again without asking)")
    again.wait("Resume the run? [y/N]")
    again.send("y\r")
    again.wait("resumed with --yes")
    again.wait_prompt()
    assert again.exit() == 0
    assert (tmp_path / "work" / "a.txt").read_text() == "hi"
