"""A scripted agent run produces the exact span tree and attributes of the GenAI conventions."""

from __future__ import annotations

import asyncio
import dataclasses
import json

import pytest

from tau.agent import Agent, agent_tool
from tau.ai import ModelCost, Usage
from tau.ai.providers.faux import FauxResponse, faux_model, text, tool_call
from tests.telemetry.conftest import Otel, tree

PROMPT = "Weather and time in Paris?"


@agent_tool
async def weather(city: str) -> str:
    """The weather in a city."""
    await asyncio.sleep(0.02)  # finishes after `clock` started: the two run in parallel
    return f"Sunny in {city}"


@agent_tool
def clock(city: str) -> str:
    """The time in a city."""
    return "12:00"


def scripted_model():  # type: ignore[no-untyped-def]
    model = faux_model(
        [
            FauxResponse(
                [
                    text("Let me check."),
                    tool_call("weather", {"city": "Paris"}, id="call_w"),
                    tool_call("clock", {"city": "Paris"}, id="call_c"),
                ],
                usage=Usage(input=100, output=20, cache_read=50, cache_write=10, reasoning=5),
            ),
            FauxResponse([text("Sunny, 12:00.")], usage=Usage(input=200, output=8)),
        ],
        id="scripted",
    )
    # Prices per million tokens, so cost is visible: 100*2 + 20*10 + 50*1 + 10*4 = 490 / 1e6.
    return dataclasses.replace(
        model, cost=ModelCost(input=2, output=10, cache_read=1, cache_write=4)
    )


def agent(model, instrument) -> Agent:  # type: ignore[no-untyped-def]
    return Agent(
        model=model,
        name="helper",
        system_prompt="Answer briefly.",
        tools=[weather, clock],
        instrument=instrument,
        session_id="session-1",
        settings={"temperature": 0.25, "max_tokens": 512},
    )


async def test_two_turns_with_parallel_tools_give_the_exact_tree_and_attributes(
    otel: Otel,
) -> None:
    await agent(scripted_model(), otel.settings()).prompt(PROMPT)

    spans = otel.spans()
    assert tree(spans) == [
        ("invoke_agent helper", None),
        ("chat scripted", "invoke_agent helper"),
        ("execute_tool weather", "invoke_agent helper"),
        ("execute_tool clock", "invoke_agent helper"),
        ("chat scripted", "invoke_agent helper"),
    ]
    run, chat1, tool_w, tool_c, chat2 = spans
    assert len({s.context.trace_id for s in spans}) == 1

    assert dict(run.attributes or {}) == {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": "helper",
        "gen_ai.provider.name": "faux",
        "gen_ai.request.model": "scripted",
        "gen_ai.request.max_tokens": 512,
        "gen_ai.request.temperature": 0.25,
        "gen_ai.conversation.id": "session-1",
        # Both turns: input counts cached tokens too (100 + 50 + 10, then 200).
        "gen_ai.usage.input_tokens": 360,
        "gen_ai.usage.output_tokens": 28,
        "tau.usage.cost": pytest.approx((490 + 200 * 2 + 8 * 10) / 1e6),
        "gen_ai.response.finish_reasons": ("stop",),
    }
    assert run.kind.name == "INTERNAL"
    assert run.status.status_code.name == "UNSET"
    assert [(e.name, dict(e.attributes or {})) for e in run.events] == [
        ("tau.turn.start", {"tau.turn": 1}),
        ("tau.turn.end", {"tau.turn": 1, "tau.turn.tool_calls": 2,
                          "gen_ai.response.finish_reasons": ("tool_call",)}),
        ("tau.turn.start", {"tau.turn": 2}),
        ("tau.turn.end", {"tau.turn": 2, "tau.turn.tool_calls": 0,
                          "gen_ai.response.finish_reasons": ("stop",)}),
    ]  # fmt: skip

    chat1_attributes = dict(chat1.attributes or {})
    ttfc = chat1_attributes.pop("gen_ai.response.time_to_first_chunk")
    assert 0 < ttfc < (chat1.end_time - chat1.start_time) / 1e9  # type: ignore[operator]
    assert chat1_attributes == {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "faux",
        "gen_ai.request.model": "scripted",
        "gen_ai.request.max_tokens": 512,
        "gen_ai.request.temperature": 0.25,
        "gen_ai.request.stream": True,
        "gen_ai.conversation.id": "session-1",
        "tau.api": "faux",
        "gen_ai.response.model": "scripted",
        "gen_ai.response.finish_reasons": ("tool_call",),
        "gen_ai.usage.input_tokens": 160,
        "gen_ai.usage.output_tokens": 20,
        "gen_ai.usage.cache_read.input_tokens": 50,
        "gen_ai.usage.cache_creation.input_tokens": 10,
        "gen_ai.usage.reasoning.output_tokens": 5,
        "tau.usage.cost": pytest.approx(490 / 1e6),
    }
    assert chat1.kind.name == "INTERNAL"  # the faux model runs in this process
    assert dict(chat2.attributes or {})["gen_ai.usage.input_tokens"] == 200
    assert dict(chat2.attributes or {})["gen_ai.response.finish_reasons"] == ("stop",)

    assert dict(tool_w.attributes or {}) == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "weather",
        "gen_ai.tool.call.id": "call_w",
        "gen_ai.tool.type": "function",
        "gen_ai.tool.description": "The weather in a city.",
    }
    assert dict(tool_c.attributes or {})["gen_ai.tool.call.id"] == "call_c"
    for span in (tool_w, tool_c):
        assert span.kind.name == "INTERNAL"
        assert span.status.status_code.name == "UNSET"
    # Parallel: the slow weather tool was still running when clock ended.
    assert tool_c.end_time < tool_w.end_time  # type: ignore[operator]
    # Run order: each chat ends before the tools it asked for start, and the tools end
    # before the next chat starts.
    assert chat1.end_time <= tool_w.start_time  # type: ignore[operator]
    assert tool_w.end_time <= chat2.start_time  # type: ignore[operator]


async def test_tool_failures_and_calls_that_never_ran_are_error_spans(otel: Otel) -> None:
    @agent_tool
    def broken(city: str) -> str:
        """Always fails."""
        raise ValueError(f"secret detail about {city}")

    model = faux_model(
        [
            FauxResponse(
                [
                    tool_call("broken", {"city": "Paris"}, id="call_b"),
                    tool_call("missing", {}, id="call_m"),
                ]
            ),
            FauxResponse([text("Sorry.")]),
        ]
    )
    await Agent(model=model, tools=[broken], instrument=otel.settings()).prompt("Go")

    assert [s.name for s in otel.spans()] == [
        "invoke_agent tau",
        "chat faux-model",
        "execute_tool broken",
        "execute_tool missing",
        "chat faux-model",
    ]
    broken_span = otel.span("execute_tool broken")
    assert broken_span.status.status_code.name == "ERROR"
    assert broken_span.attributes["error.type"] == "ValueError"  # type: ignore[index]
    # Without content capture the tool's error text (sent to the model) is not recorded.
    assert broken_span.status.description is None
    missing_span = otel.span("execute_tool missing")
    assert missing_span.status.status_code.name == "ERROR"
    assert missing_span.attributes["error.type"] == "_OTHER"  # type: ignore[index]
    assert "secret detail" not in json.dumps(
        [dict(s.attributes or {}) for s in otel.spans()]
        + [s.status.description for s in otel.spans()]
    )
