"""Aborts (signal, other thread, task cancellation) and consumers that leave early.

Each abort ends the stream with exactly one ``error`` event, reason ``aborted``, carrying the
content that had arrived; a consumer that stops early cancels the producer.
"""

from __future__ import annotations

import asyncio
import threading

from tau.ai import AbortController, AssistantMessageEvent, Context, UserMessage, stream
from tau.ai.providers.faux import FauxResponse, faux_model, text, tool_call
from tau.ai.streaming import launch as launch_module

from .stream_checks import check_grammar

CTX = Context([UserMessage("go")])
LONG_TEXT = "".join(f"word{i} " for i in range(500))


def _slow(*blocks: object) -> FauxResponse:
    return FauxResponse(list(blocks), chunk_size=1, delay=0.002)  # type: ignore[arg-type]


def _producers() -> list[asyncio.Task[None]]:
    # Only this test's loop: other tests' streams are none of its business.
    loop = asyncio.get_running_loop()
    return [t for t in launch_module._running if t.get_loop() is loop]


async def _no_producers_left() -> None:
    for _ in range(200):
        if not _producers():
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"producer tasks still running: {_producers()}")


def _assert_aborted(events: list[AssistantMessageEvent]) -> None:
    check_grammar(events)
    final = events[-1]
    assert final.type == "error" and final.reason == "aborted", final
    assert final.error.stop_reason == "aborted"
    assert final.error.error_message


async def test_abort_mid_text() -> None:
    controller = AbortController()
    s = stream(faux_model([_slow(text(LONG_TEXT))]), CTX, signal=controller.signal)
    events = []
    async for e in s:
        events.append(e)
        if e.type == "text_delta" and len(events) == 12:
            controller.abort()
    _assert_aborted(events)
    got = events[-1].error.text  # type: ignore[union-attr]
    assert got and LONG_TEXT.startswith(got) and len(got) < len(LONG_TEXT)
    assert (await s.result()) is events[-1].error  # type: ignore[union-attr]
    await _no_producers_left()


async def test_abort_mid_tool_call() -> None:
    controller = AbortController()
    call = tool_call("write", {"path": "out.txt", "text": LONG_TEXT}, id="c1")
    s = stream(faux_model([_slow(text("ok"), call)]), CTX, signal=controller.signal)
    events = []
    async for e in s:
        events.append(e)
        if e.type == "toolcall_delta" and e.partial.content[1].arguments.get("text"):  # type: ignore[union-attr]
            controller.abort("user pressed escape")
    _assert_aborted(events)
    message = events[-1].error  # type: ignore[union-attr]
    assert message.error_message == "user pressed escape"  # the reason given to abort()
    assert message.text == "ok"
    partial_call = message.content[1]
    assert partial_call.id == "c1" and partial_call.name == "write"  # type: ignore[union-attr]
    args = partial_call.arguments  # type: ignore[union-attr]
    assert isinstance(args, dict) and args["path"] == "out.txt"
    assert LONG_TEXT.startswith(args["text"]) and args["text"] != LONG_TEXT


async def test_abort_from_another_thread() -> None:
    controller = AbortController()
    s = stream(faux_model([_slow(text(LONG_TEXT))]), CTX, signal=controller.signal)
    timer = threading.Timer(0.05, controller.abort)
    timer.start()
    try:
        events = await asyncio.wait_for(_gather(s), timeout=10)
    finally:
        timer.cancel()
    _assert_aborted(events)
    assert events[-1].error.text  # type: ignore[union-attr]


async def test_already_aborted_signal() -> None:
    controller = AbortController()
    controller.abort("too late")
    model = faux_model([FauxResponse(["never"])])
    events = await _gather(stream(model, CTX, signal=controller.signal))
    assert [e.type for e in events] == ["start", "error"]
    _assert_aborted(events)
    assert events[-1].error.error_message == "too late"  # type: ignore[union-attr]


async def test_consumer_task_cancellation_aborts_the_producer() -> None:
    s = stream(faux_model([_slow(text(LONG_TEXT))]), CTX)
    seen: list[AssistantMessageEvent] = []
    ten_seen = asyncio.Event()

    async def consume() -> None:
        async for e in s:
            seen.append(e)
            if len(seen) == 10:
                ten_seen.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(ten_seen.wait(), timeout=5)
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    message = await asyncio.wait_for(s.result(), timeout=5)
    assert message.stop_reason == "aborted"
    assert message.text and LONG_TEXT.startswith(message.text)
    await _no_producers_left()


async def test_breaking_early_cancels_the_producer() -> None:
    s = stream(faux_model([_slow(text(LONG_TEXT))]), CTX)
    async for e in s:
        if e.type == "text_delta":
            break
    message = await asyncio.wait_for(s.result(), timeout=5)
    assert message.stop_reason == "aborted"
    assert len(message.text) < len(LONG_TEXT)
    await _no_producers_left()
    current = asyncio.current_task()
    assert [t for t in asyncio.all_tasks() if t is not current and not t.done()] == []


async def test_async_with_closes_deterministically() -> None:
    async with stream(faux_model([_slow(text(LONG_TEXT))]), CTX) as s:
        async for e in s:
            if e.type == "text_delta":
                break
    # No reliance on the iterator being garbage-collected: the producer is already cancelled.
    message = await asyncio.wait_for(s.result(), timeout=5)
    assert message.stop_reason == "aborted"
    await _no_producers_left()


async def test_result_after_a_complete_iteration_and_after_break() -> None:
    s = stream(faux_model([FauxResponse(["done text"])]), CTX)
    async for _ in s:
        pass
    assert (await s.result()).text == "done text"
    # A stream that already finished is not disturbed by a late break.
    s2 = stream(faux_model([FauxResponse(["short"], chunk_size=0)]), CTX)
    await s2.result()
    async for _ in s2:
        break
    assert (await s2.result()).stop_reason == "stop"


async def test_two_consumers_share_the_events_and_both_finish() -> None:
    s = stream(faux_model([FauxResponse([text(LONG_TEXT[:200])], chunk_size=1)]), CTX)
    a: list[AssistantMessageEvent] = []
    b: list[AssistantMessageEvent] = []

    async def consume(into: list[AssistantMessageEvent]) -> None:
        async for e in s:
            into.append(e)

    await asyncio.wait_for(asyncio.gather(consume(a), consume(b)), timeout=5)
    merged = a + b
    assert sum(e.type in ("done", "error") for e in merged) == 1
    assert len({id(e) for e in merged}) == len(merged)  # each event went to one consumer
    assert len(merged) == 1 + 1 + 200 + 1 + 1
    assert (await s.result()).text == LONG_TEXT[:200]


async def test_one_consumer_leaving_does_not_cancel_for_the_other() -> None:
    s = stream(faux_model([FauxResponse([text(LONG_TEXT[:100])], chunk_size=1)]), CTX)
    rest: list[AssistantMessageEvent] = []

    async def leaver() -> None:
        async for _ in s:
            break

    async def stayer() -> None:
        async for e in s:
            rest.append(e)

    await asyncio.wait_for(asyncio.gather(leaver(), stayer()), timeout=5)
    assert (await s.result()).stop_reason == "stop"
    assert rest[-1].type == "done"


async def test_late_consumer_of_a_finished_stream_does_not_hang() -> None:
    s = stream(faux_model([FauxResponse(["x"])]), CTX)
    first = await _gather(s)
    second = await asyncio.wait_for(_gather(s), timeout=1)
    assert first[-1].type == "done" and second == []


async def _gather(s: object) -> list[AssistantMessageEvent]:
    return [e async for e in s]  # type: ignore[attr-defined]


async def test_cancelling_complete_cancels_the_call() -> None:
    from tau.ai import complete, complete_simple

    for entry in (complete, complete_simple):
        model = faux_model([_slow(text(LONG_TEXT))])
        task = asyncio.create_task(entry(model, CTX))
        await asyncio.sleep(0.05)
        assert _producers()  # the call is streaming
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        assert task.cancelled()
        await _no_producers_left()


async def test_complete_with_a_timeout_cancels_the_call() -> None:
    from tau.ai import complete

    model = faux_model([_slow(text(LONG_TEXT))])
    try:
        await asyncio.wait_for(complete(model, CTX), timeout=0.05)
    except TimeoutError:
        pass
    else:
        raise AssertionError("expected a timeout")
    await _no_producers_left()
