"""A fake OpenAI-compatible endpoint on 127.0.0.1 that plays a multi-turn tool script and
counts the requests it serves per turn (child processes reach it over HTTP).

The turn is read from the request: the number of tool results in it. Each turn's reply is
fixed, so an interrupted run and an uninterrupted one get the same answers.
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from typing import Any

from tests.ai.servers import SSE_HEADERS, Reply, Request, ServerThread
from tests.factories import sse

# Tool results seen -> the calls of the reply (none: the final answer).
SCRIPT: dict[int, list[tuple[str, str, dict[str, Any]]]] = {
    0: [("call_1a", "read_note", {"name": "a"}), ("call_1b", "read_note", {"name": "b"})],
    2: [("call_2a", "send_email", {"to": "ops"}), ("call_2b", "read_note", {"name": "c"})],
    4: [("call_3a", "read_note", {"name": "d"})],
    5: [],
}


def _chunk(delta: dict[str, Any], finish: str | None = None, usage: Any = None) -> bytes:
    body: dict[str, Any] = {"id": "c1", "object": "chat.completion.chunk", "created": 1}
    body["model"] = "gpt-x"
    body["choices"] = [] if usage else [{"index": 0, "delta": delta, "finish_reason": finish}]
    if usage:
        body["usage"] = usage
    return sse((None, json.dumps(body)))


def _reply_for(results: int, body: dict[str, Any]) -> list[bytes]:
    calls = SCRIPT[results]
    chunks = [_chunk({"role": "assistant", "content": ""})]
    if calls:
        for index, (call_id, name, arguments) in enumerate(calls):
            chunks.append(
                _chunk(
                    {
                        "tool_calls": [
                            {
                                "index": index,
                                "id": call_id,
                                "type": "function",
                                "function": {"name": name, "arguments": json.dumps(arguments)},
                            }
                        ]
                    }
                )
            )
        chunks.append(_chunk({}, "tool_calls"))
    else:
        texts = [m.get("content") for m in body["messages"] if m.get("role") == "tool"]
        chunks.append(_chunk({"content": "done: " + " | ".join(map(str, texts))}))
        chunks.append(_chunk({}, "stop"))
    prompt = len(json.dumps(body["messages"])) // 4
    usage = {"prompt_tokens": prompt, "completion_tokens": 7 + results, "total_tokens": prompt + 7}
    chunks += [_chunk({}, usage=usage), b"data: [DONE]\n\n"]
    return chunks


class ScriptedLLM(ServerThread):
    """``with ScriptedLLM() as llm``: ``llm.url``; ``llm.served_for(prompt)`` counts the
    requests of the run with that first prompt, per turn."""

    def __init__(self) -> None:
        self.served: Counter[tuple[str, int]] = Counter()
        self._lock = threading.Lock()
        super().__init__(self._reply)

    def served_for(self, workflow: str) -> dict[int, int]:
        """Requests served per turn for the run of ``workflow`` (its prompt names it)."""
        with self._lock:
            return {turn: n for (prompt, turn), n in self.served.items() if workflow in prompt}

    def _reply(self, request: Request) -> Reply:
        body = json.loads(request.body)
        results = sum(1 for m in body["messages"] if m.get("role") == "tool")
        first = body["messages"][0].get("content")
        prompt = first if isinstance(first, str) else json.dumps(first)
        with self._lock:
            self.served[prompt, results] += 1
        return Reply(200, SSE_HEADERS, _reply_for(results, body))
