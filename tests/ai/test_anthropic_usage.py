"""Anthropic usage with ``iterations``: which model calls count toward this message.

Streams written from the documented ``message_delta.usage`` shape: the top-level counts
already include the executor's own ``message`` iterations; ``compaction`` iterations are not
included and are added (all four counts); ``advisor_message`` iterations are another model's
call, billed at that model's price, and never added; with a ``fallback_message`` the top level
describes the served answer and is used as it is; unknown types are ignored.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.ai.test_anthropic import block, delta, run_stream, start, stop
from tests.factories import sse


def iteration(kind: str, i: int, o: int, read: int = 0, write: int = 0, **extra: Any) -> Any:
    return {
        "type": kind,
        "input_tokens": i,
        "output_tokens": o,
        "cache_read_input_tokens": read,
        "cache_creation_input_tokens": write,
        **extra,
    }


async def usage_of(top: dict[str, int], iterations: list[Any]) -> tuple[int, int, int, int, int]:
    body = sse(
        start(input_tokens=top["input_tokens"], cache_read=0, cache_write=0),
        block(0, {"type": "text", "text": ""}),
        delta(0, type="text_delta", text="ok"),
        stop(0),
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn"},
            "usage": {**top, "iterations": iterations},
        },
        {"type": "message_stop"},
    )
    events, message, _ = await run_stream(body)
    assert events[-1].type == "done"
    u = message.usage
    assert u.total_tokens == u.input + u.output + u.cache_read + u.cache_write
    assert u.cost.input == pytest.approx(3 * u.input / 1e6)  # the model's price, no one else's
    return u.input, u.output, u.cache_read, u.cache_write, u.total_tokens


TOP = {
    "input_tokens": 300,
    "output_tokens": 40,
    "cache_read_input_tokens": 1000,
    "cache_creation_input_tokens": 50,
}


async def test_message_iterations_are_already_in_the_top_level() -> None:
    found = await usage_of(TOP, [iteration("message", 100, 10), iteration("message", 200, 30)])
    assert found == (300, 40, 1000, 50, 1390)


async def test_compaction_iterations_are_added_in_full() -> None:
    found = await usage_of(
        TOP, [iteration("compaction", 80, 60, read=5000, write=7), iteration("message", 300, 40)]
    )
    assert found == (380, 100, 6000, 57, 6537)


async def test_advisor_iterations_are_never_added() -> None:
    found = await usage_of(
        TOP,
        [
            iteration("message", 120, 25),
            iteration("advisor_message", 2500, 18, model="claude-opus-4-8"),
            iteration("message", 180, 15),
        ],
    )
    assert found == (300, 40, 1000, 50, 1390)


async def test_with_a_fallback_the_top_level_is_used_as_is() -> None:
    found = await usage_of(
        TOP,
        [
            iteration("message", 900, 3),
            iteration("compaction", 80, 60, read=5000),
            iteration("fallback_message", 300, 40, model="claude-sonnet-4-5"),
        ],
    )
    assert found == (300, 40, 1000, 50, 1390)


async def test_unknown_iteration_types_are_ignored() -> None:
    found = await usage_of(TOP, [iteration("something_new", 999, 999), "not an object"])
    assert found == (300, 40, 1000, 50, 1390)


async def test_partial_usage_in_message_delta_keeps_the_rest() -> None:
    # A proxy sends only output_tokens at the end; the input from message_start stands.
    body = sse(
        start(input_tokens=20, cache_read=5, cache_write=7),
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn"},
            "usage": {
                "output_tokens": 9,
                "input_tokens": None,
                "iterations": [iteration("compaction", 1, 2, read=3, write=4)],
            },
        },
        {"type": "message_stop"},
    )
    _, message, _ = await run_stream(body)
    u = message.usage
    assert (u.input, u.output, u.cache_read, u.cache_write) == (21, 11, 8, 11)
