"""Running ``crash_app.py`` in child processes, and what the crash tests check after them."""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from tests.durable import crash_app

APP = Path(crash_app.__file__)
ROOT = APP.parents[2]
CALLS = ["call_1a", "call_1b", "call_2a", "call_2b", "call_3a"]
"""Every tool call of the scripted run."""
NOT_IDEMPOTENT_INSIDE = "tool_inside:call_2a"
"""Inside ``send_email``: a kill there ends the call in an error result (its own test)."""


def run_child(logs: Path, **config: Any) -> subprocess.CompletedProcess[str]:
    """Run the app once with ``config``; its logs go to ``logs``."""
    logs.mkdir(parents=True, exist_ok=True)
    path = logs / f"config-{len(list(logs.glob('config-*.json')))}.json"
    path.write_text(json.dumps({**config, "logs": str(logs)}))
    return subprocess.run(
        [sys.executable, str(APP), str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        check=False,
    )


def killed(done: subprocess.CompletedProcess[str]) -> bool:
    return done.returncode == -signal.SIGKILL


def result(logs: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((logs / "result.json").read_text())
    return data


def points(logs: Path) -> list[str]:
    return (logs / "points.log").read_text().split()


def executions(logs: Path) -> Counter[str]:
    """``done <id>`` / ``start <id>`` lines, counted."""
    lines = (logs / "executions.log").read_text().splitlines()
    return Counter(lines)


def pick_kill_points(all_points: list[str], count: int, seed: int) -> list[str]:
    """``count`` distinct points at random, in run order (the non-idempotent one left out)."""
    eligible = [p for p in all_points if p != NOT_IDEMPOTENT_INSIDE]
    chosen = sorted(random.Random(seed).sample(range(len(eligible)), count))
    return [eligible[i] for i in chosen]


def crash_chain(
    logs: Path, kill_points: list[str], **config: Any
) -> subprocess.CompletedProcess[str]:
    """Start the run, SIGKILL it at each point in turn (recovering in a new process each
    time), then recover it to the end; returns the last process."""
    for index, point in enumerate(kill_points):
        mode = "start" if index == 0 else "recover"
        done = run_child(logs, mode=mode, kill_at=point, **config)
        assert killed(done), (point, done.returncode, done.stderr[-2000:])
        assert points(logs)[-1] == point
    return run_child(logs, mode="recover" if kill_points else "start", **config)
