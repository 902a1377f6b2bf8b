"""Tool sources in the loop: asked before every turn, their tools joined with the fixed ones,
and a name offered twice reported as the turn's error."""

from __future__ import annotations

from collections.abc import Sequence

from tau.agent import Agent, AgentTool, Approve, ToolSource, agent_tool
from tau.ai import ToolResultMessage
from tau.ai.providers.faux import FauxResponse, faux_calls, faux_model, text, tool_call


class Countdown:
    """A source whose tool changes every time it is asked."""

    name = "countdown"

    def __init__(self) -> None:
        self.asked = 0

    async def tools(self) -> Sequence[AgentTool]:
        self.asked += 1
        number = self.asked

        @agent_tool(name=f"tool_{number}")
        def tool() -> str:
            """A tool of one turn."""
            return f"ran tool {number}"

        return [tool]


@agent_tool
def fixed() -> str:
    """Always there."""
    return "fixed"


async def test_sources_are_asked_before_every_turn() -> None:
    source = Countdown()
    assert isinstance(source, ToolSource)
    model = faux_model(
        [
            FauxResponse([tool_call("tool_1", {})]),
            FauxResponse([tool_call("tool_2", {}), tool_call("fixed", {})]),
            FauxResponse([text("done")]),
        ]
    )
    agent = Agent(model=model, tools=[fixed], tool_sources=[source])
    await agent.prompt("go")
    offered = [[t.name for t in context.tools or ()] for context, _ in faux_calls(model)]
    assert offered == [["fixed", "tool_1"], ["fixed", "tool_2"], ["fixed", "tool_3"]]
    results = [m.content[0].text for m in agent.state.messages if isinstance(m, ToolResultMessage)]  # type: ignore[union-attr]
    assert results == ["ran tool 1", "ran tool 2", "fixed"]
    assert agent.state.tools == [fixed]  # the agent's own tools are untouched


async def test_a_name_offered_twice_is_the_turns_error() -> None:
    @agent_tool(name="tool_1")
    def clash() -> str:
        """Same name as the source's first tool."""
        return ""

    agent = Agent(
        model=faux_model([FauxResponse([text("never")])]), tools=[clash], tool_sources=[Countdown()]
    )
    await agent.prompt("go")
    assert agent.state.error == (
        "two tools are named \"tool_1\" (the agent's own tools and Countdown 'countdown'); "
        'give one source a prefix, e.g. server.toolset(prefix="...")'
    )


async def test_a_failing_source_ends_the_turn_with_its_message() -> None:
    class Broken:
        async def tools(self) -> Sequence[AgentTool]:
            raise RuntimeError("the catalog is down")

    agent = Agent(model=faux_model([FauxResponse([text("never")])]), tool_sources=[Broken()])
    await agent.prompt("go")
    assert agent.state.error == "the catalog is down"


async def test_a_paused_call_of_a_source_tool_runs_on_resume() -> None:
    """A resumed run asks its sources before running the paused calls (an MCP server's tool
    approved in a page or by ``tau -c``), on an agent built afresh the same way."""

    class Guarded:
        name = "guarded"

        async def tools(self) -> Sequence[AgentTool]:
            @agent_tool(name="launch", requires_approval=True)
            def launch() -> str:
                """Needs a yes."""
                return "launched"

            return [launch]

    def build() -> Agent:
        model = faux_model([FauxResponse([tool_call("launch", {})]), FauxResponse([text("ok")])])
        return Agent(model=model, tool_sources=[Guarded()])

    paused = await build().prompt("go")
    assert paused.status == "paused" and paused.state is not None
    resumed = await build().resume(paused.state, {paused.pending[0].id: Approve()})
    (result,) = [m for m in resumed.messages if isinstance(m, ToolResultMessage)]
    assert not result.is_error and result.content[0].text == "launched"  # type: ignore[union-attr]
