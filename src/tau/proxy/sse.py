"""Server-sent events over Starlette with the proxy's rules, for any tau server.

The proxy (:mod:`tau.proxy.server`) and the web chat (``tau.ui``) share these: a request body
read with a size and time limit (:func:`read_body`, :func:`read_json`), failures as
:class:`HTTPError` (a status and a one-line message) and :func:`error_response`, and
:class:`EventStreamResponse`, which relays an async iterator of ready SSE frames:

* each ``send`` must complete within ``send_timeout`` seconds, else the client is dropped
  (the server's write buffer is bounded, so a client that reads nothing blocks the send);
* a client that disconnects ends the relay at once;
* either way, and when the frames run out, ``on_close`` runs (cancel the upstream, abort a
  run).

Needs Starlette (the ``[server]`` or ``[web]`` extra).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Any

try:
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError(
        "tau.proxy.sse needs Starlette: pip install 'tau[server]' or 'tau[web]'"
    ) from exc

import jiter

__all__ = [
    "EventStreamResponse",
    "HTTPError",
    "error_response",
    "read_body",
    "read_json",
]


class HTTPError(Exception):
    """A request refused with ``status`` and a one-line message (see :func:`error_response`)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def error_response(status: int, message: str, headers: Mapping[str, str] | None = None) -> Response:
    """``{"error": message}`` with ``status``."""
    return JSONResponse({"error": message}, status_code=status, headers=dict(headers or {}))


async def read_body(request: Request, limit: int, seconds: float | None) -> bytes:
    """The request body: :class:`HTTPError` 413 past ``limit`` bytes (declared or read),
    408 when it has not all arrived within ``seconds`` (None: no limit), 400 for a bad
    ``Content-Length``."""
    try:
        async with asyncio.timeout(seconds):
            return await _read_limited(request, limit)
    except TimeoutError:
        raise HTTPError(408, f"the request body did not arrive within {seconds:g} s") from None


async def _read_limited(request: Request, limit: int) -> bytes:
    declared = request.headers.get("content-length")
    if declared is not None:
        if not declared.isdigit():
            raise HTTPError(400, "invalid Content-Length")
        if int(declared) > limit:
            raise HTTPError(413, f"request body too large (limit {limit} bytes)")
    parts: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise HTTPError(413, f"request body too large (limit {limit} bytes)")
        parts.append(chunk)
    return b"".join(parts)


async def read_json(request: Request, limit: int, seconds: float | None) -> dict[str, Any]:
    """The body as a JSON object (:func:`read_body`'s limits; 400 for anything else)."""
    body = await read_body(request, limit, seconds)
    try:
        # JSON has no NaN or Infinity; jiter reads them unless told not to.
        data = jiter.from_json(body, allow_inf_nan=False)
    except ValueError as exc:
        raise HTTPError(400, f"the body is not valid JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise HTTPError(400, "the body must be a JSON object")
    return data


class EventStreamResponse(Response):
    """Relay ``frames`` (each a complete SSE frame, ``b"data: ...\\n\\n"``) one ``send`` at a
    time, with ``headers`` added to ``text/event-stream``; see the module docstring for
    ``send_timeout`` and ``on_close``."""

    def __init__(
        self,
        frames: AsyncIterator[bytes],
        *,
        send_timeout: float | None,
        on_close: Callable[[], Awaitable[None]] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(status_code=200, media_type="text/event-stream")
        del self.headers["content-length"]  # streamed: chunked
        self.headers["cache-control"] = "no-cache"
        self.headers["x-accel-buffering"] = "no"
        for key, value in (headers or {}).items():
            self.headers[key] = value
        self._frames = frames
        self._send_timeout = send_timeout
        self._on_close = on_close

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        relay = asyncio.ensure_future(self._relay(send))
        gone = asyncio.ensure_future(_disconnected(receive))
        try:
            await asyncio.wait((relay, gone), return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (relay, gone):
                task.cancel()
            failure, _ = await asyncio.gather(relay, gone, return_exceptions=True)
            # The client went away, was dropped, or the frames ran out: stop the source.
            if self._on_close is not None:
                await self._on_close()
        if isinstance(failure, Exception):
            raise failure

    async def _relay(self, send: Any) -> None:
        await send(
            {"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers}
        )
        timeout = self._send_timeout
        try:
            async for frame in self._frames:
                async with asyncio.timeout(timeout):
                    await send({"type": "http.response.body", "body": frame, "more_body": True})
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        except TimeoutError:
            # The client accepted nothing for send_timeout seconds: drop it. Ending without
            # the final chunk makes the server close the connection.
            return


async def _disconnected(receive: Any) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass
