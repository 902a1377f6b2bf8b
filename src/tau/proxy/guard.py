"""The proxy server's connection guard: what uvicorn leaves open before the app is called.

uvicorn waits for a request's headers without a time limit: a client sending one header a
second holds a connection (and a file descriptor) for as long as it likes, and since the token
is in those headers, it holds it unauthenticated. :func:`guarded_protocol` makes uvicorn's
HTTP/1.1 protocol (h11)

* answer ``408`` and close a connection whose request headers have not all arrived within
  ``header_timeout`` seconds (of the connection, or of the previous response on a kept-alive
  one), and
* refuse (close at once) a new connection from an address that already has
  ``max_waiting_per_ip`` connections still waiting for their headers.

Used by ``python -m tau.proxy``; pass it as ``http=`` to ``uvicorn.run``/``uvicorn.Config``
when serving :func:`~tau.proxy.server.create_proxy_app` yourself.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

__all__ = ["DEFAULT_HEADER_TIMEOUT", "DEFAULT_MAX_WAITING_PER_IP", "guarded_protocol"]

DEFAULT_HEADER_TIMEOUT = 10.0
"""Seconds a client has to send a request's headers."""
DEFAULT_MAX_WAITING_PER_IP = 16
"""Connections one address may hold open before sending its headers (its token)."""

_TIMED_OUT_BODY = b"the request headers did not arrive in time"
_TIMED_OUT = (
    b"HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain\r\nconnection: close\r\n"
    b"content-length: %d\r\n\r\n%s" % (len(_TIMED_OUT_BODY), _TIMED_OUT_BODY)
)


def guarded_protocol(
    header_timeout: float = DEFAULT_HEADER_TIMEOUT,
    max_waiting_per_ip: int = DEFAULT_MAX_WAITING_PER_IP,
) -> type[Any]:
    """A uvicorn HTTP protocol class with the header timeout and the per-address cap (each
    class counts its own connections: one per server)."""
    if header_timeout <= 0 or max_waiting_per_ip < 1:
        raise ValueError("header_timeout must be above 0 and max_waiting_per_ip at least 1")
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    waiting: Counter[str] = Counter()

    class GuardedH11Protocol(H11Protocol):
        _timer: asyncio.TimerHandle | None = None
        _waiting_as: str | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            address = self.client[0] if self.client else "?"
            if waiting[address] >= max_waiting_per_ip:
                transport.close()  # too many unauthenticated connections from there already
                return
            self._wait(address)

        def _wait(self, address: str) -> None:
            waiting[address] += 1
            self._waiting_as = address
            self._timer = self.loop.call_later(header_timeout, self._too_slow)

        def _stop_waiting(self) -> None:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            address, self._waiting_as = self._waiting_as, None
            if address is not None:
                waiting[address] -= 1
                if waiting[address] <= 0:
                    del waiting[address]

        def _too_slow(self) -> None:
            self._timer = None
            self._stop_waiting()
            if not self.transport.is_closing():
                self.transport.write(_TIMED_OUT)
                self.transport.close()

        def handle_events(self) -> None:
            super().handle_events()
            if self._waiting_as is not None and self.conn.their_state is not h11.IDLE:
                self._stop_waiting()  # the headers are in: the app decides (401 or served)

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if (
                self._waiting_as is None
                and self.client
                and not self.transport.is_closing()
                and self.conn.their_state is h11.IDLE
            ):
                self._wait(self.client[0])  # kept alive: the next headers are timed too

        def connection_lost(self, exc: Exception | None) -> None:
            self._stop_waiting()
            super().connection_lost(exc)

    return GuardedH11Protocol
