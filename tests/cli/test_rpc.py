"""``tau --mode rpc`` driven by a client program: a full run with steering, an abort, the
state and settings commands, compaction and a new session, all answered by ``id``."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

from tests.cli.rpc_client import RpcClient


def _text(message: dict[str, Any]) -> str:
    return "".join(b.get("text", "") for b in message["content"] if b["type"] == "text")


def _ended(data: dict[str, Any]) -> bool:
    return data.get("type") == "agent_end"


def test_a_full_run_with_steering_then_an_abort(tmp_path: Path, script) -> None:
    model = script(
        [
            # A tool call streamed slowly: time to steer while it comes.
            {
                "tool_calls": [{"name": "ls", "arguments": {"path": "."}}],
                "delay": 0.1,
                "chunk_size": 1,
            },
            {"echo": True},  # answers with the newest user message: the steering one
            {"text": "a long story that never ends " * 4, "delay": 0.1, "chunk_size": 2},
        ]
    )
    client = RpcClient(tmp_path, "--model", model)
    state = client.call({"id": 1, "type": "get_state"})
    assert state["success"] and state["data"]["isStreaming"] is False
    assert state["data"]["sessionFile"] is None or "sessions" in state["data"]["sessionFile"]

    assert client.call({"id": "p1", "type": "prompt", "message": "list the files"}) == {
        "id": "p1",
        "type": "response",
        "command": "prompt",
        "success": True,
    }
    client.event("message_update")  # the tool call is streaming
    assert client.call({"id": 2, "type": "steer", "message": "stop and say STEERED"})["success"]
    end = client.wait_for(_ended)
    roles = [(m["role"], _text(m) if m["role"] != "toolResult" else "") for m in end["messages"]]
    assert roles[0] == ("user", "list the files")
    assert ("user", "stop and say STEERED") in roles, "the steering message was delivered"
    assert roles[-1] == ("assistant", "stop and say STEERED"), "and answered"
    # Steering that arrives before the tools run skips them (each still gets a result).
    tool_end = next(d for d in client.seen if d.get("type") == "tool_execution_end")
    assert tool_end["toolName"] == "ls" and tool_end["isError"]
    assert "Skipped due to queued user message." in json.dumps(tool_end["result"])

    assert client.call({"id": 3, "type": "prompt", "message": "tell a story"})["success"]
    client.wait_for(lambda d: d.get("assistantMessageEvent", {}).get("type") == "text_delta")
    busy = client.call({"id": 4, "type": "prompt", "message": "another"})
    assert busy["success"] is False and "streamingBehavior" in busy["error"]
    queued = client.call(
        {"id": 5, "type": "prompt", "message": "later", "streamingBehavior": "followUp"}
    )
    assert queued["success"]
    client.send({"id": 6, "type": "abort"})
    aborted = client.wait_for(_ended)
    assert aborted["messages"][-1]["stopReason"] == "aborted"
    answered = client.response(6)
    assert answered["success"]
    assert client.seen.index(aborted) < client.seen.index(answered), "answered once idle"
    assert client.call({"id": 7, "type": "get_state"})["data"]["isStreaming"] is False
    assert client.close() == 0, client.stderr


def test_settings_compaction_and_new_session(tmp_path: Path, script) -> None:
    # Long enough that a short summary is worth it (a summary must be smaller).
    long_answer = "noted: " + "the number is 42. " * 40
    first = "remember 42" + ", please, it matters" * 40
    # set_model back to the script starts it again: the second prompt is answered by its first.
    model = script([{"text": long_answer}, {"text": "SUMMARY: the number is 42"}])
    client = RpcClient(tmp_path, "--model", model)
    assert client.call({"id": 1, "type": "prompt", "message": first})["success"]
    client.wait_for(_ended)
    changed = client.call({"id": 2, "type": "set_model", "provider": "faux", "modelId": "echo"})
    assert changed["data"]["id"] == "echo"
    assert client.call({"id": 2, "type": "set_model", "model": model})["success"]
    thinking = client.call({"id": 3, "type": "set_thinking", "level": "high"})
    assert thinking["data"] == {"thinkingLevel": "high"}
    bad = client.call({"id": 4, "type": "set_thinking_level", "level": "lots"})
    assert bad["success"] is False and "unknown thinking level 'lots'" in bad["error"]
    unknown = client.call({"id": 5, "type": "set_model", "model": "anthropic/nope"})
    assert unknown["success"] is False and "unknown model 'nope'" in unknown["error"]
    assert client.call({"id": 6, "type": "prompt", "message": "second"})["success"]
    client.wait_for(_ended)
    compacted = client.call({"id": 7, "type": "compact", "customInstructions": "numbers"})
    assert compacted["success"], compacted.get("error")
    assert compacted["data"]["summary"] == "SUMMARY: the number is 42"
    assert compacted["data"]["tokensAfter"] < compacted["data"]["tokensBefore"]
    text = client.call({"id": 8, "type": "get_last_assistant_text"})
    assert text["data"] == {"text": long_answer}
    messages = client.call({"id": 9, "type": "get_messages"})["data"]["messages"]
    assert messages[0]["role"] == "compactionSummary" and "tokensBefore" in messages[0]
    stats = client.call({"id": 10, "type": "get_session_stats"})["data"]
    assert (stats["userMessages"], stats["assistantMessages"]) == (2, 2)
    old_file = client.call({"id": 11, "type": "get_state"})["data"]["sessionFile"]
    fresh = client.call({"id": 12, "type": "new_session"})
    assert fresh["data"]["cancelled"] is False and fresh["data"]["sessionFile"] != old_file
    assert client.call({"id": 13, "type": "get_state"})["data"]["messageCount"] == 0
    assert client.close() == 0
    entries = [json.loads(line) for line in Path(old_file).read_text().splitlines()]
    kinds = [e["type"] for e in entries]
    assert kinds.count("compaction") == 1 and "thinking_level_change" in kinds


def test_a_malformed_line_gets_an_error_and_the_process_goes_on(tmp_path: Path) -> None:
    client = RpcClient(tmp_path, "--model", "faux/echo")
    client.send(b"this is not json")
    assert client.wait_for(lambda d: d.get("command") == "parse")["success"] is False
    assert client.call({"id": 1, "type": "nope"})["error"].startswith("unknown command 'nope'")
    missing = client.call({"id": 2, "type": "prompt"})
    assert missing["error"] == '"message" must be a non-empty string'
    assert client.call({"id": 3, "type": "get_state"})["success"]
    assert client.close() == 0


def test_a_prompt_with_images_sends_them_and_a_bad_image_is_refused(tmp_path: Path) -> None:
    png = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\0" * 32).decode()
    client = RpcClient(tmp_path, "--model", "faux/echo")
    image = {"type": "image", "data": png, "mimeType": "image/png"}
    assert client.call({"id": 1, "type": "prompt", "message": "what is this?", "images": [image]})[
        "success"
    ]
    end = client.wait_for(_ended)
    [content] = [m["content"] for m in end["messages"] if m["role"] == "user"]
    assert content == [{"type": "text", "text": "what is this?"}, image]
    for bad, error in (
        ({**image, "data": "not base64!"}, '"images"[0].data must be base64 image data'),
        ({**image, "mimeType": "text/plain"}, '"images"[0].mimeType must be one of image/gif'),
        ("a path", '"images"[0] must be {"type": "image", "data", "mimeType"}'),
    ):
        refused = client.call({"id": 2, "type": "prompt", "message": "and this?", "images": [bad]})
        assert refused["success"] is False and refused["error"].startswith(error)
    assert client.call({"id": 3, "type": "get_state"})["data"]["messageCount"] == 2
    assert client.close() == 0
