"""DBOS on a real PostgreSQL server, started by the test: two worker processes share it, one
is SIGKILLed at random points of its run and recovered, the other runs alongside untouched.

The same checks as on SQLite (``test_crash_recovery.py``): every model call served once,
every tool call finished once, transcript and usage equal to an uninterrupted run, over 20
kill points (other ones than on SQLite: another seed).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.durable.harness import (
    APP,
    CALLS,
    ROOT,
    crash_chain,
    executions,
    pick_kill_points,
    points,
    result,
    run_child,
)
from tests.durable.postgres import find_bin_dir, postgres_server
from tests.durable.scripted_llm import ScriptedLLM
from tests.factories import without_timestamps

pytest.importorskip("dbos")
if find_bin_dir() is None:
    pytest.skip(
        "PostgreSQL is not installed (Debian: apt-get install -y postgresql; .ci/run does it)",
        allow_module_level=True,
    )

SEED = 2525
KILLS = 20
TURNS = {0: 1, 2: 1, 4: 1, 5: 1}


def test_two_workers_share_postgres_and_one_recovers_from_kills(tmp_path: Path) -> None:
    with ScriptedLLM() as llm, postgres_server() as database:
        # The uninterrupted run to compare with (its own SQLite file, same workflow id).
        base_logs = tmp_path / "baseline"
        done = run_child(
            base_logs,
            database=f"sqlite:///{tmp_path / 'base.sqlite'}",
            llm=llm.url,
            workflow="wf-a",
            mode="start",
        )
        assert done.returncode == 0, done.stderr[-3000:]
        baseline = result(base_logs)
        kill_points = pick_kill_points(points(base_logs), KILLS, SEED)
        llm.served.clear()

        # Worker B: its own run, alongside, on the same server.
        b_logs = tmp_path / "worker-b"
        b_logs.mkdir()
        (b_logs / "config.json").write_text(
            json.dumps(
                {
                    "database": database,
                    "llm": llm.url,
                    "workflow": "wf-b",
                    "mode": "start",
                    "executor": "worker-b",
                    # DBOS hands a recovered workflow back to a queue that any live worker of the
                    # same application version may take: B runs its own version, so worker A's
                    # recoveries (which the kill chain counts on) stay with A.
                    "version": "crash-test-b",
                    "logs": str(b_logs),
                }
            )
        )
        worker_b = subprocess.Popen(
            [sys.executable, str(APP), str(b_logs / "config.json")],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            a_logs = tmp_path / "worker-a"
            done = crash_chain(
                a_logs,
                kill_points,
                database=database,
                llm=llm.url,
                workflow="wf-a",
                executor="worker-a",
            )
            assert done.returncode == 0, done.stderr[-3000:]
            _, b_errors = worker_b.communicate(timeout=120)
        finally:
            if worker_b.poll() is None:
                worker_b.kill()
        assert worker_b.returncode == 0, b_errors[-3000:]
        assert llm.served_for("wf-a") == TURNS
        assert llm.served_for("wf-b") == TURNS

    for logs in (a_logs, b_logs):
        ran = executions(logs)
        assert {call: ran[f"done {call}"] for call in CALLS} == dict.fromkeys(CALLS, 1)
    recovered = result(a_logs)
    assert without_timestamps(recovered["messages"]) == without_timestamps(baseline["messages"])
    assert recovered["usage"] == baseline["usage"]
    assert result(b_logs)["status"] == "completed"
