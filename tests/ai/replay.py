"""Replay of recorded real provider traffic (VCR.py YAML cassettes) to tau's adapters.

A cassette holds interactions (request + response). A recorded response can be served two
ways, both with the exact recorded bytes:

* :func:`mock_client`: an ``httpx2.AsyncClient`` over ``httpx2.MockTransport`` (pass it as
  the ``client`` option);
* :func:`replies`: :class:`tests.ai.servers.Reply` objects for a real HTTP server on
  127.0.0.1 (:class:`tests.ai.servers.LocalServer`), split into chunks like a network would.

Bodies: ``body.string`` is text (SSE) or bytes (YAML ``!!binary``, Bedrock's event stream);
``parsed_body`` is JSON, re-encoded.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
import yaml

from tests.ai.servers import Reply


@dataclass
class Recorded:
    """One recorded HTTP exchange."""

    method: str
    uri: str
    request_headers: dict[str, str]
    request_body: Any
    """The request body: parsed JSON when the cassette has it, else text/bytes (or None)."""
    status: int
    headers: dict[str, str]
    body: bytes

    @property
    def content_type(self) -> str:
        """The response content type ('' if none)."""
        return self.headers.get("content-type", "")

    @property
    def is_sse(self) -> bool:
        """Whether the response is an event stream."""
        return self.content_type.startswith("text/event-stream")

    @property
    def text(self) -> str:
        """The response body as text."""
        return self.body.decode("utf-8", "replace")


def _headers(raw: dict[str, Any] | None) -> dict[str, str]:
    out = {}
    for name, value in (raw or {}).items():
        out[name.lower()] = ", ".join(map(str, value)) if isinstance(value, list) else str(value)
    return out


def _body(section: dict[str, Any]) -> Any:
    if "parsed_body" in section:
        return section["parsed_body"]
    body = section.get("body")
    if isinstance(body, dict):
        body = body.get("string")
    return body


def _bytes(value: Any) -> bytes:
    if value is None:
        return b""
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode()
    return json.dumps(value).encode()


def load(path: str | Path) -> list[Recorded]:
    """Every interaction of a cassette, in order."""
    with open(path, encoding="utf-8") as f:
        data = yaml.load(
            f, Loader=yaml.CSafeLoader if hasattr(yaml, "CSafeLoader") else yaml.SafeLoader
        )
    out = []
    for interaction in data.get("interactions", []):
        request, response = interaction["request"], interaction["response"]
        status = response.get("status", {})
        out.append(
            Recorded(
                method=request.get("method", "POST"),
                uri=request.get("uri", ""),
                request_headers=_headers(request.get("headers")),
                request_body=_body(request),
                status=int(status.get("code", 200)) if isinstance(status, dict) else int(status),
                headers=_headers(response.get("headers")),
                body=_bytes(_body(response)),
            )
        )
    return out


def streamed(paths: Sequence[Path]) -> Iterator[tuple[str, Recorded]]:
    """``(id, interaction)`` for every event-stream response in the cassettes."""
    for path in paths:
        for n, recorded in enumerate(load(path)):
            if recorded.is_sse:
                yield f"{path.stem}[{n}]", recorded


_HOP_BY_HOP = {"content-length", "transfer-encoding", "content-encoding", "connection"}


def response_headers(recorded: Recorded) -> dict[str, str]:
    """The recorded headers minus those that described the original transfer."""
    return {k: v for k, v in recorded.headers.items() if k not in _HOP_BY_HOP}


def mock_client(
    recordings: Sequence[Recorded], seen: list[httpx2.Request] | None = None
) -> httpx2.AsyncClient:
    """A client whose transport answers each request with the next recording."""
    queue = list(recordings)

    def handler(request: httpx2.Request) -> httpx2.Response:
        if seen is not None:
            seen.append(request)
        if not queue:
            return httpx2.Response(500, text="no recorded response left")
        recorded = queue.pop(0)
        return httpx2.Response(
            recorded.status, headers=response_headers(recorded), content=recorded.body
        )

    return httpx2.AsyncClient(transport=httpx2.MockTransport(handler))


def chunked(body: bytes, size: int) -> list[bytes]:
    """``body`` cut into pieces of ``size`` bytes (a cut may fall anywhere, even in UTF-8)."""
    return [body[i : i + size] for i in range(0, len(body), size)] or [b""]


def replies(recordings: Sequence[Recorded], chunk_size: int = 97) -> list[Reply]:
    """Server replies for :class:`~tests.ai.servers.LocalServer`, bodies in odd-sized chunks."""
    return [Reply(r.status, response_headers(r), chunked(r.body, chunk_size)) for r in recordings]
