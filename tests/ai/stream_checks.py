"""Checks of the event grammar every tau stream must follow, and other helpers shared by the
provider tests."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tau.ai import (
    AbortController,
    AssistantMessage,
    AssistantMessageEvent,
    Context,
    Model,
    UserMessage,
    stream,
)
from tau.ai.core.events import (
    DoneEvent,
    ErrorEvent,
    StartEvent,
    TextDeltaEvent,
    TextEndEvent,
    ThinkingDeltaEvent,
    ThinkingEndEvent,
    ToolCallDeltaEvent,
)
from tau.ai.core.types import TextContent, ThinkingContent, ToolCall

_KIND = {"text": TextContent, "thinking": ThinkingContent, "toolcall": ToolCall}
_DELTAS = (TextDeltaEvent, ThinkingDeltaEvent, ToolCallDeltaEvent)


def check_grammar(
    events: Sequence[AssistantMessageEvent], message: AssistantMessage | None = None
) -> None:
    """``start`` first and only once; per content index start, deltas, end, indexes opened in
    order; one terminal event, last; the deltas of each text/thinking block add up to its final
    content; ``partial`` is always the same object. Blocks may stay open only when the stream
    ends with ``error``.

    ``message`` is the final message to check the blocks against; by default the terminal
    event's.
    """
    assert events, "no events"
    first, last = events[0], events[-1]
    assert isinstance(first, StartEvent), first
    assert sum(e.type == "start" for e in events) == 1
    terminal = [e for e in events if e.type in ("done", "error")]
    assert len(terminal) == 1 and last is terminal[0], terminal
    assert isinstance(last, DoneEvent | ErrorEvent)
    if message is None:
        message = last.message if isinstance(last, DoneEvent) else last.error
    final = message
    open_blocks: dict[int, str] = {}
    deltas: dict[int, list[str]] = {}
    closed: set[int] = set()
    next_index = 0
    partial = first.partial
    for event in events[1:-1]:
        kind, _, phase = event.type.partition("_")
        assert kind in _KIND and phase in ("start", "delta", "end"), event
        assert not isinstance(event, StartEvent | DoneEvent | ErrorEvent)
        assert event.partial is partial
        index = event.content_index
        if phase == "start":
            assert index == next_index, (index, next_index)
            assert index not in open_blocks and index not in closed
            assert isinstance(final.content[index], _KIND[kind])
            next_index += 1
            open_blocks[index] = kind
            deltas[index] = []
        elif phase == "delta":
            assert isinstance(event, _DELTAS)
            assert open_blocks.get(index) == kind, event
            deltas[index].append(event.delta)
        else:
            assert open_blocks.pop(index, None) == kind, event
            closed.add(index)
            block = final.content[index]
            joined = "".join(deltas[index])
            if isinstance(block, TextContent):
                assert isinstance(event, TextEndEvent)
                assert joined == block.text == event.content
            elif isinstance(block, ThinkingContent):
                assert isinstance(event, ThinkingEndEvent)
                assert joined == block.thinking == event.content
    assert len(final.content) == next_index
    if isinstance(last, DoneEvent):
        assert not open_blocks, f"blocks left open: {open_blocks}"
        assert closed == set(range(len(final.content)))


async def stream_aborting_at(
    model: Model, event_type: str, **options: Any
) -> tuple[list[AssistantMessageEvent], AssistantMessage]:
    """Stream ``hi`` to ``model`` and abort on the first event of ``event_type``.

    Returns every event seen and the final message, for the abort tests of each adapter.
    """
    controller = AbortController()
    s = stream(model, Context([UserMessage("hi")]), signal=controller.signal, **options)
    events = []
    async for event in s:
        events.append(event)
        if event.type == event_type:
            controller.abort()
    return events, await s.result()
