"""The README's tau.agent example runs as written and prints what it says."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_readme_agent_example_runs() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    match = re.search(r"^<!-- runnable: tau.agent -->\n```python\n(.*?)^```", readme, re.S | re.M)
    assert match, "no tau.agent example in the README"
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    done = subprocess.run(
        [sys.executable, "-c", match.group(1)], capture_output=True, text=True, env=env, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "assistant: Let me check.",
        "tool: 22°C and sunny in Paris",
        "assistant: It is 22°C and sunny in Paris.",
        "assistant: You're welcome!",
        "final: You're welcome! (stop, 6 new messages)",
        "['note', 'user', 'assistant', 'toolResult', 'assistant', 'user', 'assistant']",
    ]


def test_readme_typed_output_example_runs() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    match = re.search(
        r"^<!-- runnable: tau.agent output -->\n```python\n(.*?)^```", readme, re.S | re.M
    )
    assert match, "no typed-output agent example in the README"
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    done = subprocess.run(
        [sys.executable, "-c", match.group(1)], capture_output=True, text=True, env=env, timeout=60
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    # The lower-case answer was rejected by the validator, the second one accepted.
    assert "partial: name='paris' population=2100000" in lines
    assert lines[-3:] == [
        "partial: name='Paris' population=2100000",
        "output: City(name='Paris', population=2100000)",
        "state: True",
    ]
