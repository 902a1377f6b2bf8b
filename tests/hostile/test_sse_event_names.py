"""A server naming its events without end: the SSE decoder keeps a few decoded ``event:``
lines (streams name events from a small set) and must stay bounded and right past them.

Streams here: 1,000 events each with a new name; events with 100 KB names; names with
invalid UTF-8. Every event keeps its own name, and the decoder holds at most 64 short
names whatever the stream sends.
"""

from __future__ import annotations

from tau.ai.streaming.sse import SSEDecoder


def names_of(stream: bytes, chunk: int = 97) -> tuple[list[str], SSEDecoder]:
    decoder = SSEDecoder()
    events = []
    for start in range(0, len(stream), chunk):
        events += decoder.feed(stream[start : start + chunk])
    events += decoder.close()
    return [e.event for e in events], decoder


def test_a_new_name_for_every_event_is_read_right_and_kept_bounded() -> None:
    stream = b"".join(b"event: name-%d\ndata: {}\n\n" % i for i in range(1000))
    names, decoder = names_of(stream)
    assert names == [f"name-{i}" for i in range(1000)]
    assert len(decoder._names) <= 64


def test_huge_names_are_read_right_and_never_kept() -> None:
    long = b"x" * 100_000
    stream = (b"event: " + long + b"\ndata: 1\n\n") * 3 + b"event: short\ndata: 2\n\n"
    names, decoder = names_of(stream, chunk=4096)
    assert names == ["x" * 100_000] * 3 + ["short"]
    assert all(len(line) <= 128 for line in decoder._names)


def test_invalid_utf8_names_become_replacement_characters_every_time() -> None:
    stream = b"event: a\xff\ndata: 1\n\n" * 2 + b"event: a\xff\r\ndata: 2\r\n\r\n"
    names, _ = names_of(stream, chunk=5)
    assert names == ["a\ufffd"] * 3
