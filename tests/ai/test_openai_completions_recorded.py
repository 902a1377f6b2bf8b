"""Every recorded OpenAI-compatible chat-completions stream, replayed through the adapter.

Expected values are computed here, straight from the raw SSE text of each recording, with
none of the adapter's code: the text, the reasoning text, each tool call's name and parsed
arguments, the finish reason and the usage numbers (whose total must also equal the
provider's own ``total_tokens``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import httpx2
import pytest

from tau.ai import AssistantMessage, Context, UserMessage, stream
from tau.ai.core.types import Model, TextContent, ThinkingContent
from tests.ai.openai_sdk_check import EXTENSION_KEYS, check_openai_body
from tests.ai.replay import Recorded, load, mock_client, replies
from tests.ai.servers import LocalServer
from tests.ai.stream_checks import check_grammar
from tests.conftest import RECORDED

PROVIDERS = {
    "api.openai.com": "openai",
    "api.groq.com": "groq",
    "openrouter.ai": "openrouter",
    "api.deepseek.com": "deepseek",
    "api.mistral.ai": "mistral",
    "api.z.ai": "zai",
    "router.huggingface.co": "huggingface",
    "api.inference.crusoecloud.com": "crusoe",
    "myorg-myaccount.snowflakecomputing.com": "snowflake",
}


@dataclass
class Recording:
    """One recorded chat-completions stream (a :class:`~tests.ai.replay.Recorded`, named)."""

    name: str
    recorded: Recorded

    @property
    def uri(self) -> str:
        return self.recorded.uri.split("#", 1)[0]

    @property
    def body(self) -> str:
        return self.recorded.text

    @property
    def request(self) -> dict[str, Any]:
        body = self.recorded.request_body
        return body if isinstance(body, dict) else {}


def _recordings() -> list[Recording]:
    if not RECORDED.is_dir():
        return []
    paths = sorted(RECORDED.rglob("*.yaml"))
    return [
        Recording(f"{path.parent.name}/{path.stem}[{n}]", recorded)
        for path in paths
        for n, recorded in enumerate(load(path))
        if recorded.is_sse and urlsplit(recorded.uri).path.endswith("/chat/completions")
    ]


RECORDINGS = _recordings()


# --------------------------------------------------------------------------- independent truth


@dataclass
class Expected:
    text: str = ""
    reasoning: str = ""
    tools: dict[int, dict[str, str]] = field(default_factory=dict)
    finish: str | None = None
    usage: dict[str, Any] | None = None
    error: str | None = None


def expected_from_sse(body: str) -> Expected:
    """What the stream says, read line by line from the raw SSE text."""
    out = Expected()
    event_name = None
    for line in body.splitlines():
        if line.startswith("event:"):
            event_name = line[6:].strip()
            continue
        if not line.startswith("data:"):
            if not line.strip():
                event_name = None
            continue
        payload = line[5:].strip()
        if payload == "[DONE]":
            break
        obj = json.loads(payload)
        usage = obj.get("usage") or (obj.get("x_groq") or {}).get("usage")
        if usage:
            out.usage = usage
        if obj.get("error") or event_name == "error":
            err = obj.get("error", obj)
            out.error = err["message"]
            break
        for choice in obj.get("choices") or []:
            delta = choice.get("delta") or {}
            content = delta.get("content")
            if isinstance(content, str):
                out.text += content
            elif isinstance(content, list):
                for part in content:
                    if part["type"] == "text":
                        out.text += part["text"]
                    elif part["type"] == "thinking":
                        out.reasoning += "".join(p["text"] for p in part["thinking"])
            reasoning = (
                delta.get("reasoning_content")
                or delta.get("reasoning")
                or delta.get("reasoning_text")
            )
            if reasoning:
                out.reasoning += reasoning
            elif delta.get("reasoning_details"):
                out.reasoning += "".join(
                    d.get("text", "")
                    for d in delta["reasoning_details"]
                    if d["type"] == "reasoning.text"
                )
            for call in delta.get("tool_calls") or []:
                slot = out.tools.setdefault(call["index"], {"name": "", "args": ""})
                fn = call.get("function") or {}
                if fn.get("name"):
                    slot["name"] = fn["name"]
                slot["args"] += fn.get("arguments") or ""
            if choice.get("finish_reason"):
                out.finish = choice["finish_reason"]
    return out


STOP = {"stop": "stop", "length": "length", "tool_calls": "toolUse"}


def model_for(rec: Recording) -> Model:
    host = urlsplit(rec.uri).netloc
    base_url = rec.uri.removesuffix("/chat/completions")
    model_id = rec.request.get("model") or "unknown"
    reasoning = any(k in rec.request for k in ("reasoning", "thinking", "reasoning_effort"))
    return Model(
        id=model_id,
        name=model_id,
        api="openai-completions",
        provider=PROVIDERS[host],
        base_url=base_url,
        reasoning=reasoning,
    )


def check_against_recording(rec: Recording, message: AssistantMessage) -> None:
    exp = expected_from_sse(rec.body)
    text = "".join(b.text for b in message.content if isinstance(b, TextContent))
    thinking = "".join(b.thinking for b in message.content if isinstance(b, ThinkingContent))
    assert text == exp.text
    assert thinking == exp.reasoning
    calls = message.tool_calls
    assert [c.name for c in calls] == [exp.tools[i]["name"] for i in sorted(exp.tools)]
    assert [c.arguments for c in calls] == [
        json.loads(exp.tools[i]["args"] or "{}") for i in sorted(exp.tools)
    ]
    if exp.error is not None:
        assert message.stop_reason == "error"
        assert exp.error in (message.error_message or "")
    elif exp.finish is None:
        # Snowflake Cortex never sends a finish_reason; [DONE] after content means "stop".
        assert "[DONE]" in rec.body
        assert message.stop_reason == ("toolUse" if exp.tools else "stop")
    else:
        assert message.stop_reason == STOP[exp.finish], message.error_message
    if exp.usage is not None:
        raw = exp.usage
        details = raw.get("prompt_tokens_details") or {}
        cached = details.get("cached_tokens") or raw.get("cached_tokens") or 0
        u = message.usage
        assert u.input == raw["prompt_tokens"] - cached
        assert u.cache_read == cached
        assert u.output == raw["completion_tokens"]
        assert u.total_tokens == raw["total_tokens"]
        reasoning = (raw.get("completion_tokens_details") or {}).get("reasoning_tokens")
        assert u.reasoning == reasoning


def test_every_chat_completions_recording_is_covered() -> None:
    if not RECORDED.is_dir():
        pytest.skip("recordings not present")
    providers = {PROVIDERS[urlsplit(r.uri).netloc] for r in RECORDINGS}
    assert providers == set(PROVIDERS.values())
    assert len(RECORDINGS) >= 26


@pytest.mark.parametrize("rec", RECORDINGS, ids=[r.name for r in RECORDINGS])
async def test_recording_via_transport(rec: Recording) -> None:
    seen: list[httpx2.Request] = []
    model = model_for(rec)
    async with mock_client([rec.recorded], seen) as client:
        s = stream(model, Context([UserMessage("hi")]), api_key="test-key", client=client)
        events = [e async for e in s]
        message = await s.result()
    check_grammar(events)
    check_against_recording(rec, message)
    assert len(seen) == 1
    request = seen[0]
    assert str(request.url) == rec.uri
    assert request.headers["authorization"] == "Bearer test-key"
    check_openai_body(json.loads(request.content), extensions=EXTENSION_KEYS)


def test_expected_values_are_not_trivial() -> None:
    # The independent reading must find real content, or the comparisons above prove little.
    with_text = [r for r in RECORDINGS if expected_from_sse(r.body).text]
    with_reasoning = [r for r in RECORDINGS if expected_from_sse(r.body).reasoning]
    with_tools = [r for r in RECORDINGS if expected_from_sse(r.body).tools]
    with_errors = [r for r in RECORDINGS if expected_from_sse(r.body).error]
    if not RECORDINGS:
        pytest.skip("recordings not present")
    assert len(with_text) >= 20 and len(with_reasoning) >= 8
    assert len(with_tools) >= 3 and len(with_errors) >= 3


@pytest.mark.parametrize("rec", RECORDINGS, ids=[r.name for r in RECORDINGS])
async def test_recording_via_local_server(rec: Recording) -> None:
    # Odd-sized chunks: cuts fall mid-line and mid-UTF-8 sequence, unlike the events' own.
    async with LocalServer(replies([rec.recorded], chunk_size=997)) as server:
        base = model_for(rec)
        base.base_url = server.url + urlsplit(base.base_url).path
        s = stream(base, Context([UserMessage("hi")]), api_key="k", max_retries=0)
        events = [e async for e in s]
        message = await s.result()
    check_grammar(events)
    check_against_recording(rec, message)
    assert server.requests[0].path == urlsplit(rec.uri).path
