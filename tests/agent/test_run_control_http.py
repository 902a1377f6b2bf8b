"""Run control through real HTTP adapters: an Agent's fallbacks and limits against 127.0.0.1."""

from __future__ import annotations

import asyncio
import json

import pytest

import tau.ai.streaming.http as tau_http
from tau.agent import Agent, FallbackEvent, UsageLimits, event_to_json
from tau.ai import AssistantMessage, ToolResultMessage
from tests.ai.fault_cases import CASES
from tests.ai.servers import SSE_HEADERS, LocalServer, Reply, refused_url
from tests.factories import sse

from .helpers import echo_tool, kinds, prompt_collecting

ANTHROPIC, OPENAI = CASES[0], CASES[1]
TIMEOUT = 10.0


@pytest.fixture(autouse=True)
def fast_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tau_http._retry, "BACKOFF_BASE_S", 0.01)


def chunk(delta: dict[str, object], finish: str | None = None) -> bytes:
    body = {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "gpt-x"}
    body["choices"] = [{"index": 0, "delta": delta, "finish_reason": finish}]
    return sse((None, json.dumps(body)))


def tool_call_reply(call_id: str, value: str) -> Reply:
    """An OpenAI chat stream whose answer is one call of the ``echo`` tool."""
    opened = {"index": 0, "id": call_id, "type": "function"}
    opened["function"] = {"name": "echo", "arguments": ""}
    arguments = {"index": 0, "function": {"arguments": json.dumps({"value": value})}}
    events = [
        chunk({"role": "assistant", "content": None, "tool_calls": [opened]}),
        chunk({"tool_calls": [arguments]}),
        chunk({}, "tool_calls"),
        b"data: [DONE]\n\n",
    ]
    return Reply(200, SSE_HEADERS, events)


def answer(case: object, *pieces: str) -> Reply:
    return Reply(200, SSE_HEADERS, case.events(list(pieces)))  # type: ignore[attr-defined]


async def test_agent_falls_back_from_a_refused_provider() -> None:
    async with LocalServer([answer(OPENAI, "Hello from the fallback")]) as backup:
        agent = Agent(
            model=ANTHROPIC.model(refused_url()),
            fallback_models=[OPENAI.model(backup.url)],
            get_api_key=lambda provider: "k",
        )
        events = await prompt_collecting(agent)
    fallback = [e for e in events if isinstance(e, FallbackEvent)]
    assert [(f.attempt.model.id, f.attempt.kind) for f in fallback] == [("claude-x", "connection")]
    # The notice comes before the answer's message, and the primary left no message behind.
    assert kinds(events).index("fallback") < len(events) - 1 - kinds(events)[::-1].index(
        "message_start"
    )
    replies = [m for m in agent.state.messages if isinstance(m, AssistantMessage)]
    assert [(m.model, m.text) for m in replies] == [("gpt-x", "Hello from the fallback")]
    assert (agent.state.usage.turns, agent.state.usage.requests) == (1, 2)
    line = json.loads(event_to_json(fallback[0]))
    assert line["message"]["errorMessage"].startswith("Could not connect to 127.0.0.1:")
    assert line["next"] == {"provider": "fault", "model": "gpt-x"}


async def test_after_a_limit_is_raised_the_provider_never_sees_the_limit_message() -> None:
    replies = [
        tool_call_reply("call_1", "one"),
        tool_call_reply("call_2", "two"),
        answer(OPENAI, "done"),
    ]
    async with LocalServer(replies) as server:
        agent = Agent(
            model=OPENAI.model(server.url),
            tools=[echo_tool()],
            get_api_key=lambda provider: "k",
            usage_limits=UsageLimits(max_turns=1),
        )
        await prompt_collecting(agent)
        assert agent.state.error == "Usage limit reached: turns 1 of 1"
        assert len(server.requests) == 1
        agent.usage_limits = UsageLimits(max_turns=3)
        await asyncio.wait_for(agent.continue_(), TIMEOUT)
        assert len(server.requests) == 3
        sent = json.loads(server.requests[1].body)["messages"]
    assert "Usage limit reached" not in json.dumps(sent)
    assert [m["role"] for m in sent] == ["user", "assistant", "tool"]
    assert sent[-1]["content"] == "echo: one"
    transcript = agent.state.messages
    assert [m.role for m in transcript] == [
        "user",
        "assistant",
        "toolResult",
        "assistant",  # the limit message stays in the transcript
        "assistant",
        "toolResult",
        "assistant",
    ]
    assert isinstance(transcript[-1], AssistantMessage) and transcript[-1].text == "done"
    assert isinstance(transcript[-2], ToolResultMessage)
    assert agent.state.usage.turns == 3
