"""Checks of the event grammar every tau stream must follow, shared by provider tests."""

from __future__ import annotations

from collections.abc import Sequence

from tau.ai import AssistantMessage, AssistantMessageEvent
from tau.ai.types import TextContent, ThinkingContent, ToolCall

_KIND = {"text": TextContent, "thinking": ThinkingContent, "toolcall": ToolCall}


def check_grammar(events: Sequence[AssistantMessageEvent], message: AssistantMessage) -> None:
    """``start`` first; per content index start, deltas, end; one terminal event, last; the
    deltas of each block add up to its final content; ``partial`` is always the same object."""
    assert events, "no events"
    assert events[0].type == "start"
    terminal = [e for e in events if e.type in ("done", "error")]
    assert len(terminal) == 1 and events[-1] is terminal[0]
    open_blocks: dict[int, str] = {}
    deltas: dict[int, list[str]] = {}
    closed: set[int] = set()
    partial = events[0].partial
    for event in events[1:-1]:
        assert event.partial is partial  # type: ignore[union-attr]
        kind, _, phase = event.type.partition("_")
        index = event.content_index  # type: ignore[union-attr]
        if phase == "start":
            assert index not in open_blocks and index not in closed
            assert isinstance(message.content[index], _KIND[kind])
            open_blocks[index] = kind
            deltas[index] = []
        elif phase == "delta":
            assert open_blocks.get(index) == kind
            deltas[index].append(event.delta)  # type: ignore[union-attr]
        elif phase == "end":
            assert open_blocks.pop(index) == kind
            closed.add(index)
            block = message.content[index]
            joined = "".join(deltas[index])
            if isinstance(block, TextContent):
                assert joined == block.text == event.content  # type: ignore[union-attr]
            elif isinstance(block, ThinkingContent):
                assert joined == block.thinking == event.content  # type: ignore[union-attr]
        else:
            raise AssertionError(f"unexpected event {event.type}")
    if events[-1].type == "done":
        assert not open_blocks, f"blocks left open: {open_blocks}"
        assert closed == set(range(len(message.content)))
