"""``await agent.prompt(...)`` returns a :class:`RunResult`: the common case needs no digging."""

from __future__ import annotations

import asyncio

from tau.agent import Agent, RunResult, agent_tool
from tau.ai import AssistantMessage, ToolResultMessage, UserMessage
from tau.ai.providers.faux import FauxResponse, faux_model, text, tool_call


@agent_tool
def get_weather(city: str) -> str:
    """Current weather for a city."""
    return f"sunny in {city}"


async def test_prompt_returns_the_final_answer_and_the_runs_messages() -> None:
    model = faux_model(
        [
            FauxResponse([text("Let me check."), tool_call("get_weather", {"city": "Paris"})]),
            FauxResponse([text("It is sunny in Paris.")]),
        ]
    )
    agent = Agent(model=model, tools=[get_weather])
    result = await agent.prompt("Weather in Paris?")
    assert isinstance(result, RunResult)
    assert result.text == "It is sunny in Paris."
    assert isinstance(result.final_message, AssistantMessage)
    assert result.final_message is agent.state.messages[-1]
    assert [m.role for m in result.messages] == ["user", "assistant", "toolResult", "assistant"]
    assert isinstance(result.messages[0], UserMessage)
    assert isinstance(result.messages[2], ToolResultMessage)
    assert result.stop_reason == "stop"
    assert (result.error, result.aborted) == (None, False)


async def test_second_run_reports_only_its_own_messages() -> None:
    agent = Agent(model=faux_model([FauxResponse([text("one")]), FauxResponse([text("two")])]))
    await agent.prompt("first")
    result = await agent.prompt("second")
    assert [m.role for m in result.messages] == ["user", "assistant"]
    assert result.text == "two"
    assert len(agent.state.messages) == 4


async def test_a_provider_error_is_in_the_result_not_raised() -> None:
    agent = Agent(model=faux_model([FauxResponse([text("part")], error="upstream exploded")]))
    result = await agent.prompt("hi")
    assert result.stop_reason == "error"
    assert result.error == "upstream exploded"
    assert not result.aborted


async def test_an_abort_during_tools_is_reported_as_aborted() -> None:
    started = asyncio.Event()

    @agent_tool
    async def slow() -> str:
        """Takes a while."""
        started.set()
        await asyncio.sleep(30)
        return "never"

    model = faux_model([FauxResponse([tool_call("slow", {})]), FauxResponse([text("no")])])
    agent = Agent(model=model, tools=[slow])
    run = asyncio.create_task(agent.prompt("go"))
    await asyncio.wait_for(started.wait(), 5)
    agent.abort("stop now")
    result = await asyncio.wait_for(run, 10)
    # The last assistant message asked for the tool (stop reason "toolUse"), yet the run was
    # aborted: the result says so.
    assert result.final_message is not None and result.final_message.stop_reason == "toolUse"
    assert result.aborted
    assert result.stop_reason == "aborted"
    assert result.error == "stop now"


async def test_continue_returns_a_result_too() -> None:
    agent = Agent(model=faux_model([FauxResponse([text("again")])]))
    agent.append_message(UserMessage("hello"))
    result = await agent.continue_()
    assert result.text == "again"
    assert [m.role for m in result.messages] == ["assistant"]
