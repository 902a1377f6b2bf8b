"""Clients that hold the proxy server's resources: a body promised and never sent, a client
that stops reading while its upstream streams without end.

Each runs a real uvicorn server on 127.0.0.1 and a raw TCP client, so the client's misbehaviour
is exactly what the socket sees.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import socket

import pytest

from tau.ai import Context, UserMessage, dump_context, dump_model, stream_simple
from tests.ai.fault_cases import CASES
from tests.ai.servers import LocalServer, Reply

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")

from tau.proxy.server import create_proxy_app
from tests.factories import serving
from tests.proxy.test_proxy import TOKEN, client_view

OPENAI = next(c for c in CASES if c.api == "openai-completions")


def _request(body: bytes, declared: int | None = None) -> bytes:
    head = (
        "POST /api/stream HTTP/1.1\r\nhost: 127.0.0.1\r\n"
        f"authorization: Bearer {TOKEN}\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body) if declared is None else declared}\r\n\r\n"
    )
    return head.encode() + body


async def test_a_body_that_never_arrives_is_408() -> None:
    app = create_proxy_app(
        token=TOKEN, models=[OPENAI.model("http://127.0.0.1:9")], body_timeout=0.5
    )
    async with serving(app) as url:
        port = int(url.rsplit(":", 1)[1])
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        # Hostile: 10 bytes of a promised 1000, then silence.
        writer.write(_request(b'{"model": ', declared=1000))
        await writer.drain()
        async with asyncio.timeout(10):
            answer = await reader.read(65536)
        writer.close()
    # Clean: 408 after the body timeout, with a message.
    assert answer.startswith(b"HTTP/1.1 408"), answer[:200]
    assert b"did not arrive within 0.5 s" in answer


async def test_a_client_that_stops_reading_pauses_upstream_then_is_dropped() -> None:
    events = OPENAI.events(["y" * 200])
    at = next(i for i, event in enumerate(events) if b"y" * 200 in event)
    endless = itertools.chain([b"".join(events[:at])], itertools.repeat(events[at]))
    streams = []

    def spy(model, context, **options):  # type: ignore[no-untyped-def]
        s = stream_simple(model, context, **options)
        streams.append(s)
        return s

    limit = 64
    async with LocalServer(
        [Reply(200, {"content-type": "text/event-stream"}, endless)]
    ) as upstream:
        served = OPENAI.model(upstream.url)
        app = create_proxy_app(
            token=TOKEN, models=[served], stream_fn=spy, max_buffered_events=limit,
            send_timeout=2.0,
            # No output cap in the way: the upstream is endless for this test.
            stream_options={"api_key": "k", "max_output_chars": 1 << 40},
        )  # fmt: skip
        async with serving(app) as url:
            port = int(url.rsplit(":", 1)[1])
            sock = socket.socket()
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            sock.connect(("127.0.0.1", port))
            sock.setblocking(False)
            reader, writer = await asyncio.open_connection(sock=sock)
            body = json.dumps(
                {
                    "model": dump_model(client_view(served)),
                    "context": dump_context(Context([UserMessage("hi")])),
                }
            ).encode()
            # Hostile: the client sends its request, reads the first bytes, then stops.
            writer.write(_request(body))
            await writer.drain()
            assert (await reader.read(100)).startswith(b"HTTP/1.1 200")
            most = 0
            async with asyncio.timeout(30):
                while not streams or not streams[0].done:
                    if streams:
                        most = max(most, len(streams[0]._queue))
                    await asyncio.sleep(0.01)
                for _ in range(1000):
                    if not upstream.open_connections:
                        break
                    await asyncio.sleep(0.01)
            writer.close()
    # Clean: the proxy held at most the limit of unread events (plus the chunk being
    # decoded) while the client did not read; after the send timeout it dropped the client,
    # ended its stream and closed the upstream connection.
    assert 0 < most <= limit + 8, most
    final = await streams[0].result()
    assert final.stop_reason == "aborted"
    assert upstream.open_connections == 0
