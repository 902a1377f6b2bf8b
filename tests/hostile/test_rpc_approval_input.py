"""Hostile RPC decisions: an unknown call id, a decision when nothing waits, malformed fields,
edited arguments that break the schema, a damaged paused-run entry. Each is one clear error
response (or is ignored), and the session goes on."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.cli.rpc_client import RpcClient

WRITE = {"name": "write", "arguments": {"path": "a.txt", "content": "hi"}}


def _model(tmp_path: Path, name: str, responses: list[dict[str, Any]]) -> str:
    path = tmp_path / name
    path.write_text(json.dumps(responses))
    return f"faux/{path}"


def _error(client: RpcClient, command: dict[str, Any]) -> str:
    response = client.call(command)
    assert response["success"] is False, response
    error: str = response["error"]
    assert "\n" not in error and "Traceback" not in error
    return error


def test_bad_decisions_are_errors_and_the_session_goes_on(tmp_path: Path) -> None:
    model = _model(tmp_path, "s.json", [{"tool_calls": [WRITE]}, {"text": "done"}])
    client = RpcClient(tmp_path, "--model", model, "--tools", "write")
    try:
        # Nothing waits yet.
        error = _error(client, {"id": 1, "type": "approve", "toolCallId": "call_x"})
        assert error == "tool call 'call_x' is not waiting for approval (no call is waiting)"
        assert "not waiting" in _error(client, {"id": 2, "type": "deny", "toolCallId": "x"})

        client.call({"id": 3, "type": "prompt", "message": "write"})
        request = client.event("tool_approval_request")
        call_id = request["toolCallId"]
        # An unknown id names the one that waits.
        error = _error(client, {"id": 4, "type": "approve", "toolCallId": "nope"})
        assert error == f"tool call 'nope' is not waiting for approval (waiting: {call_id!r})"
        # Malformed decisions.
        assert _error(client, {"id": 5, "type": "approve"}) == (
            '"toolCallId" must be a non-empty string'
        )
        assert _error(client, {"id": 6, "type": "approve", "toolCallId": 7}) == (
            '"toolCallId" must be a non-empty string'
        )
        bad_type = {"id": 7, "type": "approve", "toolCallId": call_id, "arguments": "rm -rf /"}
        assert _error(client, bad_type) == '"arguments" must be an object'
        bad_schema = {"id": 8, "type": "approve", "toolCallId": call_id, "arguments": {"x": 1}}
        assert "the edited arguments for" in _error(client, bad_schema)
        assert _error(client, {"id": 9, "type": "deny", "toolCallId": call_id, "reason": 5}) == (
            '"reason" must be a string'
        )
        # The call still waits, and a good decision goes through once.
        state = client.call({"id": 10, "type": "get_state"})["data"]
        assert state["pendingApprovals"] == [call_id]
        ok = client.call({"id": 11, "type": "approve", "toolCallId": call_id})
        assert ok["success"]
        assert "not waiting" in _error(client, {"id": 12, "type": "deny", "toolCallId": call_id})
        if not any(line["type"] == "agent_end" for line in client.seen):  # read past already
            client.event("agent_end")
        assert (tmp_path / "work" / "a.txt").read_text() == "hi"
    finally:
        assert client.close() == 0


def test_a_damaged_paused_entry_still_resumes_from_the_transcript(tmp_path: Path) -> None:
    model = _model(tmp_path, "one.json", [{"tool_calls": [WRITE]}])
    client = RpcClient(tmp_path, "--model", model, "--tools", "write")
    client.call({"id": 1, "type": "prompt", "message": "write"})
    client.event("tool_approval_request")
    client.close()
    (session,) = (tmp_path / "tau-home" / "sessions").rglob("*.jsonl")
    lines = session.read_text().splitlines()
    for number, line in enumerate(lines):
        entry = json.loads(line)
        if entry.get("customType") == "tau.paused_run":
            entry["data"] = {"state": {"type": "tau.run_state", "version": 99}}
            lines[number] = json.dumps(entry)
    session.write_text("\n".join(lines) + "\n")

    model = _model(tmp_path, "two.json", [{"text": "fine"}])
    again = RpcClient(tmp_path, "-c", "--model", model, "--tools", "write")
    try:
        request = again.event("tool_approval_request")
        again.call({"id": 1, "type": "deny", "toolCallId": request["toolCallId"]})
        again.event("agent_end")
    finally:
        assert again.close() == 0
    assert not (tmp_path / "work" / "a.txt").exists()
