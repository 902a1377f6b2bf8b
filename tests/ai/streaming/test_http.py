"""The shared HTTP plumbing against a real server on 127.0.0.1: retries, timeouts, errors."""

from __future__ import annotations

import asyncio
import email.utils
import json
import socket
import threading
import time
from collections.abc import Mapping
from typing import Any

import httpx2
import pytest

from tau.ai import AbortController, Model
from tau.ai.adapters import launch_stream
from tau.ai.streaming import http as tau_http
from tau.ai.streaming.builder import MessageBuilder, ProviderError
from tau.ai.streaming.http import (
    ProviderHTTPError,
    error_message_from_body,
    get_client,
    open_stream,
    resolve_timeouts,
    retry_delay_from_headers,
)
from tau.ai.streaming.sse import SSEEvent
from tests.ai.servers import (
    CLOSE,
    JSON_HEADERS,
    SSE_HEADERS,
    STALL,
    LocalServer,
    Reply,
    wait_until,
)
from tests.factories import sse

OK_STREAM = sse(("a", '{"n":1}'), ("b", '{"n":2}'))
ANTHROPIC_OVERLOADED = json.dumps(
    {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
).encode()


@pytest.fixture(autouse=True)
def fast_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tau_http._retry, "BACKOFF_BASE_S", 0.01)


async def collect(url: str, **options: Any) -> list[SSEEvent]:
    async with open_stream(options, "POST", url + "/v1/x", json={"q": 1}) as response:
        return [event async for event in response]


async def collect_batches(url: str) -> list[list[SSEEvent]]:
    async with open_stream({}, "POST", url + "/v1/x", json={}) as response:
        return [batch async for batch in response.event_batches()]


def ok() -> Reply:
    return Reply(200, SSE_HEADERS, [OK_STREAM])


async def test_event_batches_give_each_chunks_events_together() -> None:
    # What adapters read: one list per chunk that completes events, never an empty one, and
    # an event left unterminated at the end of the body in the last.
    body = [OK_STREAM, 0.05, b'data: {"n":3}\n', 0.05, b"\n", 0.05, b'data: {"n":4}']
    async with LocalServer([Reply(200, SSE_HEADERS, body)]) as server:
        batches = await collect_batches(server.url)
    assert batches[0] == [SSEEvent("a", '{"n":1}'), SSEEvent("b", '{"n":2}')]
    assert all(batches)
    assert [e.data for batch in batches for e in batch] == [f'{{"n":{n}}}' for n in range(1, 5)]


async def test_streams_events_through_the_shared_client() -> None:
    async with LocalServer([ok(), ok()]) as server:
        assert await collect(server.url) == [SSEEvent("a", '{"n":1}'), SSEEvent("b", '{"n":2}')]
        assert len(await collect(server.url)) == 2
        request = server.requests[0]
        assert request.method == "POST" and request.path == "/v1/x"
        assert json.loads(request.body) == {"q": 1}
        assert request.headers["content-type"] == "application/json"


async def test_injected_client_is_used() -> None:
    seen: list[httpx2.Request] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        seen.append(request)
        return httpx2.Response(200, headers=SSE_HEADERS, content=OK_STREAM)

    async with httpx2.AsyncClient(transport=httpx2.MockTransport(handler)) as client:
        events = await collect("http://mock.invalid", client=client)
    assert [e.event for e in events] == ["a", "b"] and len(seen) == 1


async def send(url: str, headers: dict[str, str], **options: Any) -> None:
    async with open_stream(options, "POST", url, headers=headers, content=b"{}") as response:
        assert [event async for event in response]


async def test_the_request_headers_override_the_clients_in_any_case() -> None:
    # What goes out is the client's own headers with the request's over them, whatever the
    # case of either: one line per name, the request's value, as httpx's own merge does.
    async with LocalServer([ok(), ok(), ok()]) as server:
        await send(server.url + "/v1/x", {"User-Agent": "mine", "accept-ENCODING": "identity"})
        async with httpx2.AsyncClient(
            headers={"X-Team": "theirs", "user-agent": "theirs"}, params={"v": "1"}
        ) as client:
            await send(server.url + "/v1/x", {"x-team": "ours"}, client=client)
        async with httpx2.AsyncClient(headers={"Accept": "x/y"}) as client:
            await send(server.url + "/v1/x", {"accept": "text/event-stream"}, client=client)
    shared, with_params, plain = server.requests
    for request in server.requests:
        names = [name for name, _ in request.header_lines]
        assert len(names) == len(set(names)), request.header_lines
        assert request.headers["content-length"] == "2"
        assert request.headers["host"] == server.url.removeprefix("http://")
    assert (
        shared.headers["user-agent"] == "mine" and shared.headers["accept-encoding"] == "identity"
    )
    assert shared.headers["accept"] == "*/*"  # the client's defaults are kept
    assert with_params.path == "/v1/x?v=1"
    assert with_params.headers["x-team"] == "ours" and with_params.headers["user-agent"] == "theirs"
    assert plain.headers["accept"] == "text/event-stream"


async def test_cookies_a_server_sets_go_back_with_the_next_request() -> None:
    # As from any httpx client (a load balancer's affinity cookie): the shared client keeps
    # what the server set and sends it to that server again.
    first = Reply(200, {**SSE_HEADERS, "set-cookie": "node=7; Path=/"}, [OK_STREAM])
    async with LocalServer([first, ok()]) as server:
        await send(server.url + "/v1/x", {})
        await send(server.url + "/v1/x", {})
    assert "cookie" not in server.requests[0].headers
    assert server.requests[1].headers["cookie"] == "node=7"


async def test_429_with_retry_after_then_success() -> None:
    replies = [Reply(429, {"retry-after": "0", **JSON_HEADERS}, [b'{"error":{"message":"slow"}}'])]
    async with LocalServer([*replies, ok()]) as server:
        assert len(await collect(server.url)) == 2
        assert len(server.requests) == 2


async def test_the_error_names_the_servers_retry_after() -> None:
    # A scheduler of many requests (tau.batch) slows the whole provider down by it.
    refused = Reply(429, {"retry-after": "2", **JSON_HEADERS}, [b'{"error":{"message":"slow"}}'])
    async with LocalServer([refused, refused]) as server:
        with pytest.raises(ProviderHTTPError) as given_up:
            await collect(server.url, max_retries=0)
        assert given_up.value.status == 429 and given_up.value.retry_after == 2.0
        with pytest.raises(ProviderError, match="longer than max_retry_delay_ms") as too_long:
            await collect(server.url, max_retry_delay_ms=500)
        assert too_long.value.retry_after == 2.0
    async with LocalServer([Reply(500, {}, [b"oops"])]) as server:
        with pytest.raises(ProviderHTTPError) as unnamed:
            await collect(server.url, max_retries=0)
        assert unnamed.value.retry_after is None


async def test_retry_after_ms_is_honoured() -> None:
    async with LocalServer(
        [Reply(529, {"retry-after-ms": "150"}, [ANTHROPIC_OVERLOADED]), ok()]
    ) as s:
        start = time.monotonic()
        assert len(await collect(s.url)) == 2
        assert time.monotonic() - start >= 0.14


async def test_500_then_success_with_backoff() -> None:
    async with LocalServer([Reply(500, {}, [b"oops"]), Reply(503, {}, [b""]), ok()]) as server:
        assert len(await collect(server.url)) == 2
        assert len(server.requests) == 3


async def test_overloaded_body_is_retried_whatever_the_status() -> None:
    async with LocalServer([Reply(400, JSON_HEADERS, [ANTHROPIC_OVERLOADED]), ok()]) as server:
        assert len(await collect(server.url)) == 2


async def test_400_is_not_retried_and_carries_the_provider_message() -> None:
    body = b'{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}'
    async with LocalServer([Reply(400, JSON_HEADERS, [body]), ok()]) as server:
        with pytest.raises(ProviderHTTPError) as info:
            await collect(server.url)
        assert len(server.requests) == 1
    assert info.value.status == 400
    assert str(info.value) == (
        "400 invalid_request_error: prompt is too long: 210000 tokens > 200000 maximum"
    )


async def test_retries_are_exhausted_with_a_clear_error() -> None:
    replies = [Reply(529, JSON_HEADERS, [ANTHROPIC_OVERLOADED]) for _ in range(3)]
    async with LocalServer(replies) as server:
        with pytest.raises(ProviderHTTPError, match=r"^529 overloaded_error: Overloaded$"):
            await collect(server.url, max_retries=2)
        assert len(server.requests) == 3


async def test_max_retries_zero_fails_at_once() -> None:
    async with LocalServer([Reply(503, {}, [b"down"]), ok()]) as server:
        with pytest.raises(ProviderHTTPError, match=r"^503 down$"):
            await collect(server.url, max_retries=0)
        assert len(server.requests) == 1


async def test_no_retry_after_the_first_byte() -> None:
    broken = Reply(200, SSE_HEADERS, [sse(("a", "{}")), b'data: {"half', CLOSE])
    async with LocalServer([broken, ok()]) as server:
        events: list[SSEEvent] = []
        with pytest.raises(ProviderError, match="lost while streaming"):
            async with open_stream({}, "POST", server.url) as response:
                async for event in response:
                    events.append(event)
        assert [e.event for e in events] == ["a"]
        assert len(server.requests) == 1


async def test_server_asking_for_too_long_a_delay_fails_clearly() -> None:
    async with LocalServer([Reply(429, {"retry-after": "120"}, [b"busy"])]) as server:
        start = time.monotonic()
        with pytest.raises(
            ProviderError, match=r"^429 busy \(the server asked to retry after 120 s"
        ):
            await collect(server.url)
        assert time.monotonic() - start < 2


async def test_x_should_retry_false_is_respected() -> None:
    async with LocalServer([Reply(500, {"x-should-retry": "false"}, [b"no"]), ok()]) as server:
        with pytest.raises(ProviderHTTPError, match=r"^500 no$"):
            await collect(server.url)


async def test_connection_refused_is_a_clear_error() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(ProviderError, match=rf"^Could not connect to 127.0.0.1:{port}"):
        await collect(f"http://127.0.0.1:{port}", max_retries=1)


async def test_200_html_page_is_a_clear_error() -> None:
    page = (
        b"<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>"
    )
    async with LocalServer([Reply(200, {"content-type": "text/html"}, [page])]) as server:
        with pytest.raises(ProviderHTTPError) as info:
            await collect(server.url)
    assert str(info.value) == (
        f"200 expected an event stream from 127.0.0.1:{server.port} but got text/html: "
        "the server answered with an HTML page instead of an API response (502 Bad Gateway)"
    )


async def test_200_json_instead_of_a_stream_shows_its_message() -> None:
    body = b'{"error":{"message":"stream not supported"}}'
    async with LocalServer([Reply(200, JSON_HEADERS, [body])]) as server:
        with pytest.raises(ProviderHTTPError, match=r"application/json: stream not supported$"):
            await collect(server.url)


# --------------------------------------------------------------------------- timeouts


async def test_stall_before_the_first_byte_times_out() -> None:
    async with LocalServer([Reply(200, SSE_HEADERS, [STALL])]) as server:
        start = time.monotonic()
        with pytest.raises(ProviderError) as info:
            await collect(server.url, timeout={"first_byte": 0.3})
        assert 0.25 < time.monotonic() - start < 3
    assert str(info.value) == (
        f"No response from 127.0.0.1:{server.port} within 0.3 s "
        "(first-byte timeout; raise the `timeout` option to wait longer)"
    )


async def test_slow_headers_time_out_as_first_byte() -> None:
    async with LocalServer([Reply(200, SSE_HEADERS, [OK_STREAM], delay=5)]) as server:
        with pytest.raises(ProviderError, match="first-byte timeout"):
            await collect(server.url, timeout=0.3)


async def test_a_large_body_on_a_slow_uplink_is_not_cut_by_the_connect_timeout() -> None:
    # Writing the body is bounded by the first-byte limit (which runs from the moment the
    # request is sent), not by the connect timeout: a body that takes longer than that to
    # go out still arrives (16 MB: more than the socket buffers hold, so the write waits).
    body = b"x" * (16 << 20)
    async with LocalServer([ok()], body_delay=0.6) as server:
        options = {"timeout": {"connect": 0.2, "first_byte": 30}}
        async with open_stream(options, "POST", server.url, content=body) as response:
            events = [event async for event in response]
    assert server.requests[0].body == body
    assert [e.event for e in events] == ["a", "b"]


async def test_stall_between_events_times_out() -> None:
    body = [sse(("a", "{}")), 0.05, sse(("b", "{}")), STALL]
    async with LocalServer([Reply(200, SSE_HEADERS, body)]) as server:
        events: list[SSEEvent] = []
        with pytest.raises(ProviderError) as info:
            async with open_stream({"timeout": {"idle": 0.3}}, "GET", server.url) as response:
                async for event in response:
                    events.append(event)
    assert [e.event for e in events] == ["a", "b"]
    assert str(info.value) == (
        f"No data from 127.0.0.1:{server.port} for 0.3 s: the stream stalled "
        "(idle timeout; raise the `timeout` option to wait longer)"
    )


async def test_slow_but_steady_stream_does_not_time_out() -> None:
    body: list[Any] = []
    for i in range(8):
        body += [sse(("e", str(i))), 0.1]
    async with LocalServer([Reply(200, SSE_HEADERS, body)]) as server:
        events = await collect(server.url, timeout={"first_byte": 0.3, "idle": 0.3})
    assert len(events) == 8  # 0.8 s in all, never 0.3 s without data


def test_resolve_timeouts() -> None:
    assert resolve_timeouts(None) == (10.0, 120.0, 120.0)
    assert resolve_timeouts(5) == (5.0, 5.0, 5.0)
    assert resolve_timeouts({"idle": 30, "connect": None}) == (None, 120.0, 30.0)
    with pytest.raises(ProviderError, match="Unknown timeout phase"):
        resolve_timeouts({"read": 1})
    with pytest.raises(ProviderError, match="must be seconds"):
        resolve_timeouts("5")


# --------------------------------------------------------------------------- in a stream

MODEL = Model(id="m", name="m", api="test-http", provider="test", base_url="")


def streaming_adapter(url: str, options: Mapping[str, Any]) -> Any:
    async def run(builder: MessageBuilder) -> None:
        async with open_stream(options, "POST", url) as response:
            async for event in response:
                index = builder.open_text()
                builder.text_delta(index, event.data)
                builder.close_text(index)

    return launch_stream(MODEL, options, run)


async def test_abort_during_backoff_ends_the_stream_at_once() -> None:
    controller = AbortController()
    replies = [Reply(429, {"retry-after": "30"}, [b"later"]), ok()]
    async with LocalServer(replies) as server:
        s = streaming_adapter(server.url, {"signal": controller.signal, "max_retry_delay_ms": 0})
        await wait_until(lambda: len(server.requests) == 1)
        await asyncio.sleep(0.1)
        controller.abort()
        start = time.monotonic()
        message = await s.result()
        assert time.monotonic() - start < 2
        assert message.stop_reason == "aborted"
        assert len(server.requests) == 1


async def test_abort_from_another_thread_while_stalled() -> None:
    controller = AbortController()
    async with LocalServer([Reply(200, SSE_HEADERS, [sse(("a", "x")), STALL])]) as server:
        s = streaming_adapter(server.url, {"signal": controller.signal})
        async for event in s:
            if event.type == "text_end":
                threading.Timer(0.1, controller.abort).start()
        message = await s.result()
    assert message.stop_reason == "aborted" and message.text == "x"


async def test_timeout_in_a_stream_is_one_error_event() -> None:
    async with LocalServer([Reply(200, SSE_HEADERS, [sse(("a", "x")), STALL])]) as server:
        s = streaming_adapter(server.url, {"timeout": {"idle": 0.2}})
        types = [event.type async for event in s]
        message = await s.result()
    assert types.count("error") == 1 and types[-1] == "error"
    assert message.stop_reason == "error" and message.text == "x"
    assert message.error_message is not None and "for 0.2 s" in message.error_message


async def test_http_error_in_a_stream_is_one_error_event() -> None:
    body = b'{"error":{"message":"invalid x-api-key","type":"authentication_error"}}'
    async with LocalServer([Reply(401, JSON_HEADERS, [body])]) as server:
        message = await streaming_adapter(server.url, {}).result()
    assert message.stop_reason == "error"
    assert message.error_message == "401 authentication_error: invalid x-api-key"


# --------------------------------------------------------------------------- pieces


def test_error_body_shapes() -> None:
    assert error_message_from_body(b'{"error":{"message":"bad key"}}') == "bad key"
    assert error_message_from_body(b'{"error":"nope"}') == "nope"
    assert error_message_from_body(b'{"message":"Too many requests"}') == "Too many requests"
    assert error_message_from_body(b'{"detail":"Not Found"}') == "Not Found"
    assert error_message_from_body(b'{"detail":[{"msg":"field required"},{"msg":"x"}]}') == (
        "field required; x"
    )
    google = b'[{"error":{"code":400,"message":"API key not valid","status":"INVALID_ARGUMENT"}}]'
    assert error_message_from_body(google) == "INVALID_ARGUMENT: API key not valid"
    assert error_message_from_body(b"") == "(no body)"
    assert error_message_from_body(b"   \n") == "(no body)"
    assert error_message_from_body(b"plain\n  text") == "plain text"
    long = error_message_from_body(b"x" * 5000)
    assert len(long) == 500 and long.endswith("…")
    assert error_message_from_body(b"{not json") == "{not json"
    assert error_message_from_body(b"<html><body>bad</body></html>") == (
        "the server answered with an HTML page instead of an API response"
    )


def test_retry_delay_headers() -> None:
    assert retry_delay_from_headers({"retry-after-ms": "250"}) == 0.25
    assert retry_delay_from_headers({"retry-after": "3"}) == 3.0
    date = email.utils.formatdate(time.time() + 30, usegmt=True)
    delay = retry_delay_from_headers({"retry-after": date})
    assert delay is not None and 25 < delay <= 31
    assert retry_delay_from_headers({"retry-after": "soon"}) is None
    assert retry_delay_from_headers({}) is None


def test_one_client_per_loop_closed_at_loop_shutdown() -> None:
    clients: list[httpx2.AsyncClient] = []

    async def use() -> None:
        clients.append(get_client())
        clients.append(get_client())

    asyncio.run(use())
    asyncio.run(use())
    assert clients[0] is clients[1] and clients[2] is clients[3]
    assert clients[0] is not clients[2]
    assert clients[0].is_closed and clients[2].is_closed


def test_a_loop_closed_without_shutdown_is_not_kept_alive() -> None:
    import gc
    import weakref

    loop = asyncio.new_event_loop()

    async def use() -> None:
        get_client()

    loop.run_until_complete(use())
    loop.close()
    ref = weakref.ref(loop)
    del loop
    gc.collect()
    assert ref() is None
