"""Fallback models over real HTTP: local servers on 127.0.0.1 play the providers.

Each test makes the primary fail the way a provider does (refused connection, 429 storm, 529,
a stalled first byte, a stream cut mid-way) and checks what the consumer of
``fallback_stream_fn``'s stream receives: the fallback's answer and nothing of the primary, or
one clear error.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
from typing import Any

import pytest

import tau.ai.streaming.http as tau_http
from tau.ai import (
    AbortController,
    AssistantMessageEvent,
    Context,
    ErrorEvent,
    FailedAttempt,
    FallbackEventStream,
    Model,
    StartEvent,
    UserMessage,
    fallback_stream_fn,
)
from tau.ai.capabilities.fallback import DEFAULT_FALL_BACK_ON
from tests.ai.fault_cases import CASES
from tests.ai.servers import (
    CLOSE,
    SSE_HEADERS,
    STALL,
    LocalServer,
    Reply,
    refused_url,
    wait_until,
)

ANTHROPIC, OPENAI = CASES[0], CASES[1]
CONTEXT = Context(messages=[UserMessage("hi")])
TIMEOUT = 10.0


@pytest.fixture(autouse=True)
def fast_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tau_http._retry, "BACKOFF_BASE_S", 0.01)


def answer(case: Any, *pieces: str) -> Reply:
    return Reply(200, {"content-type": case.content_type}, case.events(list(pieces)))


def error(case: Any, status: int, message: str, **headers: str) -> Reply:
    return Reply(
        status, {"content-type": "application/json", **headers}, [case.error_body(status, message)]
    )


def named(model: Model, id: str) -> Model:
    return dataclasses.replace(model, id=id, name=id)


async def run(stream: FallbackEventStream) -> list[AssistantMessageEvent]:
    async def drain() -> list[AssistantMessageEvent]:
        return [event async for event in stream]

    return await asyncio.wait_for(drain(), TIMEOUT)


def only_from(events: list[AssistantMessageEvent], model_id: str) -> None:
    """Every event the consumer got belongs to one message of ``model_id``: one start, one end."""
    assert isinstance(events[0], StartEvent)
    assert sum(isinstance(e, StartEvent) for e in events) == 1
    partial = events[0].partial
    for event in events[:-1]:
        assert event.partial is partial  # type: ignore[union-attr]
    assert partial.model == model_id
    assert events[-1].type in ("done", "error")


# --------------------------------------------------------------------------- the primary fails first


async def test_refused_primary_falls_back_and_nothing_of_it_reaches_the_consumer() -> None:
    async with LocalServer([answer(OPENAI, "Hello", " there")]) as backup:
        primary = ANTHROPIC.model(refused_url())
        stream = fallback_stream_fn([OPENAI.model(backup.url)])(primary, CONTEXT, api_key="k")
        events = await run(stream)
    only_from(events, "gpt-x")
    final = await stream.result()
    assert (final.text, final.stop_reason, final.api, final.model) == (
        "Hello there",
        "stop",
        "openai-completions",
        "gpt-x",
    )
    [failed] = stream.failed_attempts
    assert failed.kind == "connection"
    assert failed.model is primary and failed.next_model is not None
    assert failed.error_message.startswith("Could not connect to 127.0.0.1:")
    assert not failed.discarded


async def test_429_forever_falls_back_after_taus_own_retries() -> None:
    busy = [error(OPENAI, 429, "rate limited", **{"retry-after-ms": "1"}) for _ in range(4)]
    async with (
        LocalServer(busy) as primary_server,
        LocalServer([answer(ANTHROPIC, "from claude")]) as backup,
    ):
        stream = fallback_stream_fn([ANTHROPIC.model(backup.url)])(
            OPENAI.model(primary_server.url), CONTEXT, api_key="k"
        )
        events = await run(stream)
        # max_retries defaults to 3: four requests, then the fallback.
        assert len(primary_server.requests) == 4
    only_from(events, "claude-x")
    assert (await stream.result()).text == "from claude"
    [failed] = stream.failed_attempts
    assert (failed.kind, failed.status) == ("rate_limit", 429)
    assert failed.error_message.startswith("429 ")


async def test_anthropic_529_falls_back() -> None:
    overloaded = [error(ANTHROPIC, 529, "Overloaded") for _ in range(2)]
    async with (
        LocalServer(overloaded) as primary_server,
        LocalServer([answer(OPENAI, "ok")]) as backup,
    ):
        stream = fallback_stream_fn([OPENAI.model(backup.url)])(
            ANTHROPIC.model(primary_server.url), CONTEXT, api_key="k", max_retries=1
        )
        events = await run(stream)
    only_from(events, "gpt-x")
    [failed] = stream.failed_attempts
    assert (failed.kind, failed.status) == ("overloaded", 529)
    assert "overloaded_error: Overloaded" in failed.error_message


async def test_anthropic_overloaded_event_inside_a_200_stream_falls_back() -> None:
    # The response started (message_start is a `start` event), then the provider gave up.
    started = ANTHROPIC.events([])[:1]
    overloaded = b'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n'
    async with (
        LocalServer([Reply(200, SSE_HEADERS, [*started, overloaded])]) as primary_server,
        LocalServer([answer(OPENAI, "ok")]) as backup,
    ):
        stream = fallback_stream_fn([OPENAI.model(backup.url)])(
            ANTHROPIC.model(primary_server.url), CONTEXT, api_key="k"
        )
        events = await run(stream)
    only_from(events, "gpt-x")
    assert [a.kind for a in stream.failed_attempts] == ["overloaded"]


async def test_first_byte_timeout_falls_back() -> None:
    async with (
        LocalServer([Reply(200, SSE_HEADERS, [STALL])]) as primary_server,
        LocalServer([answer(OPENAI, "in time")]) as backup,
    ):
        stream = fallback_stream_fn([OPENAI.model(backup.url)])(
            ANTHROPIC.model(primary_server.url),
            CONTEXT,
            api_key="k",
            timeout={"first_byte": 0.3},
        )
        events = await run(stream)
    only_from(events, "gpt-x")
    [failed] = stream.failed_attempts
    assert failed.kind == "timeout"
    assert "first-byte timeout" in failed.error_message


async def test_a_request_the_provider_rejects_does_not_fall_back() -> None:
    async with (
        LocalServer([error(OPENAI, 401, "bad key")]) as primary_server,
        LocalServer([answer(OPENAI, "never")]) as backup,
    ):
        stream = fallback_stream_fn([OPENAI.model(backup.url)])(
            OPENAI.model(primary_server.url), CONTEXT, api_key="k"
        )
        events = await run(stream)
        assert backup.requests == []
    assert isinstance(events[-1], ErrorEvent)
    assert events[-1].error.error_message is not None
    assert events[-1].error.error_message.startswith("401 ")
    assert stream.failed_attempts == []


async def test_context_overflow_falls_back_only_when_asked() -> None:
    too_long = error(ANTHROPIC, 400, "prompt is too long: 250000 tokens > 200000 maximum")
    async with (
        LocalServer([too_long, too_long]) as primary_server,
        LocalServer([answer(OPENAI, "bigger window")]) as backup,
    ):
        primary = ANTHROPIC.model(primary_server.url)
        bigger = OPENAI.model(backup.url)
        default = await run(fallback_stream_fn([bigger])(primary, CONTEXT, api_key="k"))
        assert isinstance(default[-1], ErrorEvent) and backup.requests == []
        stream = fallback_stream_fn(
            [bigger], fall_back_on=DEFAULT_FALL_BACK_ON | {"context_overflow"}
        )(primary, CONTEXT, api_key="k")
        events = await run(stream)
    only_from(events, "gpt-x")
    assert [a.kind for a in stream.failed_attempts] == ["context_overflow"]


async def test_any_predicate_over_the_failed_attempt() -> None:
    seen: list[FailedAttempt] = []

    def teapots_only(attempt: FailedAttempt) -> bool:
        seen.append(attempt)
        return attempt.status == 418 and "teapot" in attempt.error_message

    async with (
        LocalServer([error(OPENAI, 418, "I am a teapot")]) as primary_server,
        LocalServer([answer(OPENAI, "coffee")]) as backup,
    ):
        stream = fallback_stream_fn([OPENAI.model(backup.url)], fall_back_on=teapots_only)(
            OPENAI.model(primary_server.url), CONTEXT, api_key="k"
        )
        await run(stream)
    assert (await stream.result()).text == "coffee"
    assert [a.kind for a in seen] == ["other"]


# --------------------------------------------------------------------------- after content


def cut_after(case: Any, *pieces: str) -> Reply:
    """A response that streams ``pieces`` and then loses its connection."""
    events = case.events(list(pieces))
    return Reply(200, SSE_HEADERS, [*events[: 1 + len(pieces)], CLOSE])


async def test_midstream_failure_is_the_error_and_never_a_silent_switch() -> None:
    async with (
        LocalServer([cut_after(OPENAI, "Half an ans")]) as primary_server,
        LocalServer([answer(OPENAI, "never")]) as backup,
    ):
        stream = fallback_stream_fn([OPENAI.model(backup.url)])(
            OPENAI.model(primary_server.url), CONTEXT, api_key="k"
        )
        events = await run(stream)
        assert backup.requests == []
    only_from(events, "gpt-x")
    final = await stream.result()
    assert final.stop_reason == "error" and final.text == "Half an ans"
    assert final.error_message is not None and "lost while streaming" in final.error_message
    assert stream.failed_attempts == []


async def test_midstream_restart_when_opted_in_marks_the_discarded_partial() -> None:
    async with (
        LocalServer([cut_after(OPENAI, "Half an ans")]) as primary_server,
        LocalServer([answer(ANTHROPIC, "A whole answer")]) as backup,
    ):
        stream = fallback_stream_fn([ANTHROPIC.model(backup.url)], restart_on_midstream_error=True)(
            OPENAI.model(primary_server.url), CONTEXT, api_key="k"
        )
        events = await run(stream)
    starts = [i for i, e in enumerate(events) if isinstance(e, StartEvent)]
    assert len(starts) == 2 and starts[0] == 0
    # Before the marker: the primary's partial; after it: only the fallback's message.
    first, second = events[0].partial, events[starts[1]].partial  # type: ignore[union-attr]
    assert first.model == "gpt-x" and second.model == "claude-x"
    assert all(e.partial is first for e in events[: starts[1]])  # type: ignore[union-attr]
    assert all(e.partial is second for e in events[starts[1] : -1])  # type: ignore[union-attr]
    final = await stream.result()
    assert final is second and final.text == "A whole answer"
    [failed] = stream.failed_attempts
    assert failed.discarded and failed.kind == "connection"
    assert failed.message.text == "Half an ans"


# --------------------------------------------------------------------------- all failing, abort


async def test_all_failing_is_one_error_naming_each_attempt() -> None:
    unavailable = [error(OPENAI, 503, "down for maintenance", **{"retry-after-ms": "1"})] * 4
    async with (
        LocalServer(unavailable) as second,
        LocalServer([error(ANTHROPIC, 529, "Overloaded")] * 4) as third,
    ):
        models = [
            named(OPENAI.model(second.url), "gpt-b"),
            named(ANTHROPIC.model(third.url), "claude-c"),
        ]
        primary = named(ANTHROPIC.model(refused_url()), "claude-a")
        stream = fallback_stream_fn(models)(primary, CONTEXT, api_key="k")
        events = await run(stream)
    only_from(events, "claude-c")
    final = await stream.result()
    assert final.stop_reason == "error" and final.model == "claude-c"
    text = final.error_message or ""
    assert text.startswith("All 3 models failed: [fault/claude-a] Could not connect to 127.0.0.1:")
    assert "; [fault/gpt-b] 503 server_error: down for maintenance; " in text
    assert text.endswith("[fault/claude-c] 529 overloaded_error: Overloaded")
    assert [a.model.id for a in stream.failed_attempts] == ["claude-a", "gpt-b"]


async def test_chain_stopping_on_an_error_not_fallen_back_on_says_so() -> None:
    async with LocalServer([error(OPENAI, 400, "bad request")]) as second:
        models = [
            named(OPENAI.model(second.url), "gpt-b"),
            named(OPENAI.model(refused_url()), "gpt-c"),
        ]
        stream = fallback_stream_fn(models)(
            named(OPENAI.model(refused_url()), "gpt-a"), CONTEXT, api_key="k"
        )
        await run(stream)
    text = (await stream.result()).error_message or ""
    assert text.startswith(
        "2 models failed (1 not tried: the last failure is not one to fall back on):"
    )
    assert "[fault/gpt-a] Could not connect" in text and "[fault/gpt-b] 400 " in text


async def test_abort_during_a_fallback_attempt_ends_cleanly() -> None:
    controller = AbortController()
    async with (
        LocalServer([Reply(200, SSE_HEADERS, [STALL])]) as second,
        LocalServer([answer(OPENAI, "never")]) as third,
    ):
        models = [ANTHROPIC.model(second.url), OPENAI.model(third.url)]
        stream = fallback_stream_fn(models)(
            OPENAI.model(refused_url()), CONTEXT, api_key="k", signal=controller.signal
        )
        consumer = asyncio.ensure_future(run(stream))
        await wait_until(lambda: len(second.requests) == 1)
        controller.abort("user pressed stop")
        events = await consumer
        assert third.requests == []
        await wait_until(lambda: second.open_connections == 0)
    final = events[-1]
    assert isinstance(final, ErrorEvent) and final.reason == "aborted"
    assert final.error.error_message == "user pressed stop"
    assert sum(isinstance(e, StartEvent) for e in events) == 1
    assert [a.kind for a in stream.failed_attempts] == ["connection"]


async def test_leaving_the_stream_during_a_fallback_attempt_closes_it() -> None:
    async with LocalServer([Reply(200, SSE_HEADERS, [STALL])]) as second:
        stream = fallback_stream_fn([ANTHROPIC.model(second.url)])(
            OPENAI.model(refused_url()), CONTEXT, api_key="k"
        )
        await wait_until(lambda: len(second.requests) == 1)
        await stream.aclose()
        await wait_until(lambda: second.open_connections == 0)
        final = await asyncio.wait_for(stream.result(), TIMEOUT)
    assert final.stop_reason == "aborted"


# --------------------------------------------------------------------------- options per model


async def test_reasoning_is_mapped_by_each_models_own_adapter() -> None:
    async with (
        LocalServer([error(ANTHROPIC, 529, "Overloaded")]) as primary_server,
        LocalServer([answer(OPENAI, "thought about it")]) as backup,
    ):
        primary = dataclasses.replace(ANTHROPIC.model(primary_server.url), reasoning=True)
        fallback = dataclasses.replace(OPENAI.model(backup.url), reasoning=True)
        stream = fallback_stream_fn([fallback])(
            primary, CONTEXT, api_key="k", reasoning="high", max_retries=0
        )
        await run(stream)
        sent_primary = json.loads(primary_server.requests[0].body)
        sent_fallback = json.loads(backup.requests[0].body)
    assert sent_primary["thinking"]["type"] == "enabled"
    assert "reasoning_effort" not in sent_primary
    assert sent_fallback["reasoning_effort"] == "high"
    assert "thinking" not in sent_fallback


async def test_the_api_key_of_one_provider_never_goes_to_another() -> None:
    asked: list[str] = []

    async def get_api_key(provider: str) -> str:
        asked.append(provider)
        return f"key-of-{provider}"

    async with (
        LocalServer([error(OPENAI, 503, "down")]) as primary_server,
        LocalServer([answer(OPENAI, "same provider")]) as same,
        LocalServer([answer(OPENAI, "other provider")]) as other,
    ):
        other_provider = dataclasses.replace(OPENAI.model(other.url), provider="elsewhere")
        stream = fallback_stream_fn([other_provider], get_api_key=get_api_key)(
            OPENAI.model(primary_server.url), CONTEXT, api_key="primary-secret", max_retries=0
        )
        await run(stream)
        assert primary_server.requests[0].headers["authorization"] == "Bearer primary-secret"
        assert other.requests[0].headers["authorization"] == "Bearer key-of-elsewhere"
        # A fallback of the same provider is sent the caller's key.
        stream = fallback_stream_fn([OPENAI.model(same.url)], get_api_key=get_api_key)(
            OPENAI.model(refused_url()), CONTEXT, api_key="primary-secret"
        )
        await run(stream)
        assert same.requests[0].headers["authorization"] == "Bearer primary-secret"
    assert asked == ["elsewhere"]


async def test_on_fallback_hears_each_failure_before_the_next_model_starts() -> None:
    heard: list[tuple[str, str | None, int]] = []

    async with LocalServer([answer(OPENAI, "ok")]) as backup:

        async def on_fallback(attempt: FailedAttempt) -> None:
            following = attempt.next_model.id if attempt.next_model else None
            heard.append((attempt.model.id, following, len(backup.requests)))

        stream = fallback_stream_fn([OPENAI.model(backup.url)], on_fallback=on_fallback)(
            named(OPENAI.model(refused_url()), "gpt-a"), CONTEXT, api_key="k"
        )
        await run(stream)
        assert len(backup.requests) == 1
    assert heard == [("gpt-a", "gpt-x", 0)]


async def test_each_fallback_is_a_debug_line_under_tau_without_the_key(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # The primary echoes the key in its error body, as some providers do.
    echo = "Incorrect API key provided: sk-secret-primary"
    async with (
        LocalServer([error(OPENAI, 401, echo)]) as primary_server,
        LocalServer([answer(ANTHROPIC, "from claude")]) as backup,
    ):
        stream = fallback_stream_fn(
            [ANTHROPIC.model(backup.url)], fall_back_on=lambda attempt: True
        )(OPENAI.model(primary_server.url), CONTEXT, api_key="sk-secret-primary")
        with caplog.at_level(logging.DEBUG, logger="tau"):
            await run(stream)
    lines = [r.getMessage() for r in caplog.records if r.name == "tau.ai.fallback"]
    # The rule: "<provider>/<id> failed (<kind>, status <status>); trying <provider>/<id>".
    assert lines == ["fallback: fault/gpt-x failed (other, status 401); trying fault/claude-x"]
    assert all("sk-secret" not in r.getMessage() for r in caplog.records)
