"""What tests build over and over: models, messages, server-sent events, event-stream frames.

One definition each, so that a test says what it needs (``assistant(model, ToolCall(...))``)
and every test builds it the same way.
"""

from __future__ import annotations

import binascii
import json
import struct
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

from tau.ai import (
    AssistantContent,
    AssistantMessage,
    ImageContent,
    Model,
    StopReason,
    TextContent,
    ToolResultMessage,
    UserContent,
    UserMessage,
)

__all__ = [
    "assistant",
    "bedrock_event",
    "bedrock_exception",
    "event_stream_frame",
    "model",
    "sse",
    "tool_result",
    "user",
    "without_timestamps",
]

PNG = ImageContent(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
    "image/png",
)
"""A 1x1 PNG."""


# --------------------------------------------------------------------------- models


def model(
    api: str = "openai-completions",
    provider: str = "openai",
    id: str = "model-1",
    base_url: str = "http://127.0.0.1:9",
    **fields: Any,
) -> Model:
    """A model of ``api``; ``name`` defaults to the id, other fields to :class:`Model`'s."""
    return Model(
        id=id, name=fields.pop("name", id), api=api, provider=provider, base_url=base_url, **fields
    )


# --------------------------------------------------------------------------- messages


def user(*content: str | UserContent) -> UserMessage:
    """A user turn: one string as it is, anything else as a list of blocks."""
    if len(content) == 1 and isinstance(content[0], str):
        return UserMessage(content[0])
    return UserMessage([TextContent(c) if isinstance(c, str) else c for c in content])


def assistant(
    model: Model,
    *content: AssistantContent | str,
    model_id: str | None = None,
    stop_reason: StopReason = "stop",
) -> AssistantMessage:
    """A turn ``model`` produced (``model_id`` names another model of the same api and
    provider); a string is a text block."""
    return AssistantMessage(
        [TextContent(c) if isinstance(c, str) else c for c in content],
        api=model.api,
        provider=model.provider,
        model=model_id or model.id,
        stop_reason=stop_reason,
    )


def tool_result(
    call_id: str,
    text: str = "ok",
    *,
    name: str = "tool",
    images: int = 0,
    image: ImageContent = PNG,
    error: bool = False,
) -> ToolResultMessage:
    """The result of call ``call_id``: its text (none if empty) then ``images`` copies of
    ``image``."""
    content: list[UserContent] = [TextContent(text)] if text else []
    content += [image] * images
    return ToolResultMessage(call_id, name, content, is_error=error)


# --------------------------------------------------------------------------- wire formats


def sse(*events: Mapping[str, Any] | str | tuple[str | None, str]) -> bytes:
    """Server-sent events, one record per item: a dict is sent as its JSON, named by its
    ``type`` when it has one (as Anthropic and the Responses API name theirs); a string as raw
    data; an ``(event, data)`` pair as it is (``event`` None: no event line). Data with line
    breaks becomes several ``data:`` lines."""
    out: list[str] = []
    for item in events:
        if isinstance(item, tuple):
            name, data = item
        elif isinstance(item, str):
            name, data = None, item
        else:
            kind = item.get("type")
            name, data = (kind if isinstance(kind, str) else None), json.dumps(item)
        if name is not None:
            out.append(f"event: {name}\n")
        out.extend(f"data: {line}\n" for line in data.split("\n"))
        out.append("\n")
    return "".join(out).encode()


def event_stream_frame(headers: Mapping[str, str], payload: bytes) -> bytes:
    """One ``application/vnd.amazon.eventstream`` message with string headers, encoded
    independently of botocore (prelude, prelude CRC, headers, payload, message CRC)."""
    encoded = b"".join(
        bytes([len(k)]) + k.encode() + b"\x07" + struct.pack(">H", len(v)) + v.encode()
        for k, v in headers.items()
    )
    prelude = struct.pack(">II", 16 + len(encoded) + len(payload), len(encoded))
    prelude += struct.pack(">I", binascii.crc32(prelude))
    message = prelude + encoded + payload
    return message + struct.pack(">I", binascii.crc32(message))


def bedrock_event(name: str, data: Mapping[str, Any]) -> bytes:
    """A ConverseStream event (``messageStart``, ``contentBlockDelta``…) as Bedrock frames it."""
    headers = {":event-type": name, ":content-type": "application/json", ":message-type": "event"}
    return event_stream_frame(headers, json.dumps(data).encode())


def bedrock_exception(name: str, message: str) -> bytes:
    """A ConverseStream exception frame (``throttlingException``…)."""
    headers = {
        ":exception-type": name,
        ":content-type": "application/json",
        ":message-type": "exception",
    }
    return event_stream_frame(headers, json.dumps({"message": message}).encode())


def without_timestamps(value: Any) -> Any:
    """JSON data without its ``timestamp`` fields (a replayed or resumed run stamps its own)."""
    if isinstance(value, dict):
        return {k: without_timestamps(v) for k, v in value.items() if k != "timestamp"}
    if isinstance(value, list):
        return [without_timestamps(v) for v in value]
    return value


@asynccontextmanager
async def serving(app: Any) -> AsyncIterator[str]:
    """Run the ASGI ``app`` with uvicorn on a free 127.0.0.1 port for the duration of the
    block (the proxy's and tau.ui's tests; uvicorn is imported here, on use)."""
    import asyncio

    import uvicorn

    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="off")
    server = uvicorn.Server(config)
    task = asyncio.ensure_future(server.serve())
    try:
        async with asyncio.timeout(5):
            while not server.started:
                if task.done():
                    task.result()
                await asyncio.sleep(0.005)
        port = server.servers[0].sockets[0].getsockname()[1]
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await asyncio.wait_for(task, 5)
