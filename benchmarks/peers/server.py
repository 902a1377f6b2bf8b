"""A loopback HTTP/1.1 server that streams pre-rendered SSE bodies, run in its own process.

``python server.py PORT_FILE`` binds 127.0.0.1 on a free port, writes the port to PORT_FILE and
serves until stdin closes (so it never outlives the benchmark). Paths: ``/v1/chat/completions``
(OpenAI shape) and ``/v1/messages`` (Anthropic shape); the shape's size comes from the query.
"""

from __future__ import annotations

import asyncio
import sys
from functools import lru_cache
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from shapes import anthropic_stream, openai_stream

WRITE_SIZE = 16 * 1024


@lru_cache(maxsize=16)
def body_for(path: str, query: str) -> bytes:
    q = {k: int(v[0]) for k, v in parse_qs(query).items()}
    if path.endswith("/chat/completions"):
        return openai_stream(q.get("deltas", 5000))[0]
    return anthropic_stream(q.get("text", 1000), q.get("tool", 200_000))[0]


async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            request_line, *header_lines = head.decode("latin-1").split("\r\n")
            length = 0
            for line in header_lines:
                name, _, value = line.partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value)
            if length:
                await reader.readexactly(length)
            target = urlsplit(request_line.split(" ")[1])
            # Clients are told the size through their base URL: /s/<query>/v1/...
            segments = target.path.split("/")
            query = segments[2] if len(segments) > 2 and segments[1] == "s" else target.query
            body = body_for(target.path, query)
            writer.write(
                b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
                b"transfer-encoding: chunked\r\n\r\n"
            )
            for start in range(0, len(body), WRITE_SIZE):
                piece = body[start : start + WRITE_SIZE]
                writer.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                await writer.drain()
            writer.write(b"0\r\n\r\n")
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        writer.close()


async def main(port_file: str) -> None:
    server = await asyncio.start_server(handle, "127.0.0.1", 0, backlog=2048)
    port = server.sockets[0].getsockname()[1]
    loop = asyncio.get_running_loop()
    await loop.run_in_executor(None, Path(port_file).write_text, str(port))
    await loop.run_in_executor(None, sys.stdin.read)
    server.close()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
