"""Hostile run-state text: whatever a stored state turns into, from_json says what is wrong."""

from __future__ import annotations

import json

import pytest

from tau.agent import RUN_STATE_VERSION, RunState
from tau.ai import SerializationError

VALID = {
    "type": "tau.run_state",
    "version": 1,
    "agent": "tau",
    "output": None,
    "messages": [],
    "pending": [],
    "usage": {},
}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "state: not JSON"),
        ("[1, 2]", "not a tau run state"),
        (json.dumps({**VALID, "type": "other"}), "not a tau run state"),
        (json.dumps({**VALID, "version": RUN_STATE_VERSION + 1}), "written by a newer tau"),
        (json.dumps({**VALID, "version": "1"}), r"state.version: expected a positive integer"),
        (json.dumps({**VALID, "messages": {"a": 1}}), r"state.messages: expected a list"),
        (json.dumps({**VALID, "messages": [{"role": "robot"}]}), "unknown message role"),
        (
            json.dumps({**VALID, "pending": [{"id": 1}]}),
            r"state.pending\[0\].id: expected a string",
        ),
        (
            json.dumps(
                {**VALID, "pending": [{"id": "a", "toolName": "t", "arguments": {}, "kind": "x"}]}
            ),
            "kind: expected approval, external or subagent",
        ),
        (
            json.dumps({**VALID, "usage": {"turns": -1}}),
            r"state.usage.turns: expected a number >= 0",
        ),
        (json.dumps({**VALID, "usage": {"cost": "free"}}), r"state.usage.cost"),
        ("{" * 100_000, "state: not JSON"),
    ],
)
def test_a_broken_state_is_refused_with_the_field_named(text: str, message: str) -> None:
    with pytest.raises(SerializationError, match=message):
        RunState.from_json(text)


def test_an_older_version_field_set_reads() -> None:
    state = RunState.from_json(json.dumps(VALID))
    assert state.pending == [] and state.steering == [] and state.usage.turns == 0
