"""Events that never end: one line without a line break, data lines without the blank line
that dispatches them, a binary frame whose length prefix claims megabytes.

Without a cap the decoder holds whatever arrives until memory runs out. The clean behaviour:
once one incomplete event holds more than ``max_line_bytes`` (8 MiB by default, an option of
every adapter), the stream ends with one clear ``error`` event and the connection is closed.
"""

from __future__ import annotations

import asyncio
import binascii
import itertools
import struct
from collections.abc import Iterator

import httpx2
import pytest

from tau.ai import Context, ProviderError, UserMessage, stream
from tau.ai.streaming.sse import DEFAULT_MAX_LINE_BYTES, SSEDecoder, max_line_bytes
from tau.proxy import stream_proxy
from tests.ai.fault_cases import CASES, AdapterCase, case_params
from tests.ai.servers import STALL, LocalServer, Reply

LIMIT = 256 * 1024
SSE_CASES = case_params(case for case in CASES if case.content_type == "text/event-stream")


def endless(first: bytes, step: bytes) -> Iterator[bytes]:
    """A body that starts with ``first`` and then repeats ``step`` for ever."""
    return itertools.chain([first], itertools.repeat(step))


# --------------------------------------------------------------------------- the decoder


def test_an_unterminated_line_stops_at_the_cap() -> None:
    decoder = SSEDecoder(LIMIT)
    decoder.feed(b"data: ")
    fed = 6
    # Hostile: a line that never ends, 4 KiB at a time.
    with pytest.raises(ProviderError, match="max_line_bytes"):
        for chunk in itertools.repeat(b"x" * 4096):
            decoder.feed(chunk)
            fed += len(chunk)
    # Clean: it stopped within one chunk of the cap.
    assert LIMIT < fed + 4096 <= LIMIT + 2 * 4096


def test_data_lines_without_a_blank_line_stop_at_the_cap() -> None:
    decoder = SSEDecoder(LIMIT)
    # Hostile: data lines that are each complete, but never dispatched as an event.
    with pytest.raises(ProviderError, match="max_line_bytes"):
        for _ in range(LIMIT):
            decoder.feed(b"data: " + b"y" * 100 + b"\n")


def test_events_below_the_cap_pass_however_many() -> None:
    # Clean: the cap is per event, never on the stream: 64 events of 3/4 of the cap each,
    # in chunks that split them anywhere, all arrive whole.
    event = b"data: " + b"z" * (LIMIT * 3 // 4) + b"\n\n"
    whole = event * 64
    decoder = SSEDecoder(LIMIT)
    events = []
    for start in range(0, len(whole), 65_537):
        events += decoder.feed(whole[start : start + 65_537])
    assert len(events) == 64 and {len(e.data) for e in events} == {LIMIT * 3 // 4}


def test_the_default_cap_and_a_bad_value() -> None:
    assert max_line_bytes({}) == DEFAULT_MAX_LINE_BYTES == 8 * 1024 * 1024
    assert max_line_bytes({"max_line_bytes": 10}) == 10
    with pytest.raises(ProviderError, match="max_line_bytes"):
        max_line_bytes({"max_line_bytes": 0})


# --------------------------------------------------------------------------- end to end


@pytest.mark.parametrize("shape", ["one line", "data lines"])
@pytest.mark.parametrize("case", SSE_CASES)
async def test_an_endless_event_ends_the_stream_cleanly(
    case: AdapterCase, shape: str, client: httpx2.AsyncClient
) -> None:
    first = case.events(["hi"])[0]  # the stream starts as it should
    step = b"x" * 8192 if shape == "one line" else b"data: " + b"x" * 8000 + b"\n"
    body = endless(first + b"data: ", step)
    async with LocalServer([Reply(200, {"content-type": case.content_type}, body)]) as server:
        # Hostile: after its first event, the server streams one event without end.
        async with asyncio.timeout(30):
            s = stream(
                case.model(server.url),
                Context([UserMessage("hi")]),
                api_key="k",
                client=client,
                max_line_bytes=LIMIT,
            )  # type: ignore[arg-type]
            events = [event async for event in s]
        # Clean: one error event saying what happened, and the connection is closed.
        assert events[-1].type == "error"
        assert "max_line_bytes" in (events[-1].error.error_message or "")
        for _ in range(100):
            if not server.open_connections:
                break
            await asyncio.sleep(0.02)
        assert server.open_connections == 0


def _prelude(total: int, headers: int = 0) -> bytes:
    prelude = struct.pack(">II", total, headers)
    return prelude + struct.pack(">I", binascii.crc32(prelude))


@pytest.mark.parametrize("claim", [20 * 1024 * 1024, 2 * LIMIT])
async def test_a_frame_claiming_more_than_the_cap_ends_at_once(
    claim: int, client: httpx2.AsyncClient
) -> None:
    pytest.importorskip("botocore")
    case = next(c for c in CASES if c.api == "bedrock-converse-stream")
    options = {} if claim > DEFAULT_MAX_LINE_BYTES else {"max_line_bytes": LIMIT}
    # Hostile: a valid prelude (CRC included) claiming a frame of ``claim`` bytes, below
    # botocore's own 24 MiB check, then nothing more.
    body = [case.events(["hi"])[0], _prelude(claim), STALL]
    async with LocalServer([Reply(200, {"content-type": case.content_type}, body)]) as server:
        async with asyncio.timeout(10):
            s = stream(
                case.model(server.url),
                Context([UserMessage("hi")]),
                api_key="k",
                client=client,
                **options,
            )  # type: ignore[arg-type]
            events = [event async for event in s]
    # Clean: the claim alone ends the stream, without waiting for the bytes.
    assert events[-1].type == "error"
    assert "binary event frame" in (events[-1].error.error_message or "")
    assert "max_line_bytes" in (events[-1].error.error_message or "")


async def test_an_endless_event_from_a_proxy_ends_the_proxy_client() -> None:
    body = endless(b"data: ", b"x" * 8192)
    async with LocalServer([Reply(200, {"content-type": "text/event-stream"}, body)]) as proxy:
        async with asyncio.timeout(30):
            final = await stream_proxy(
                CASES[0].model(""), Context([UserMessage("hi")]), proxy_url=proxy.url,
                auth_token="t", max_line_bytes=LIMIT,
            ).result()  # fmt: skip
    assert final.stop_reason == "error"
    assert "max_line_bytes" in (final.error_message or "")
