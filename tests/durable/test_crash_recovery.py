"""DBOS on SQLite: a multi-turn run with tools, SIGKILLed at 20 random points, recovers exactly.

Each kill is a real ``SIGKILL`` of a child process (``crash_app.py``) at a point of the run
(before a model request, after a response was recorded, while a tool runs, after a tool's
result was recorded); the next child recovers the run through DBOS and goes on to the next
point. The fake provider on 127.0.0.1 counts the requests it serves per turn and the tools log
each finished execution; after the last recovery:

* every model call was served exactly once;
* every tool call finished exactly once;
* the transcript and usage equal those of an uninterrupted run (tool-result timestamps aside).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.durable.harness import (
    CALLS,
    NOT_IDEMPOTENT_INSIDE,
    crash_chain,
    executions,
    killed,
    pick_kill_points,
    points,
    result,
    run_child,
)
from tests.durable.scripted_llm import ScriptedLLM
from tests.factories import without_timestamps

pytest.importorskip("dbos")

SEED = 25
TURNS = {0: 1, 2: 1, 4: 1, 5: 1}
"""Each of the four model calls (keyed by the tool results it carries), served once."""


def sqlite(path: Path) -> str:
    return f"sqlite:///{path}"


def test_sigkill_at_20_points_then_recovery_gives_the_uninterrupted_run(tmp_path: Path) -> None:
    with ScriptedLLM() as llm:
        base_logs = tmp_path / "baseline"
        done = run_child(
            base_logs,
            database=sqlite(tmp_path / "base.sqlite"),
            llm=llm.url,
            workflow="wf-1",
            mode="start",
        )
        assert done.returncode == 0, done.stderr[-3000:]
        baseline = result(base_logs)
        assert baseline["status"] == "completed"
        assert llm.served_for("wf-1") == TURNS
        kill_points = pick_kill_points(points(base_logs), 20, SEED)
        assert len(set(kill_points)) == 20

        llm.served.clear()
        logs = tmp_path / "crashed"
        done = crash_chain(
            logs,
            kill_points,
            database=sqlite(tmp_path / "runs.sqlite"),
            llm=llm.url,
            workflow="wf-1",
        )
        assert done.returncode == 0, done.stderr[-3000:]
        assert llm.served_for("wf-1") == TURNS
    ran = executions(logs)
    assert {call: ran[f"done {call}"] for call in CALLS} == dict.fromkeys(CALLS, 1)
    recovered = result(logs)
    assert without_timestamps(recovered["messages"]) == without_timestamps(baseline["messages"])
    assert recovered["usage"] == baseline["usage"]


def test_a_non_idempotent_tool_killed_while_running_is_never_run_again(tmp_path: Path) -> None:
    with ScriptedLLM() as llm:
        logs = tmp_path / "logs"
        done = crash_chain(
            logs,
            [NOT_IDEMPOTENT_INSIDE],
            database=sqlite(tmp_path / "runs.sqlite"),
            llm=llm.url,
            workflow="wf-email",
        )
        assert done.returncode == 0, done.stderr[-3000:]
        assert llm.served_for("wf-email") == TURNS
    ran = executions(logs)
    assert ran["start call_2a"] == 1 and ran["done call_2a"] == 0
    messages = result(logs)["messages"]
    email = next(m for m in messages if m.get("toolCallId") == "call_2a")
    assert email["isError"]
    assert (
        "was running when its process stopped; it is not idempotent" in email["content"][0]["text"]
    )
    # The model was told: the final answer quotes the error result.
    assert "not idempotent" in messages[-1]["content"][0]["text"]


def test_a_paused_run_waits_durably_and_resumes_from_another_process(tmp_path: Path) -> None:
    with ScriptedLLM() as llm:
        logs = tmp_path / "logs"
        config = {
            "database": sqlite(tmp_path / "runs.sqlite"),
            "llm": llm.url,
            "workflow": "wf-approve",
            "approval": True,
        }
        first = run_child(logs, mode="start", **config)
        assert first.returncode == 0, first.stderr[-3000:]
        paused = result(logs)
        assert paused["status"] == "paused" and paused["pending"] == ["call_2a"]
        assert executions(logs)["done call_2a"] == 0

        second = run_child(logs, mode="approve", **config)
        assert second.returncode == 0, second.stderr[-3000:]
        resumed = result(logs)
        assert resumed["status"] == "completed"
        assert resumed["refusals"] == [
            "no decision for call 'call_2a' (send_email): every pending call needs one",
            "the run 'wf-approve' is not paused",
        ]
        assert llm.served_for("wf-approve") == TURNS
    ran = executions(logs)
    assert {call: ran[f"done {call}"] for call in CALLS} == dict.fromkeys(CALLS, 1)


def test_killed_while_paused_then_resumed(tmp_path: Path) -> None:
    with ScriptedLLM() as llm:
        logs = tmp_path / "logs"
        config = {
            "database": sqlite(tmp_path / "runs.sqlite"),
            "llm": llm.url,
            "workflow": "wf-kill-paused",
            "approval": True,
        }
        # Killed right after the approval call was announced, before the run paused.
        first = run_child(logs, mode="start", kill_at="tool_start:call_2a", **config)
        assert killed(first)
        second = run_child(logs, mode="approve", **config)
        assert second.returncode == 0, second.stderr[-3000:]
        assert result(logs)["status"] == "completed"
        assert llm.served_for("wf-kill-paused") == TURNS


def test_a_live_approvers_answer_is_recorded_not_asked_again(tmp_path: Path) -> None:
    with ScriptedLLM() as llm:
        logs = tmp_path / "logs"
        done = crash_chain(
            logs,
            ["tool_inside:call_2b"],  # after send_email was approved and ran
            database=sqlite(tmp_path / "runs.sqlite"),
            llm=llm.url,
            workflow="wf-approver",
            approval=True,
            approver=True,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        assert result(logs)["status"] == "completed"
        assert llm.served_for("wf-approver") == TURNS
    ran = executions(logs)
    assert ran["asked call_2a"] == 1 and ran["done call_2a"] == 1
