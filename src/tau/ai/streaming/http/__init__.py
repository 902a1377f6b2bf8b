"""HTTP for the adapters: a pooled client per event loop, one request function with retries,
timeouts and readable errors, and the streamed response it returns.

This is the only package that imports ``httpx2``; adapters reach it lazily (``import tau.ai``
never does). Usage from an adapter::

    async with open_stream(options, "POST", url, headers=headers, content=body) as response:
        async for event in response:          # SSEEvent, decoded as bytes arrive
            ...
        # or: async for events in response.event_batches(), the events of each chunk

Most adapters do not call it directly: :func:`tau.ai.providers.run_http_adapter` does.

* :mod:`._pool`: the client per loop (:func:`get_client`, :func:`close_client`);
* :mod:`._timeouts`: the ``timeout`` option and the watchdog;
* :mod:`._retry`: what is retried, and when;
* :mod:`._errors`: the provider's message out of an error body;
* :mod:`._stream`: :class:`open_stream` and :class:`HTTPStream`.
"""

from tau.ai.core.errors import ProviderError, ProviderHTTPError
from tau.ai.streaming.http._errors import error_message_from_body
from tau.ai.streaming.http._pool import close_client, get_client
from tau.ai.streaming.http._retry import retry_delay_from_headers
from tau.ai.streaming.http._stream import SSE_TYPES, HTTPStream, open_stream
from tau.ai.streaming.http._timeouts import DEFAULT_TIMEOUTS, resolve_timeouts
from tau.ai.streaming.json_body import json_bytes

__all__ = [
    "DEFAULT_TIMEOUTS",
    "SSE_TYPES",
    "HTTPStream",
    "ProviderError",
    "ProviderHTTPError",
    "close_client",
    "error_message_from_body",
    "get_client",
    "json_bytes",
    "open_stream",
    "resolve_timeouts",
    "retry_delay_from_headers",
]
