"""DurableAgent in this process (DBOS on a SQLite file): typed output, usage and events come
back as from a plain agent, and an unknown workflow id is a clear error."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import BaseModel

from tau.agent import Agent, AgentEvent, agent_tool
from tau.ai.providers.faux import FauxResponse, faux_model, text, tool_call

dbos = pytest.importorskip("dbos")
from tau.durable import DurableAgent  # noqa: E402


class City(BaseModel):
    name: str
    population: int


def build() -> Agent[City]:
    @agent_tool
    def lookup(city: str) -> str:
        """Look a city up."""
        return f"{city}: 2,100,000 people"

    answer = json.dumps({"name": "Paris", "population": 2100000})
    model = faux_model(
        [FauxResponse([tool_call("lookup", {"city": "Paris"})]), FauxResponse([text(answer)])]
    )
    return Agent(model=model, tools=[lookup], output_type=City, output_mode="native")


@pytest.fixture
def launched(tmp_path: Path) -> Iterator[DurableAgent[City]]:
    durable = DurableAgent(build(), name="in-process")
    dbos.DBOS(
        config={
            "name": "tau-durable-test",
            "system_database_url": f"sqlite:///{tmp_path / 'runs.sqlite'}",
            "log_level": "WARNING",
        }
    )
    dbos.DBOS.launch()
    try:
        yield durable
    finally:
        dbos.DBOS.destroy(destroy_registry=True)


async def test_typed_output_usage_and_events_come_back(launched: DurableAgent[City]) -> None:
    events: list[AgentEvent] = []
    launched.subscribe(events.append)
    result = await launched.prompt("How many people live in Paris?", workflow_id="city-1")
    plain = await build().prompt("How many people live in Paris?")

    assert result.status == "completed"
    assert result.output == City(name="Paris", population=2100000)
    assert result.usage == plain.usage
    assert [m.role for m in result.messages] == [m.role for m in plain.messages]
    kinds = [e.type for e in events]
    assert kinds[0] == "agent_start" and kinds[-1] == "agent_end"
    assert "tool_execution_end" in kinds

    again = await launched.prompt("ignored: the workflow already ran", workflow_id="city-1")
    assert again.output == result.output  # the recorded run, not a new one


async def test_resuming_an_unknown_run_is_a_clear_error(launched: DurableAgent[City]) -> None:
    from tau.durable import DurableRunError

    with pytest.raises(DurableRunError, match="the run 'nope' is not paused"):
        await launched.resume("nope", {})
