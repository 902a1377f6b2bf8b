"""One pooled ``httpx2.AsyncClient`` per running event loop.

:func:`get_client` keeps one client per loop (a ``WeakKeyDictionary`` keyed by the loop). It is
closed when that loop shuts down its async generators, which ``asyncio.run()``,
``asyncio.Runner`` and pytest-asyncio all do; a loop closed without that step leaves its
sockets to the garbage collector (no loop is kept alive by the cache), and
:func:`close_client` closes the current loop's client explicitly. A client passed as the
``client`` option is used as it is and never closed here.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import ssl
import sys
import weakref
from collections.abc import AsyncGenerator

import httpx2

_Entry = tuple[httpx2.AsyncClient, AsyncGenerator[None, None]]
# loop -> (its client, the parked async generator whose ``finally`` closes it). Nothing in an
# entry refers to the loop strongly, so a loop that is dropped takes its entry with it.
_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Entry] = weakref.WeakKeyDictionary()


def get_client() -> httpx2.AsyncClient:
    """The shared pooled client of the running event loop (created on first use)."""
    loop = asyncio.get_running_loop()
    entry = _clients.get(loop)
    if entry is not None and not entry[0].is_closed:
        return entry[0]
    client = httpx2.AsyncClient(
        verify=_ssl_context(),
        timeout=None,
        # An LLM client holds many long streams at once: never queue one behind another.
        limits=httpx2.Limits(max_connections=None, max_keepalive_connections=64),
    )
    _clients[loop] = (client, _park_closer(loop, client))
    return client


@functools.cache
def _ssl_context() -> ssl.SSLContext:
    # Loading the CA bundle takes a noticeable fraction of a second: once per process, shared
    # by the clients of every loop (an SSLContext may be used from any thread).
    return httpx2.create_ssl_context()


def _park_closer(
    loop: asyncio.AbstractEventLoop, client: httpx2.AsyncClient
) -> AsyncGenerator[None, None]:
    # Starting an async generator registers it with the loop (the asyncgen firstiter hook);
    # the loop's shutdown_asyncgens() then runs its ``finally`` inside the loop. Our own
    # finalizer hook holds the loop weakly (asyncio's would keep it alive) and does nothing
    # once the loop is gone or closed.
    loop_ref = weakref.ref(loop)

    def finalize(agen: AsyncGenerator[None, None]) -> None:
        alive = loop_ref()
        if alive is not None and not alive.is_closed():
            alive.call_soon_threadsafe(alive.create_task, agen.aclose())

    closer = _close_at_shutdown(client)
    hooks = sys.get_asyncgen_hooks()
    sys.set_asyncgen_hooks(firstiter=hooks.firstiter, finalizer=finalize)
    try:
        with contextlib.suppress(StopIteration):
            closer.__anext__().send(None)
    finally:
        sys.set_asyncgen_hooks(*hooks)
    return closer


async def _close_at_shutdown(client: httpx2.AsyncClient) -> AsyncGenerator[None, None]:
    try:
        yield
    finally:
        await client.aclose()


async def close_client() -> None:
    """Close the running loop's shared client now (a later call creates a fresh one)."""
    entry = _clients.pop(asyncio.get_running_loop(), None)
    if entry is not None:
        await entry[1].aclose()
