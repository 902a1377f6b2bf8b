"""Issue 24 item 15: a deep answer to a recursive output schema is a retry, not a crash.

A valid 600-level answer to ``{"$ref": "#"}`` in native mode ended the run with a raw "maximum
recursion depth exceeded". Validation depth is bounded: the answer is rejected with the usual
message and a retry, and ``No valid output (…)`` when no attempt is left, as in tool mode.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tau.agent import Agent
from tau.ai import UserMessage
from tau.ai.providers.faux import FauxResponse, faux_calls, faux_model, text, tool_call
from tau.ai.structured import OUTPUT_TOOL_NAME

TREE = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "child": {"$ref": "#"}},
    "additionalProperties": False,
}


def _nested(levels: int) -> dict[str, Any]:
    value: dict[str, Any] = {"name": "leaf"}
    for _ in range(levels):
        value = {"name": "node", "child": value}
    return value


def _answer(value: dict[str, Any], mode: str) -> FauxResponse:
    import json

    if mode == "tool":
        return FauxResponse([tool_call(OUTPUT_TOOL_NAME, value)])
    return FauxResponse([text(json.dumps(value))])


@pytest.mark.parametrize("mode", ["native", "tool"])
async def test_a_600_level_answer_is_rejected_and_retried(mode: str) -> None:
    model = faux_model([_answer(_nested(600), mode), _answer(_nested(2), mode)])
    agent = Agent(model=model, output_type=TREE, output_mode=mode)  # type: ignore[arg-type]
    result = await asyncio.wait_for(agent.prompt("a tree"), 60)
    assert result.error is None, result.error
    assert result.output == _nested(2)
    retry_context = faux_calls(model)[1][0]
    told = str(retry_context.messages[-1].content)
    assert "nested deeper than" in told
    if mode == "native":
        assert isinstance(retry_context.messages[-1], UserMessage)


async def test_only_deep_answers_end_in_no_valid_output() -> None:
    deep = _answer(_nested(600), "native")
    agent = Agent(model=faux_model([deep, deep, deep]), output_type=TREE, output_mode="native")
    result = await asyncio.wait_for(agent.prompt("a tree"), 60)
    assert result.error is not None
    assert result.error.startswith("No valid output (")
    assert "nested deeper than" in result.error
    assert "recursion" not in result.error
