"""complete_sync and stream_sync, for scripts and notebooks."""

from __future__ import annotations

import asyncio
import time

import pytest

from tau.ai import AbortController, Context, Model, UserMessage, complete_sync, stream_sync
from tau.ai import entry as entry_module
from tau.ai.adapters import UnknownApiError
from tau.ai.providers.faux import FauxResponse, faux_model, text
from tau.ai.streaming import launch as launch_module

from .stream_checks import check_grammar

CTX = Context([UserMessage("hi")])


def test_complete_sync() -> None:
    message = complete_sync(faux_model([FauxResponse(["sync hello"])]), CTX)
    assert message.text == "sync hello"
    assert message.stop_reason == "stop"


def test_complete_sync_reports_errors_in_the_message() -> None:
    message = complete_sync(faux_model([FauxResponse([text("x")], error="bad gateway")]), CTX)
    assert message.stop_reason == "error" and message.error_message == "bad gateway"


async def test_complete_sync_inside_a_running_loop() -> None:
    message = complete_sync(faux_model([FauxResponse(["from a loop"])]), CTX)
    assert message.text == "from a loop"


def test_stream_sync_yields_the_whole_grammar() -> None:
    events = list(stream_sync(faux_model([FauxResponse(["one two three"], chunk_size=3)]), CTX))
    check_grammar(events)
    assert "".join(e.delta for e in events if e.type == "text_delta") == "one two three"  # type: ignore[union-attr]


def _background_producers() -> set[asyncio.Task[None]]:
    loop = entry_module._background_loop()

    async def running() -> set[asyncio.Task[None]]:
        return {t for t in launch_module._running if t.get_loop() is loop}

    return asyncio.run_coroutine_threadsafe(running(), loop).result(timeout=5)


def test_breaking_out_of_stream_sync_cancels_the_call() -> None:
    before = _background_producers()
    long = FauxResponse([text("x" * 2000)], chunk_size=1, delay=0.001)
    events = stream_sync(faux_model([long]), CTX)
    for event in events:
        if event.type == "text_delta":
            break
    assert _background_producers() - before  # still streaming when the loop is left
    events.close()  # what leaving a for loop does once the generator is dropped
    deadline = time.monotonic() + 5
    while _background_producers() - before and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not _background_producers() - before


def test_stream_sync_abort_signal() -> None:
    controller = AbortController()
    long = FauxResponse([text("y" * 2000)], chunk_size=1, delay=0.001)
    seen = []
    for event in stream_sync(faux_model([long]), CTX, signal=controller.signal):
        seen.append(event)
        if len(seen) == 5:
            controller.abort()
    check_grammar(seen)
    assert seen[-1].type == "error" and seen[-1].reason == "aborted"


def test_sync_helpers_raise_unknown_api_instead_of_hanging() -> None:
    model = Model(id="x", name="x", api="no-such-api", provider="p", base_url="")
    with pytest.raises(UnknownApiError, match="no-such-api"):
        list(stream_sync(model, CTX))
    with pytest.raises(UnknownApiError, match="no-such-api"):
        complete_sync(model, CTX)


def test_nested_sync_call_is_an_error_not_a_deadlock() -> None:
    inner = faux_model([FauxResponse(["inner"])])

    def hook(payload: dict[str, object], model: Model) -> None:
        complete_sync(inner, CTX)  # runs on the sync loop's own thread

    message = complete_sync(faux_model([FauxResponse(["outer"])]), CTX, on_payload=hook)
    assert message.stop_reason == "error"
    assert "use the async API there" in (message.error_message or "")

    def stream_hook(payload: dict[str, object], model: Model) -> None:
        list(stream_sync(inner, CTX))

    events = list(stream_sync(faux_model([FauxResponse(["outer"])]), CTX, on_payload=stream_hook))
    assert events[-1].type == "error"
    assert "use the async API there" in (events[-1].error.error_message or "")  # type: ignore[union-attr]
