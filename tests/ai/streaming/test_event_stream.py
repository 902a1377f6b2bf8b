"""EventStream on its own: buffering, waiting, terminal handling, drops, results."""

from __future__ import annotations

import asyncio

import pytest

from tau.ai import StreamEndedError
from tau.ai.adapters import EventStream
from tau.ai.providers.faux import faux_model
from tau.ai.streaming.builder import MessageBuilder
from tau.ai.streaming.event_stream import AssistantMessageEventStream


def _stream() -> EventStream[str, str]:
    return EventStream(lambda e: e.startswith("end:"), lambda e: e.removeprefix("end:"))


async def test_fast_producer_buffers() -> None:
    s = _stream()
    for e in ["a", "b", "end:R"]:
        s.push(e)
    assert [e async for e in s] == ["a", "b", "end:R"]
    assert await s.result() == "R"


async def test_fast_consumer_waits_and_gets_each_event() -> None:
    s = _stream()
    got: list[str] = []

    async def consume() -> None:
        async for e in s:
            got.append(e)

    task = asyncio.create_task(consume())
    await asyncio.sleep(0)
    for e in ["a", "b"]:
        s.push(e)
        await asyncio.sleep(0)
        assert got[-1] == e  # handed straight to the waiting consumer
    s.push("end:R")
    await asyncio.wait_for(task, timeout=1)
    assert got == ["a", "b", "end:R"]


async def test_events_after_the_terminal_are_dropped() -> None:
    s = _stream()
    s.push("a")
    s.push("end:first")
    s.push("late")
    s.push("end:second")
    s.end("third")
    assert [e async for e in s] == ["a", "end:first"]
    assert await s.result() == "first"


async def test_builder_events_after_done_are_dropped() -> None:
    s = AssistantMessageEventStream()
    b = MessageBuilder(faux_model(), s)
    i = b.open_text()
    b.text_delta(i, "x")
    b.done()
    b.fail("ignored")
    types = [e.type async for e in s]
    assert types == ["start", "text_start", "text_delta", "text_end", "done"]
    assert (await s.result()).stop_reason == "stop"


async def test_end_with_a_result_stops_waiting_consumers() -> None:
    s = _stream()

    async def consume() -> list[str]:
        return [e async for e in s]

    task = asyncio.create_task(consume())
    await asyncio.sleep(0)
    s.push("a")
    s.end("R")
    assert await asyncio.wait_for(task, timeout=1) == ["a"]
    assert await s.result() == "R"


async def test_end_without_result_raises_instead_of_hanging() -> None:
    s = _stream()
    waiting = asyncio.create_task(s.result())
    await asyncio.sleep(0)
    s.end()
    with pytest.raises(StreamEndedError):
        await asyncio.wait_for(waiting, timeout=1)
    with pytest.raises(StreamEndedError):
        await asyncio.wait_for(s.result(), timeout=1)
    # result() asked for only after end() does not hang either.
    s2 = _stream()
    s2.end()
    with pytest.raises(StreamEndedError, match="without a terminal event"):
        await asyncio.wait_for(s2.result(), timeout=1)


async def test_result_is_shielded_from_a_cancelled_waiter() -> None:
    s = _stream()
    first = asyncio.create_task(s.result())
    await asyncio.sleep(0)
    first.cancel()
    await asyncio.gather(first, return_exceptions=True)
    s.push("end:R")
    assert await asyncio.wait_for(s.result(), timeout=1) == "R"


async def test_cancelled_waiter_does_not_swallow_an_event() -> None:
    s = _stream()

    async def consume() -> list[str]:
        return [e async for e in s]

    dead = asyncio.create_task(consume())
    await asyncio.sleep(0)
    dead.cancel()
    await asyncio.gather(dead, return_exceptions=True)
    s.push("a")
    s.push("end:R")
    assert [e async for e in s] == ["a", "end:R"]
