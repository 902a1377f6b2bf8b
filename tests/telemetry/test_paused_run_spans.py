"""A paused run and its resumption: one invoke_agent span each, the second linked to the first."""

from __future__ import annotations

from tau.agent import Agent, AgentTool, RunState, ToolResult
from tau.ai.providers.faux import FauxResponse, faux_model, text, tool_call
from tests.telemetry.conftest import Otel


async def test_the_resumed_span_links_to_the_paused_one(otel: Otel) -> None:
    ask = AgentTool("ask", "Ask the user", {"type": "object", "properties": {}}, external=True)
    model = faux_model([FauxResponse([tool_call("ask", {}, id="q1")]), FauxResponse([text("ok")])])
    agent = Agent(model=model, tools=[ask], name="helper", instrument=otel.settings())
    paused = await agent.prompt("go")
    assert paused.state is not None
    restored = RunState.from_json(paused.state.to_json())
    assert restored.trace_link is not None
    done = await agent.resume(restored, {"q1": ToolResult("yes")})
    assert done.text == "ok"

    runs = [s for s in otel.exporter.get_finished_spans() if s.name == "invoke_agent helper"]
    assert len(runs) == 2
    first, second = runs
    assert first.context is not None
    assert [link.context.span_id for link in second.links] == [first.context.span_id]
    assert second.links[0].context.trace_id == first.context.trace_id
    assert restored.trace_link == {
        "traceId": f"{first.context.trace_id:032x}",
        "spanId": f"{first.context.span_id:016x}",
    }
    # The paused run's span of the waiting call ends marked paused, not failed; the resumed
    # run's span of it is an ordinary one.
    paused_span, resumed_span = [
        s for s in otel.exporter.get_finished_spans() if s.name == "execute_tool ask"
    ]
    assert paused_span.attributes is not None and paused_span.attributes["tau.tool.paused"]
    assert paused_span.status.status_code.name == "UNSET"
    assert resumed_span.attributes is not None and "tau.tool.paused" not in resumed_span.attributes
