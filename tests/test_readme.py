"""The README's examples run as written: the quick start, and every block marked runnable."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text(encoding="utf-8")

_BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def _quick_start() -> str:
    section = README.split("## Quick start", 1)[1]
    match = _BLOCK.search(section)
    assert match, "no python block under '## Quick start'"
    return match.group(1)


def _runnable_blocks() -> list[str]:
    return re.findall(r"^<!-- runnable -->\n```python\n(.*?)^```", README, re.S | re.M)


def _marked_block(marker: str) -> str:
    """The python block under ``<!-- runnable: MARKER -->`` (an example with its own test)."""
    match = re.search(
        rf"^<!-- runnable: {re.escape(marker)} -->\n```python\n(.*?)^```", README, re.S | re.M
    )
    assert match, f"no '{marker}' example in the README"
    return match.group(1)


def _run(code: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_readme_keeps_the_two_setup_commands_at_the_top() -> None:
    top = README.split("```bash\n", 1)[1].split("```", 1)[0].splitlines()
    assert [line.split()[:2] for line in top] == [
        ["bash", "scripts/demo.sh"],
        ["bash", "scripts/test.sh"],
    ]


def test_quick_start_runs() -> None:
    out = _run(_quick_start())
    assert "Hello from tau!" in out
    assert "stop" in out


# What the marked blocks print, in order (a new block needs an entry here).
EXPECTED = [
    [
        "busy-model failed (overloaded: Overloaded); trying backup-model",
        "backup-model answered: Hello from the backup!",
    ],
    [
        "partial: PartialTrip(title='Loire', cities=[PartialCity(name='Tours'",
        "136000 after 2 attempts",
        "invalid Invalid JSON",
    ],
    ['- path: "path" is a required property', "['user', 'assistant', 'toolResult', 'user']"],
    ["It is sunny in Paris.", "aborted 'a long answer", "echo me"],
    ["HELLO"],
    [
        "Usage limit reached: turns 3 of 3",
        "3 turns, 6 requests, 3 tool calls",
        "Here is what I found. (5 turns in all)",
    ],
    [
        '"name": "invoke_agent weather-bot"',
        '"name": "chat faux-model"',
        '"name": "execute_tool get_weather"',
        '"gen_ai.tool.call.id": "faux_call_',
    ],
    [
        "200 of 200 items done this run (200 ok, 0 error, 0 limited)",
        "q0 ok 'What is 0 + 0?' 1",
        "200 already done, 0 run again",
        "202 results in answers.jsonl",
    ],
]


def test_every_runnable_block_has_expectations() -> None:
    assert len(_runnable_blocks()) == len(EXPECTED)


@pytest.mark.parametrize("index", range(len(EXPECTED)))
def test_runnable_blocks_run(index: int) -> None:
    out = _run(_runnable_blocks()[index])
    for expected in EXPECTED[index]:
        assert expected in out, (expected, out)


def test_readme_agent_example_runs() -> None:
    assert _run(_marked_block("tau.agent")).splitlines() == [
        "assistant: Let me check.",
        "tool: 22°C and sunny in Paris",
        "assistant: It is 22°C and sunny in Paris.",
        "assistant: You're welcome!",
        "final: You're welcome! (stop, 6 new messages)",
        "['note', 'user', 'assistant', 'toolResult', 'assistant', 'user', 'assistant']",
    ]


def test_readme_typed_output_example_runs() -> None:
    lines = _run(_marked_block("tau.agent output")).splitlines()
    # The lower-case answer streamed as partials and was rejected by the validator; the
    # second one was accepted, and the last partial is the output.
    assert any(line.startswith("partial: name='paris'") for line in lines)
    assert lines[-3:] == [
        "partial: name='Paris' population=2100000",
        "output: City(name='Paris', population=2100000)",
        "state: True",
    ]


def test_readme_mcp_example_runs() -> None:
    # A real stdio MCP server, started by the example itself.
    assert _run(_marked_block("tau.agent.mcp")).splitlines() == [
        "[('add_note', 'Add a note')]",
        "tool: noted: buy milk",
        "assistant: Noted.",
    ]
