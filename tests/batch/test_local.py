"""The local backend with faux models: volume, exactly-once output, stopping, resuming, limits."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from tau.agent import Agent, AgentEvent, UsageLimits, agent_tool
from tau.ai import Context, TextContent, ToolResultMessage, UserMessage, get_model
from tau.ai.providers.faux import FauxResponse, faux_model, text, tool_call
from tau.batch import (
    BatchFatalError,
    BatchItem,
    BatchResult,
    read_results,
    run_batch,
    run_batch_sync,
)

from .agents import async_echo_agent, echo_agent, slow_agent


def items(count: int, prefix: str = "item") -> list[dict[str, str]]:
    return [{"id": f"{prefix}-{n}", "prompt": f"question {n}"} for n in range(count)]


def ids_in(path: Path) -> list[str]:
    return [json.loads(line)["id"] for line in path.read_bytes().splitlines()]


async def collect(batch: Any) -> list[BatchResult]:
    return [result async for result in batch]


async def test_a_thousand_items_at_concurrency_50_are_each_written_once(tmp_path: Path) -> None:
    running = peak = 0

    def count(event: AgentEvent) -> None:
        nonlocal running, peak
        if event.type == "agent_start":
            running += 1
            peak = max(peak, running)
        elif event.type == "agent_end":
            running -= 1

    def reply(context: Context, options: Any) -> FauxResponse:
        message = context.messages[-1]
        assert isinstance(message, UserMessage) and isinstance(message.content, list)
        return FauxResponse([text("re: " + message.content[0].text)], first_delay=0.002)  # type: ignore[union-attr]

    model = faux_model(reply)

    def make_agent() -> Agent:
        agent = Agent(model=model)
        agent.subscribe(count)
        return agent

    output = tmp_path / "out.jsonl"
    batch = run_batch(items(1000), make_agent, concurrency=50, output=output, progress=False)
    results = await collect(batch)
    assert peak == 50
    assert sorted(r.id for r in results) == sorted(f"item-{n}" for n in range(1000))
    written = ids_in(output)
    assert len(written) == 1000 and set(written) == {r.id for r in results}
    assert all(r.status == "ok" and r.text == f"re: question {r.id[5:]}" for r in results)
    summary = batch.summary
    assert (summary.total, summary.done, summary.counts["ok"], summary.remaining) == (
        1000,
        1000,
        1000,
        0,
    )
    assert summary.usage.requests == 1000 and not summary.interrupted


async def test_a_rerun_skips_what_is_done_and_runs_only_the_rest(tmp_path: Path) -> None:
    output = tmp_path / "out.jsonl"
    await collect(run_batch(items(10)[:4], echo_agent, output=output))
    batch = run_batch(items(10), echo_agent, output=output)
    assert batch.summary.skipped == 4
    results = await collect(batch)
    assert sorted(r.id for r in results) == [f"item-{n}" for n in range(4, 10)]
    assert sorted(ids_in(output)) == sorted(f"item-{n}" for n in range(10))


async def test_a_model_an_async_factory_and_context_items(tmp_path: Path) -> None:
    context = Context(messages=[UserMessage("from the context")], system_prompt="Be terse.")
    inputs = [BatchItem("c", context=context), {"id": "p", "prompt": "plain"}]
    by_model = await collect(run_batch(inputs, get_model("faux", "echo"), transcripts=True))
    by_async = await collect(run_batch(inputs, async_echo_agent))
    for results in (by_model, by_async):
        assert {r.id: r.text for r in results} == {"c": "from the context", "p": "plain"}
    transcript = {r.id: r.transcript for r in by_model}["c"]
    assert transcript is not None
    assert [m["role"] for m in transcript] == ["user", "assistant"]
    assert by_async[0].transcript is None


def counting_tool() -> Any:
    @agent_tool
    def lookup(key: str) -> str:
        """Look a key up."""
        return f"value of {key}"

    return lookup


def tool_then_answer(context: Context, options: Any) -> FauxResponse:
    if isinstance(context.messages[-1], ToolResultMessage):
        return FauxResponse([text("found it")])
    return FauxResponse([tool_call("lookup", {"key": "k"})])


async def test_a_usage_limit_makes_an_item_limited_not_failed() -> None:
    model = faux_model(tool_then_answer)

    def make_agent() -> Agent:
        return Agent(model=model, tools=[counting_tool()], usage_limits=UsageLimits(max_turns=1))

    (result,) = await collect(run_batch(items(1), make_agent))
    assert result.status == "limited"
    assert result.error == "Usage limit reached: turns 1 of 1"
    assert result.error_kind is None and result.attempts == 1
    assert result.usage.turns == 1 and result.usage.tool_calls == 1


async def test_a_typed_output_per_item_is_the_validated_value(tmp_path: Path) -> None:
    from pydantic import BaseModel

    class Answer(BaseModel):
        question: str
        length: int

    def reply(context: Context, options: Any) -> FauxResponse:
        message = context.messages[-1]
        assert isinstance(message, UserMessage) and not isinstance(message.content, str)
        question = "".join(b.text for b in message.content if isinstance(b, TextContent))
        return FauxResponse(
            [tool_call("final_result", {"question": question, "length": len(question)})]
        )

    model = faux_model(reply)
    output = tmp_path / "out.jsonl"
    results = await collect(
        run_batch(items(20), lambda: Agent(model=model, output_type=Answer), output=output)
    )
    assert all(isinstance(r.output, Answer) and r.status == "ok" for r in results)
    written = {r.id: r.output for r in read_results(output)}
    assert written["item-7"] == {"question": "question 7", "length": 10}
    assert len(written) == 20


async def test_a_typed_output_that_is_none_is_written_as_null(tmp_path: Path) -> None:
    # item-1 validates to None (an Optional output type); item-0 gives 3; item-2 fails.
    def reply(context: Context, options: Any) -> FauxResponse:
        message = context.messages[-1]
        assert isinstance(message, UserMessage) and not isinstance(message.content, str)
        prompt = "".join(b.text for b in message.content if isinstance(b, TextContent))
        if prompt == "question 2":
            return FauxResponse(error="400 invalid request", error_status=400)
        value = None if prompt == "question 1" else 3
        return FauxResponse([tool_call("final_result", {"response": value})])

    model = faux_model(reply)
    output = tmp_path / "out.jsonl"
    results = await collect(
        run_batch(
            items(3),
            lambda: Agent(model=model, output_type=int | None, output_mode="tool"),
            output=output,
        )
    )
    by_id = {r.id: r for r in results}
    assert by_id["item-1"].has_output and by_id["item-1"].output is None
    assert not by_id["item-2"].has_output
    lines = {line["id"]: line for line in map(json.loads, output.read_text().splitlines())}
    assert lines["item-0"]["output"] == 3
    assert "output" in lines["item-1"] and lines["item-1"]["output"] is None
    assert "output" not in lines["item-2"]
    back = {r.id: r for r in read_results(output)}
    assert back["item-1"].has_output and back["item-1"].output is None
    assert back["item-0"].has_output and not back["item-2"].has_output
    # A line written before has_output existed (no "output" key) reads back as no output.
    older = BatchResult.from_json({"id": "x", "status": "ok", "text": "hi"})
    assert not older.has_output and older.to_json().get("output", "absent") == "absent"


async def test_a_permanent_model_error_is_recorded_once_and_the_batch_goes_on(
    tmp_path: Path,
) -> None:
    def reply(context: Context, options: Any) -> FauxResponse:
        prompt = context.messages[-1].content[0].text  # type: ignore[union-attr]
        if prompt == "question 2":
            return FauxResponse(error="400 invalid request: bad image", error_status=400)
        return FauxResponse([text("ok")])

    model = faux_model(reply)
    output = tmp_path / "out.jsonl"
    results = await collect(run_batch(items(5), lambda: Agent(model=model), output=output))
    failed = [r for r in results if r.status == "error"]
    assert [(r.id, r.error, r.error_kind, r.attempts) for r in failed] == [
        ("item-2", "400 invalid request: bad image", "other", 1)
    ]
    assert sorted(ids_in(output)) == sorted(f"item-{n}" for n in range(5))


async def test_a_transient_error_is_retried_with_a_fresh_agent() -> None:
    tries: dict[str, int] = {}

    def reply(context: Context, options: Any) -> FauxResponse:
        prompt = context.messages[-1].content[0].text  # type: ignore[union-attr]
        tries[prompt] = tries.get(prompt, 0) + 1
        if prompt == "question 0" and tries[prompt] < 3:
            return FauxResponse(error="overloaded", error_status=529)
        if prompt == "question 1":
            return FauxResponse(error="upstream broke", error_status=502)
        return FauxResponse([text("ok")])

    model = faux_model(reply)
    made = []

    def make_agent() -> Agent:
        made.append(1)
        return Agent(model=model)

    results = await collect(
        run_batch(items(2), make_agent, max_attempts=3, retry_delay=0.01, max_retry_delay=0.02)
    )
    by_id = {r.id: r for r in results}
    assert (by_id["item-0"].status, by_id["item-0"].attempts) == ("ok", 3)
    assert by_id["item-0"].usage.requests == 3  # every attempt's usage counts
    assert (by_id["item-1"].status, by_id["item-1"].error_kind, by_id["item-1"].attempts) == (
        "error",
        "server_error",
        3,
    )
    assert len(made) == 6 and tries == {"question 0": 3, "question 1": 3}


async def test_a_failing_factory_stops_the_batch_and_keeps_what_finished(tmp_path: Path) -> None:
    made = 0

    def make_agent() -> Agent:
        nonlocal made
        made += 1
        if made == 4:
            raise RuntimeError("no more agents")
        return echo_agent()

    output = tmp_path / "out.jsonl"
    batch = run_batch(items(10), make_agent, concurrency=1, output=output)
    seen = []
    with pytest.raises(BatchFatalError, match="make_agent failed: RuntimeError: no more agents"):
        async for result in batch:
            seen.append(result.id)
    assert seen == ids_in(output) == ["item-0", "item-1", "item-2"]
    with pytest.raises(BatchFatalError, match="must return an Agent, not str"):
        await collect(run_batch(items(1), lambda: "agent"))  # type: ignore[arg-type, return-value]


class Recorded:
    """``slow_agent``, noting when each agent is made."""

    def __init__(self) -> None:
        self.made: list[float] = []

    def __call__(self) -> Agent:
        self.made.append(asyncio.get_running_loop().time())
        return slow_agent()


async def test_stop_lets_running_items_finish_and_drops_the_rest(tmp_path: Path) -> None:
    output = tmp_path / "out.jsonl"
    make_agent = Recorded()
    batch = run_batch(items(30), make_agent, concurrency=5, output=output)
    results = []
    stopped = 0.0
    async for result in batch:
        results.append(result)
        if len(results) == 2:
            stopped = asyncio.get_running_loop().time()
            batch.stop(grace=10)
    # Nothing started after the stop, and everything that had started finished and is written.
    assert all(t <= stopped for t in make_agent.made)
    assert len(results) == len(make_agent.made) < 30
    assert sorted(ids_in(output)) == sorted(r.id for r in results)
    assert batch.summary.interrupted and batch.summary.remaining == 30 - len(results)
    more = await collect(run_batch(items(30), slow_agent, concurrency=10, output=output))
    written = ids_in(output)
    assert len(written) == 30 and set(written) == {f"item-{n}" for n in range(30)}
    assert len(more) == 30 - len(results)


async def test_a_stop_without_grace_drops_running_items_unwritten(tmp_path: Path) -> None:
    output = tmp_path / "out.jsonl"
    make_agent = Recorded()
    batch = run_batch(items(10), make_agent, concurrency=4, output=output)
    results = []
    async for result in batch:
        results.append(result)
        batch.stop(grace=0)
    assert [r.id for r in results] == ids_in(output) == ["item-0"]
    assert len(make_agent.made) > 1  # those were running, and are not written
    assert batch.summary.remaining == 9


async def test_leaving_early_stops_everything_and_releases_the_output(tmp_path: Path) -> None:
    output = tmp_path / "out.jsonl"
    async with run_batch(items(20), slow_agent, concurrency=4, output=output) as batch:
        async for _ in batch:
            break
    await asyncio.sleep(0.5)  # nothing goes on running behind our back
    assert ids_in(output) == ["item-0"]
    again = run_batch(items(20), slow_agent, output=output)  # not locked any more
    assert again.summary.skipped == 1
    await again.aclose()


def test_run_batch_sync_returns_the_results_in_input_order(tmp_path: Path) -> None:
    summary = run_batch_sync(items(12), slow_agent, concurrency=12)
    assert summary.results is not None
    assert [r.id for r in summary.results] == [f"item-{n}" for n in range(12)]
    assert "12 of 12 items done this run (12 ok, 0 error, 0 limited)" in summary.describe()


async def test_run_batch_sync_refuses_a_running_loop() -> None:
    with pytest.raises(RuntimeError, match="use run_batch"):
        run_batch_sync(items(1), echo_agent)


def test_options_are_checked_before_anything_runs(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="concurrency must be a whole number above 0"):
        run_batch(items(1), echo_agent, concurrency=0)
    with pytest.raises(ValueError, match="backend must be 'local' or 'ray'"):
        run_batch(items(1), echo_agent, backend="dask")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="max_attempts must be at least 1"):
        run_batch(items(1), echo_agent, max_attempts=0)
    with pytest.raises(TypeError, match="agent must be a Model or a make_agent function"):
        run_batch(items(1), "faux/echo")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="fsync must be seconds"):
        run_batch(items(1), echo_agent, fsync=-1)


def test_the_progress_bar_shows_counts_tokens_and_cost(capsys: pytest.CaptureFixture[str]) -> None:
    run_batch_sync(items(3), echo_agent, progress=True)
    err = capsys.readouterr().err
    assert "3/3" in err and "0 errors" in err and "tok" in err and "$0.0000" in err


def test_results_of_a_file_read_back(tmp_path: Path) -> None:
    output = tmp_path / "out.jsonl"
    run_batch_sync(items(3), echo_agent, output=output)
    assert sorted(r.text for r in read_results(output)) == [f"question {n}" for n in range(3)]
