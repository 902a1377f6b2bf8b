"""Issue 24 item 12: the proxy bounds clients that never finish their headers.

One header a second kept a connection to the proxy for the whole test, unauthenticated (the
token is in those headers). ``python -m tau.proxy`` now serves with a header timeout (``408``,
then the connection is closed) and a per-address cap on connections still waiting for their
headers. Tested on the real server as ``main()`` configures it, on 127.0.0.1, with raw sockets.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest

pytest.importorskip("uvicorn")

import uvicorn

from tau.proxy.server import main

HEADER_TIMEOUT = 0.5
CAP = 3


@contextlib.asynccontextmanager
async def proxy_as_main_serves_it() -> AsyncIterator[int]:
    """``python -m tau.proxy`` with a short header timeout and a small cap; its port."""
    captured: list[tuple[Any, dict[str, Any]]] = []
    argv = ["--token", "s3cret-token", "--model", "openai/gpt-4o-mini", "--header-timeout",
            str(HEADER_TIMEOUT), "--max-waiting-per-ip", str(CAP)]  # fmt: skip
    main(argv, serve=lambda app, **kw: captured.append((app, kw)))
    ((app, options),) = captured
    options = {**options, "port": 0, "log_level": "warning", "lifespan": "off"}
    server = uvicorn.Server(uvicorn.Config(app, **options))
    task = asyncio.ensure_future(server.serve())
    try:
        async with asyncio.timeout(5):
            while not server.started:
                if task.done():
                    task.result()  # it failed to start: say why
                await asyncio.sleep(0.005)
        yield server.servers[0].sockets[0].getsockname()[1]
    finally:
        server.should_exit = True
        await asyncio.wait_for(task, 10)


async def _closed_within(reader: asyncio.StreamReader, seconds: float) -> bytes:
    """Everything the server sent until it closed the connection (fails after ``seconds``)."""
    data = b""
    async with asyncio.timeout(seconds):
        while chunk := await reader.read(65536):
            data += chunk
    return data


async def test_one_header_a_second_gets_408_and_the_connection_closed() -> None:
    async with proxy_as_main_serves_it() as port:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)

        async def trickle() -> None:
            writer.write(b"POST /api/stream HTTP/1.1\r\nhost: 127.0.0.1\r\n")
            for n in range(1000):  # hostile: a header every 0.2 s, never the blank line
                await asyncio.sleep(0.2)
                writer.write(f"x-slow-{n}: y\r\n".encode())

        sender = asyncio.ensure_future(trickle())
        try:
            answer = await _closed_within(reader, 10)
        finally:
            sender.cancel()
            writer.close()
        assert answer.startswith(b"HTTP/1.1 408"), answer[:200]
        assert b"did not arrive in time" in answer


async def test_an_address_may_hold_only_a_few_connections_without_headers() -> None:
    async with proxy_as_main_serves_it() as port:
        idle = [await asyncio.open_connection("127.0.0.1", port) for _ in range(CAP)]
        await asyncio.sleep(0.1)
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        # Over the cap: closed at once, long before the header timeout.
        assert await _closed_within(reader, HEADER_TIMEOUT * 0.8) == b""
        writer.close()
        for r, w in idle:  # the waiting ones end at the header timeout
            assert (await _closed_within(r, 10)).startswith(b"HTTP/1.1 408")
            w.close()
        # Then the address may connect again; a wrong token gets 401 and the connection ends.
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(
            b"POST /api/stream HTTP/1.1\r\nhost: x\r\nauthorization: Bearer wrong\r\n"
            b"content-length: 2\r\n\r\n{}"
        )
        answer = await _closed_within(reader, 10)
        writer.close()
        assert answer.startswith(b"HTTP/1.1 401"), answer[:200]
