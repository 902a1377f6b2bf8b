"""Fault injection: every streaming adapter against a local server that misbehaves in every usual way.

For each adapter and each fault the consumer gets exactly one terminal event, last; its message
says what broke (with the provider's message and status where there is one); retries happen
only before the first byte and only for retryable statuses; abort works at every point; nothing
escapes iteration; and no task or connection is left behind.
"""

from __future__ import annotations

import asyncio
import os

import httpx2
import pytest

import tau
from tau.ai import AbortController, AssistantMessageEvent, Context, UserMessage, stream
from tests.ai.fault_cases import AdapterCase, case_params
from tests.ai.servers import CLOSE, JSON_HEADERS, STALL, LocalServer, Reply

PIECES = ["Hello", ", ", "world", "!"]
TEXT = "".join(PIECES)
CONTEXT = Context([UserMessage("Say hello")], system_prompt="Be brief.")


def _ok(case: AdapterCase) -> dict[str, str]:
    return {"content-type": case.content_type}


CASE_PARAMS = case_params()


async def _run(
    case: AdapterCase,
    server: LocalServer,
    client: httpx2.AsyncClient,
    **options: object,
) -> list[AssistantMessageEvent]:
    s = stream(case.model(server.url), CONTEXT, api_key="test-key", client=client, **options)  # type: ignore[arg-type]
    events = [event async for event in s]
    terminals = [e for e in events if e.type in ("done", "error")]
    assert len(terminals) == 1, [e.type for e in events]
    assert events[-1] is terminals[0]
    assert events[0].type == "start"
    return events


async def _assert_no_leaks(server: LocalServer, client: httpx2.AsyncClient) -> None:
    """No connection is held by an unfinished request, and no task of tau's is left running."""
    pool = client._transport._pool  # type: ignore[attr-defined]
    for _ in range(50):
        busy = [c for c in pool.connections if not (c.is_idle() or c.is_closed())]
        if not busy and not pool._requests:
            break
        await asyncio.sleep(0.02)
    assert not busy, f"connections still in use: {busy}"
    assert not pool._requests, "a request is still queued in the pool"
    current = asyncio.current_task()
    for _ in range(50):
        # Only tasks started by tau count: the test server's own tasks wind down with it.
        leftover = [
            t
            for t in asyncio.all_tasks()
            if t is not current and not t.done() and _started_by_tau(t)
        ]
        if not leftover:
            break
        await asyncio.sleep(0.02)
    assert not leftover, leftover


# The package's own directory, not any path with "/tau/" in it: a checkout in such a folder
# would count the test server's tasks as tau's.
_TAU_PACKAGE = os.path.dirname(tau.__file__) + os.sep


def _started_by_tau(task: asyncio.Task[object]) -> bool:
    code = getattr(task.get_coro(), "cr_code", None)
    # Async-generator finalizers (no code object) are closing some iterator: wait for them too.
    return code is None or code.co_filename.startswith(_TAU_PACKAGE)


def _error(events: list[AssistantMessageEvent]) -> str:
    last = events[-1]
    assert last.type == "error", f"expected an error, got {last!r}"
    message = last.error.error_message or ""
    # A clear message: something to read, never a Python traceback or a repr.
    assert message.strip(), "the error says nothing"
    assert "Traceback" not in message and not message.startswith("<"), message
    return message


@pytest.mark.parametrize("case", CASE_PARAMS)
async def test_valid_response_as_reference(case: AdapterCase, client: httpx2.AsyncClient) -> None:
    async with LocalServer([Reply(200, _ok(case), case.events(PIECES))]) as server:
        events = await _run(case, server, client)
        assert events[-1].type == "done"
        assert events[-1].message.text == TEXT
        await _assert_no_leaks(server, client)


@pytest.mark.parametrize("case", CASE_PARAMS)
async def test_close_mid_event(case: AdapterCase, client: httpx2.AsyncClient) -> None:
    body = case.events(PIECES)
    cut = body[3][: len(body[3]) // 2]
    async with LocalServer([Reply(200, _ok(case), [*body[:3], cut, CLOSE])]) as server:
        events = await _run(case, server, client)
        _error(events)
        assert len(server.requests) == 1, "a stream that had started was retried"
        await _assert_no_leaks(server, client)


@pytest.mark.parametrize("case", CASE_PARAMS)
async def test_stream_ending_without_its_terminal_event(
    case: AdapterCase, client: httpx2.AsyncClient
) -> None:
    body = case.events(PIECES)
    async with LocalServer([Reply(200, _ok(case), body[:3])]) as server:
        events = await _run(case, server, client)
        # Whatever the adapter decides, it must not report a complete answer it never got.
        if events[-1].type == "done":
            pytest.fail(f"{case.api} reported success for a truncated stream")
        await _assert_no_leaks(server, client)


@pytest.mark.parametrize("case", CASE_PARAMS)
async def test_stall_before_first_byte(case: AdapterCase, client: httpx2.AsyncClient) -> None:
    async with LocalServer([Reply(200, _ok(case), case.events(PIECES), delay=5)]) as server:
        events = await _run(case, server, client, timeout={"first_byte": 0.3})
        assert (
            "0.3" in _error(events)
            or "timed out" in _error(events).lower()
            or "no data" in _error(events).lower()
        )
        await _assert_no_leaks(server, client)


@pytest.mark.parametrize("case", CASE_PARAMS)
async def test_stall_between_events(case: AdapterCase, client: httpx2.AsyncClient) -> None:
    body = case.events(PIECES)
    async with LocalServer([Reply(200, _ok(case), [*body[:3], STALL])]) as server:
        events = await _run(case, server, client, timeout={"idle": 0.3})
        message = _error(events).lower()
        assert "0.3" in message or "no data" in message or "timed out" in message
        assert events[-1].error.content, "the text that arrived before the stall was lost"
        await _assert_no_leaks(server, client)


@pytest.mark.parametrize("case", CASE_PARAMS)
async def test_429_with_retry_after_is_retried(
    case: AdapterCase, client: httpx2.AsyncClient
) -> None:
    replies = [
        Reply(429, {**JSON_HEADERS, "retry-after": "0"}, [case.error_body(429, "slow down")]),
        Reply(200, _ok(case), case.events(PIECES)),
    ]
    async with LocalServer(replies) as server:
        events = await _run(case, server, client)
        assert events[-1].type == "done" and events[-1].message.text == TEXT
        assert len(server.requests) == 2
        await _assert_no_leaks(server, client)


@pytest.mark.parametrize("status", [500, 502, 503, 529])
@pytest.mark.parametrize("case", CASE_PARAMS)
async def test_server_errors_are_retried_then_reported(
    case: AdapterCase, status: int, client: httpx2.AsyncClient
) -> None:
    reply = Reply(
        status,
        {**JSON_HEADERS, "retry-after": "0"},
        [case.error_body(status, "the backend is on fire")],
    )
    async with LocalServer([reply, reply]) as server:
        events = await _run(case, server, client, max_retries=1)
        message = _error(events)
        assert "the backend is on fire" in message and str(status) in message
        assert len(server.requests) == 2
        await _assert_no_leaks(server, client)


@pytest.mark.parametrize("case", CASE_PARAMS)
async def test_client_errors_are_not_retried(case: AdapterCase, client: httpx2.AsyncClient) -> None:
    reply = Reply(400, JSON_HEADERS, [case.error_body(400, "bad field 'x'")])
    async with LocalServer([reply, reply]) as server:
        events = await _run(case, server, client)
        message = _error(events)
        assert "bad field 'x'" in message and "400" in message
        assert len(server.requests) == 1
        await _assert_no_leaks(server, client)


@pytest.mark.parametrize("case", CASE_PARAMS)
async def test_html_error_page_with_status_200(
    case: AdapterCase, client: httpx2.AsyncClient
) -> None:
    page = b"<!DOCTYPE html><html><body><h1>502 Bad Gateway</h1></body></html>"
    async with LocalServer([Reply(200, {"content-type": "text/html"}, [page])]) as server:
        events = await _run(case, server, client)
        message = _error(events)
        assert "<html" not in message.lower() or len(message) < 300
        await _assert_no_leaks(server, client)


@pytest.mark.parametrize("case", CASE_PARAMS)
async def test_invalid_utf8(case: AdapterCase, client: httpx2.AsyncClient) -> None:
    body = case.events(PIECES)
    broken = body[3].replace(PIECES[1].encode(), b"\xff\xfe")
    async with LocalServer([Reply(200, _ok(case), [*body[:3], broken, *body[4:]])]) as server:
        events = await _run(case, server, client)
        if events[-1].type == "done":
            assert "Hello" in events[-1].message.text
        await _assert_no_leaks(server, client)


@pytest.mark.parametrize("case", CASE_PARAMS)
async def test_one_malformed_json_event(case: AdapterCase, client: httpx2.AsyncClient) -> None:
    body = case.events(PIECES)
    bad = case.malformed
    async with LocalServer([Reply(200, _ok(case), [*body[:3], bad, *body[3:]])]) as server:
        events = await _run(case, server, client)
        if events[-1].type == "error":
            assert "json" in events[-1].error.error_message.lower()  # type: ignore[union-attr]
        else:
            assert events[-1].message.text == TEXT
        await _assert_no_leaks(server, client)


@pytest.mark.parametrize("case", CASE_PARAMS)
async def test_event_of_several_megabytes(case: AdapterCase, client: httpx2.AsyncClient) -> None:
    big = "x" * (4 * 1024 * 1024)
    async with LocalServer([Reply(200, _ok(case), case.events(["a", big, "b"]))]) as server:
        # Far more text than the model's 1024 tokens allow: the output cap is raised for it.
        events = await _run(case, server, client, max_output_chars=len(big) + 2)
        assert events[-1].type == "done"
        assert events[-1].message.text == "a" + big + "b"
        await _assert_no_leaks(server, client)


@pytest.mark.parametrize("case", CASE_PARAMS)
async def test_thousands_of_tiny_chunks(case: AdapterCase, client: httpx2.AsyncClient) -> None:
    pieces = PIECES * 4
    whole = b"".join(case.events(pieces))
    chunks = [whole[i : i + 1] for i in range(len(whole))]
    assert len(chunks) > 1000
    async with LocalServer([Reply(200, _ok(case), chunks)]) as server:
        events = await _run(case, server, client)
        assert events[-1].type == "done" and events[-1].message.text == "".join(pieces)
        await _assert_no_leaks(server, client)


@pytest.mark.parametrize("case", CASE_PARAMS)
async def test_abort_at_every_point(case: AdapterCase, client: httpx2.AsyncClient) -> None:
    body: list[object] = []
    for event in case.events(PIECES):
        body += [event, 0.01]
    async with LocalServer(lambda request: Reply(200, _ok(case), body)) as server:
        reference = await _run(case, server, client)
        for point in range(len(reference) - 1):
            controller = AbortController()
            s = stream(
                case.model(server.url),
                CONTEXT,
                api_key="k",
                client=client,
                signal=controller.signal,
            )
            seen = []
            finished_before_abort = False
            async for event in s:
                seen.append(event)
                if len(seen) == point + 1:
                    # Events already queued may include the terminal one: then it stands.
                    finished_before_abort = s.done
                    controller.abort()
            if finished_before_abort:
                assert seen[-1].type == "done"
            else:
                assert seen[-1].type == "error", (point, [e.type for e in seen])
                assert seen[-1].reason == "aborted"
            assert sum(e.type in ("done", "error") for e in seen) == 1
        await _assert_no_leaks(server, client)


@pytest.mark.parametrize("case", CASE_PARAMS)
async def test_abort_while_waiting_for_first_byte(
    case: AdapterCase, client: httpx2.AsyncClient
) -> None:
    async with LocalServer([Reply(200, _ok(case), case.events(PIECES), delay=5)]) as server:
        controller = AbortController()
        s = stream(
            case.model(server.url), CONTEXT, api_key="k", client=client, signal=controller.signal
        )
        asyncio.get_running_loop().call_later(0.1, controller.abort)
        events = [e async for e in s]
        assert events[-1].type == "error" and events[-1].reason == "aborted"
        await _assert_no_leaks(server, client)
