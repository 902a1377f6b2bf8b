"""Shared checks of the stream contract for the tests."""

from __future__ import annotations

from collections.abc import Sequence

from tau.ai import AssistantMessageEvent

_KINDS = {"text", "thinking", "toolcall"}


def check_grammar(events: Sequence[AssistantMessageEvent]) -> None:
    """``start`` first; per content index start, deltas, end in order; exactly one terminal last.

    Blocks may stay open only when the stream ends with ``error``.
    """
    assert events, "no events"
    assert events[0].type == "start", events[0]
    assert sum(e.type == "start" for e in events) == 1
    terminals = [e for e in events if e.type in ("done", "error")]
    assert len(terminals) == 1, terminals
    assert events[-1] is terminals[0]
    open_blocks: dict[int, str] = {}
    next_index = 0
    for e in events[1:-1]:
        kind, _, phase = e.type.partition("_")
        assert kind in _KINDS and phase in ("start", "delta", "end"), e
        index = e.content_index  # type: ignore[union-attr]
        if phase == "start":
            assert index == next_index, (index, next_index)
            next_index += 1
            open_blocks[index] = kind
        elif phase == "delta":
            assert open_blocks.get(index) == kind, e
        else:
            assert open_blocks.pop(index, None) == kind, e
    if events[-1].type == "done":
        assert not open_blocks, open_blocks
    final = events[-1].message if events[-1].type == "done" else events[-1].error  # type: ignore[union-attr]
    assert len(final.content) == next_index
