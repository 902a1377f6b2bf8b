"""A fake OpenAI-compatible chat endpoint on 127.0.0.1, in a thread of its own, that counts and
timestamps every request: the batch tests measure rates on its clock, and Ray workers (other
processes) reach it too.

What a request gets depends on markers in its prompt (the last user message):

* ``[status=429]`` — answer with that status (``[retry=1]`` adds ``Retry-After: 1``); with
  ``[times=2]`` only the first two requests of that prompt fail, the next ones are answered;
* ``[delay=0.3]`` — wait that many seconds before answering;
* otherwise the answer is ``answer: <prompt>`` with a usage of ``len(prompt) // 4 + 1`` prompt
  tokens and 5 completion tokens.
"""

from __future__ import annotations

import json
import re
import time
from collections import Counter
from dataclasses import dataclass
from typing import Any

from tau.ai import Model
from tests.ai.servers import JSON_HEADERS, SSE_HEADERS, Reply, Request, ServerThread
from tests.factories import sse

_MARK = re.compile(r"\[(\w+)=([\d.]+)\]")
COMPLETION_TOKENS = 5


@dataclass(frozen=True)
class Seen:
    """One request as the server saw it."""

    at: float
    """``time.monotonic()`` when it arrived."""
    prompt: str
    status: int


def prompt_tokens(prompt: str) -> int:
    return len(prompt) // 4 + 1


def _chunk(delta: dict[str, Any], finish: str | None = None, usage: Any = None) -> bytes:
    body: dict[str, Any] = {"id": "c1", "object": "chat.completion.chunk", "created": 1}
    body["model"] = "gpt-x"
    body["choices"] = [] if usage else [{"index": 0, "delta": delta, "finish_reason": finish}]
    if usage:
        body["usage"] = usage
    return sse((None, json.dumps(body)))


def _last_prompt(body: bytes) -> str:
    messages = json.loads(body).get("messages") or [{}]
    content = messages[-1].get("content", "")
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return str(content)


def fake_model(url: str, provider: str = "fake") -> Model:
    """An openai-completions model answered by the server at ``url``."""
    return Model(
        id="gpt-x",
        name="gpt-x",
        api="openai-completions",
        provider=provider,
        base_url=url + "/v1",
        max_tokens=1024,
    )


class FakeLLM(ServerThread):
    """Start with ``with FakeLLM() as llm:``; ``llm.model()`` points a model at it."""

    def __init__(self) -> None:
        self.seen: list[Seen] = []
        self._counts: Counter[str] = Counter()
        super().__init__(self._reply)

    def model(self, provider: str = "fake") -> Model:
        """An openai-completions model answered by this server."""
        return fake_model(self.url, provider)

    def requests_for(self, prompt: str) -> list[Seen]:
        return [s for s in self.seen if s.prompt == prompt]

    def _reply(self, request: Request) -> Reply:
        prompt = _last_prompt(request.body)
        marks = {name: float(value) for name, value in _MARK.findall(prompt)}
        self._counts[prompt] += 1
        status = int(marks.get("status", 200))
        if status != 200 and self._counts[prompt] > marks.get("times", float("inf")):
            status = 200
        self.seen.append(Seen(time.monotonic(), prompt, status))
        delay = marks.get("delay", 0.0)
        if status != 200:
            headers = dict(JSON_HEADERS)
            if "retry" in marks:
                headers["retry-after"] = f"{marks['retry']:g}"
            error = {"error": {"message": f"refused with {status}", "type": "test"}}
            return Reply(status, headers, [json.dumps(error).encode()], delay=delay)
        usage = {
            "prompt_tokens": prompt_tokens(prompt),
            "completion_tokens": COMPLETION_TOKENS,
            "total_tokens": prompt_tokens(prompt) + COMPLETION_TOKENS,
        }
        body = [
            _chunk({"role": "assistant", "content": "answer: "}),
            _chunk({"content": prompt}),
            _chunk({}, "stop"),
            _chunk({}, usage=usage),
            b"data: [DONE]\n\n",
        ]
        return Reply(200, SSE_HEADERS, body, delay=delay)
