"""Typed output of agent runs: ``Agent(output_type=...)`` ends a run on a validated value.

Scripted faux models play the answers; every run's events are checked against the grammar.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from typing import Any

import pytest
from pydantic import BaseModel

from tau.agent import (
    Agent,
    AgentContext,
    AgentEndEvent,
    AgentLoopConfig,
    ModelRetry,
    OutputUpdateEvent,
    UsageLimits,
    event_to_json,
    run_agent_loop,
)
from tau.ai import AssistantMessage, ToolResultMessage, UserMessage, get_model, stream_simple
from tau.ai.providers.faux import FauxResponse, faux_calls, faux_model, text, tool_call
from tau.ai.structured import OUTPUT_TOOL_NAME, supports_native_output
from tests.agent.helpers import check_grammar, echo_tool, prompt_collecting, result_text


class City(BaseModel):
    name: str
    population: int


PARIS = {"name": "Paris", "population": 2_100_000}


def output_call(arguments: dict[str, Any], **kw: Any) -> FauxResponse:
    return FauxResponse([tool_call(OUTPUT_TOOL_NAME, arguments)], **kw)


def updates(events: list[Any]) -> list[Any]:
    return [e.output for e in events if isinstance(e, OutputUpdateEvent)]


async def test_tool_calls_first_then_the_output_in_tool_mode() -> None:
    model = faux_model([FauxResponse([tool_call("echo", {"value": "Paris"})]), output_call(PARIS)])
    agent = Agent(model=model, tools=[echo_tool()], output_type=City, output_mode="tool")
    events = await prompt_collecting(agent)
    end = events[-1]
    assert isinstance(end, AgentEndEvent)
    assert end.output == City(**PARIS)
    assert agent.state.output == City(**PARIS) and agent.state.error is None
    # The output tool sat beside the user's tool in both requests, and was not forced.
    for context, options in faux_calls(model):
        assert [t.name for t in context.tools or ()] == ["echo", OUTPUT_TOOL_NAME]
        assert "tool_choice" not in options
    # Every call has its result: the transcript can be continued.
    results = [m for m in agent.state.messages if isinstance(m, ToolResultMessage)]
    assert [r.is_error for r in results] == [False, False]
    # Partial outputs arrive in order, never twice in a row, the last one is the output.
    values = updates(events)
    assert values[-1] == City(**PARIS)
    assert all(a != b for a, b in itertools.pairwise(values))
    names = [v.name for v in values if v.name]
    assert all("Paris".startswith(n) for n in names) and names[-1] == "Paris"


async def test_prompt_returns_the_typed_output() -> None:
    agent = Agent(model=faux_model([output_call(PARIS)]), output_type=City, output_mode="tool")
    result = await agent.prompt("go")
    assert result.output == City(**PARIS)
    assert result.error is None and result.stop_reason != "error"


async def test_invalid_then_valid_and_the_retry_carries_the_errors() -> None:
    model = faux_model([output_call({"name": "Paris", "population": "lots"}), output_call(PARIS)])
    agent = Agent(model=model, output_type=City, output_mode="tool")
    events = await prompt_collecting(agent)
    assert agent.state.output == City(**PARIS)
    retry_context = faux_calls(model)[1][0]
    rejected = retry_context.messages[-1]
    assert isinstance(rejected, ToolResultMessage) and rejected.is_error
    assert rejected.tool_name == OUTPUT_TOOL_NAME
    assert "population" in result_text(rejected) and "valid integer" in result_text(rejected)
    assert updates(events)[-1] == City(**PARIS)


@pytest.mark.parametrize("mode", ["native", "prompted"])
async def test_text_modes_retry_with_a_user_message(mode: Any) -> None:
    model = faux_model(
        [
            FauxResponse([text('{"name": "Paris"}')]),
            FauxResponse([text(f"Here it is:\n```json\n{json.dumps(PARIS)}\n```")]),
        ]
    )
    agent = Agent(model=model, system_prompt="Be brief.", output_type=City, output_mode=mode)
    events = await prompt_collecting(agent)
    assert agent.state.output == City(**PARIS)
    first_context, first_options = faux_calls(model)[0]
    if mode == "native":
        assert first_options["output_schema"]["name"] == "City"
        assert first_context.system_prompt == "Be brief."
    else:
        assert "output_schema" not in first_options
        assert first_context.system_prompt is not None
        assert first_context.system_prompt.startswith("Be brief.")
        assert '"population"' in first_context.system_prompt
    retry = faux_calls(model)[1][0].messages[-1]
    assert isinstance(retry, UserMessage)
    assert "population: Field required" in str(retry.content)
    # The feedback went through the normal events, so it is in the transcript.
    assert any(
        isinstance(m, UserMessage) and m.content == retry.content for m in agent.state.messages
    )
    assert updates(events)[-1] == City(**PARIS)


async def test_native_mode_runs_tools_before_the_answer() -> None:
    model = faux_model(
        [FauxResponse([tool_call("echo", {"value": "x"})]), FauxResponse([text(json.dumps(PARIS))])]
    )
    agent = Agent(model=model, tools=[echo_tool()], output_type=City, output_mode="native")
    await prompt_collecting(agent)
    assert agent.state.output == City(**PARIS)
    assert [t.name for t in faux_calls(model)[0][0].tools or ()] == ["echo"]


async def test_never_valid_ends_with_a_clear_error_in_the_transcript() -> None:
    model = faux_model([output_call({"name": "Paris"})] * 3)
    agent = Agent(model=model, output_type=City, output_mode="tool", output_retries=2)
    events: list[Any] = []
    agent.subscribe(events.append)
    result = await agent.prompt("go")
    check_grammar(events)
    assert len(faux_calls(model)) == 3
    last = agent.state.messages[-1]
    assert isinstance(last, AssistantMessage) and last.stop_reason == "error"
    assert last.error_message is not None
    assert last.error_message.startswith("No valid output (City) after 3 attempts:")
    assert "population: Field required" in last.error_message
    assert result.output is None and agent.state.output is None and not result.has_output
    assert result.stop_reason == "error" and result.error == last.error_message
    end = events[-1]
    assert isinstance(end, AgentEndEvent) and end.output is None and not end.has_output
    assert "output" not in json.loads(event_to_json(end))


async def test_an_output_that_is_none_is_on_agent_end_and_in_its_json() -> None:
    model = faux_model([output_call({"response": None})])
    agent = Agent(model=model, output_type=int | None, output_mode="tool")
    events: list[Any] = []
    agent.subscribe(events.append)
    result = await agent.prompt("go")
    assert result.error is None and result.output is None and result.has_output
    end = events[-1]
    assert isinstance(end, AgentEndEvent) and end.has_output and end.output is None
    assert json.loads(event_to_json(end))["output"] is None  # null, not left out


async def test_text_without_output_in_tool_mode_is_told_to_call_the_tool() -> None:
    model = faux_model([FauxResponse([text("Paris, I think.")]), output_call(PARIS)])
    agent = Agent(model=model, output_type=City, output_mode="tool")
    await prompt_collecting(agent)
    assert agent.state.output == City(**PARIS)
    retry = faux_calls(model)[1][0].messages[-1]
    assert isinstance(retry, UserMessage) and OUTPUT_TOOL_NAME in str(retry.content)


async def test_output_validator_asks_for_a_retry() -> None:
    model = faux_model([output_call({"name": "Lyon", "population": 500_000}), output_call(PARIS)])
    agent = Agent(model=model, output_type=City, output_mode="tool")
    seen: list[City] = []

    @agent.output_validator
    async def capital(city: City) -> City:
        seen.append(city)
        if city.name != "Paris":
            raise ModelRetry(f"{city.name} is not the capital")
        return city.model_copy(update={"name": "PARIS"})

    result = await agent.prompt("go")
    assert [c.name for c in seen] == ["Lyon", "Paris"]
    assert result.output == City(name="PARIS", population=2_100_000)
    rejected = faux_calls(model)[1][0].messages[-1]
    assert isinstance(rejected, ToolResultMessage) and rejected.is_error
    assert "Lyon is not the capital" in result_text(rejected)


async def test_sync_validator_in_text_mode_and_none_keeps_the_output() -> None:
    model = faux_model(
        [
            FauxResponse([text(json.dumps({"name": "x", "population": -1}))]),
            FauxResponse([text(json.dumps(PARIS))]),
        ]
    )

    def positive(city: City) -> None:
        if city.population < 0:
            raise ModelRetry("population cannot be negative")

    agent = Agent(model=model, output_type=City, output_mode="native", output_validators=[positive])
    result = await agent.prompt("go")
    assert result.output == City(**PARIS)
    retry = faux_calls(model)[1][0].messages[-1]
    assert isinstance(retry, UserMessage) and "cannot be negative" in str(retry.content)


async def test_a_validator_that_crashes_ends_the_run_with_its_error() -> None:
    def broken(city: City) -> City:
        raise KeyError("boom")

    agent = Agent(
        model=faux_model([output_call(PARIS)]),
        output_type=City,
        output_mode="tool",
        output_validators=[broken],
    )
    result = await agent.prompt("go")
    assert result.output is None and result.stop_reason == "error"
    assert result.error is not None and "an output validator failed" in result.error
    assert "boom" in result.error


async def test_abort_mid_output_ends_cleanly() -> None:
    model = faux_model([output_call(PARIS, chunk_size=2, delay=0.02)])
    agent = Agent(model=model, output_type=City, output_mode="tool")
    events: list[Any] = []

    def on_event(event: Any) -> None:
        events.append(event)
        if isinstance(event, OutputUpdateEvent) and event.output.name:
            agent.abort("stop")

    agent.subscribe(on_event)
    result = await asyncio.wait_for(agent.prompt("go"), 5)
    check_grammar(events)
    assert result.aborted and result.output is None and agent.state.output is None
    assert updates(events) and events[-1].output is None  # type: ignore[union-attr]


async def test_length_stop_before_the_output_is_complete_is_an_error() -> None:
    model = faux_model([FauxResponse([text('{"name": "Par')], stop_reason="length")])
    agent = Agent(model=model, output_type=City, output_mode="native", output_retries=3)
    result = await agent.prompt("go")
    assert len(faux_calls(model)) == 1
    assert result.error is not None and "output limit" in result.error


async def test_usage_limits_still_stop_a_run_with_output() -> None:
    model = faux_model([output_call({"name": "Paris"})] * 5)
    agent = Agent(
        model=model,
        output_type=City,
        output_mode="tool",
        output_retries=10,
        usage_limits=UsageLimits(max_turns=2),
    )
    result = await agent.prompt("go")
    assert len(faux_calls(model)) == 2
    assert result.error is not None and result.error.startswith("Usage limit reached")


async def test_fallback_model_answers_with_the_output() -> None:
    broken = faux_model([FauxResponse(error="overloaded", error_status=529)])
    backup = faux_model([output_call(PARIS)])
    agent = Agent(model=broken, fallback_models=[backup], output_type=City, output_mode="tool")
    events = await prompt_collecting(agent)
    assert "fallback" in [e.type for e in events]
    assert agent.state.output == City(**PARIS)


@pytest.mark.parametrize(
    ("fallback", "mode"),
    [("google/gemini-2.5-flash", "native"), ("anthropic/claude-3-5-haiku-latest", "tool")],
)
async def test_auto_mode_is_native_only_when_every_fallback_model_has_it(
    fallback: str, mode: str
) -> None:
    # The primary fails, the fallback answers: the request must suit the fallback too.
    primary = get_model("openai", "gpt-4o")
    backup = get_model(fallback)
    assert supports_native_output(primary)
    assert supports_native_output(backup) == (mode == "native")
    answer = output_call(PARIS) if mode == "tool" else FauxResponse([text(json.dumps(PARIS))])
    player = faux_model([answer])
    asked: list[tuple[str, dict[str, Any]]] = []

    def stream_fn(model: Any, context: Any, **options: Any) -> Any:
        asked.append((model.id, options))
        if model is primary:
            return stream_simple(
                faux_model([FauxResponse(error="down", error_status=503)]), context
            )
        return stream_simple(player, context, **options)

    agent = Agent(model=primary, stream_fn=stream_fn, fallback_models=[backup], output_type=City)
    result = await agent.prompt("go")
    assert result.output == City(**PARIS), result.error
    assert [model_id for model_id, _ in asked] == [primary.id, backup.id]
    for _, options in asked:
        assert ("output_schema" in options) == (mode == "native")
    tools = [t.name for t in faux_calls(player)[0][0].tools or ()]
    assert (OUTPUT_TOOL_NAME in tools) == (mode == "tool")


async def test_json_schema_output_and_its_json_form() -> None:
    schema = {
        "type": "object",
        "properties": {"tags": {"type": "array", "items": {"type": "string"}}},
        "required": ["tags"],
    }
    agent = Agent(
        model=faux_model([output_call({"tags": "x"}), output_call({"tags": ["a", "b"]})]),
        output_type=schema,
        output_mode="tool",
    )
    events = await prompt_collecting(agent)
    assert agent.state.output == {"tags": ["a", "b"]}
    assert json.loads(event_to_json(events[-1]))["output"] == {"tags": ["a", "b"]}


async def test_non_object_output_is_unwrapped() -> None:
    agent = Agent(
        model=faux_model([output_call({"response": [PARIS]})]),
        output_type=list[City],
        output_mode="tool",
    )
    result = await agent.prompt("go")
    assert result.output == [City(**PARIS)]


async def test_a_tool_named_like_the_output_tool_is_a_clear_error() -> None:
    model = faux_model([output_call(PARIS)])
    agent = Agent(
        model=model, tools=[echo_tool(OUTPUT_TOOL_NAME)], output_type=City, output_mode="tool"
    )
    result = await agent.prompt("go")
    assert result.stop_reason == "error" and result.error is not None
    assert "rename the tool" in result.error
    assert faux_calls(model) == []


def test_bad_output_settings_fail_at_construction() -> None:
    with pytest.raises(TypeError, match="output_type"):
        Agent(output_type=object())
    with pytest.raises(ValueError, match="output_retries"):
        Agent(output_type=City, output_retries=-1)


async def test_steering_after_the_output_reopens_the_run() -> None:
    model = faux_model(
        [
            FauxResponse([tool_call("echo", {"value": "x"}), tool_call(OUTPUT_TOOL_NAME, PARIS)]),
            output_call({"name": "Rome", "population": 2_800_000}),
        ]
    )
    agent: Agent[City] = Agent(
        model=model, tools=[echo_tool()], output_type=City, output_mode="tool"
    )

    def steer(event: Any) -> None:
        if event.type == "tool_execution_start" and event.tool_name == "echo":
            agent.steer("Actually, Rome.")

    agent.subscribe(steer)
    result = await agent.prompt("go")
    assert result.output is not None and result.output.name == "Rome"
    assert len(faux_calls(model)) == 2


async def test_the_loop_config_takes_the_output_type() -> None:
    events: list[Any] = []
    config = AgentLoopConfig(
        model=faux_model([output_call(PARIS)]), output_type=City, output_mode="tool"
    )
    await run_agent_loop([UserMessage("go")], AgentContext(), config, events.append)
    check_grammar(events)
    assert events[-1].output == City(**PARIS)
