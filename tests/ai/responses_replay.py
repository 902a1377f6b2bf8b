"""Replay a recorded response body through an adapter, over HTTP, from a 127.0.0.1 server."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from tau.ai import AssistantMessage, AssistantMessageEvent, Context, Model, stream
from tests.ai.servers import SSE_HEADERS, LocalServer, Reply


async def replay_recorded_stream(
    model: Model, context: Context, body: str, *, chunk: int = 997, **options: Any
) -> tuple[list[AssistantMessageEvent], AssistantMessage]:
    """Serve ``body`` (in ``chunk``-byte pieces) as the model's answer; the events and message."""
    data = body.encode()
    pieces = [data[i : i + chunk] for i in range(0, len(data), chunk)]
    async with LocalServer([Reply(200, SSE_HEADERS, pieces)]) as server:
        target = replace(model, base_url=server.url + "/v1")
        s = stream(target, context, api_key="test-key", **options)
        seen = [event async for event in s]
        message = await s.result()
    assert len(server.requests) == 1
    return seen, message
