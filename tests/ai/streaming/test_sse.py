"""The SSE decoder follows the WHATWG event-stream rules, whatever the chunking."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tau.ai.streaming.sse import SSEDecoder, SSEEvent


def decode(*chunks: bytes) -> list[SSEEvent]:
    decoder = SSEDecoder()
    events: list[SSEEvent] = []
    for chunk in chunks:
        events.extend(decoder.feed(chunk))
    events.extend(decoder.close())
    return events


def test_basic_event_and_default_type() -> None:
    assert decode(b'event: ping\ndata: {"a":1}\n\ndata: x\n\n') == [
        SSEEvent("ping", '{"a":1}'),
        SSEEvent("message", "x"),
    ]


def test_multi_line_data_is_joined_with_newlines() -> None:
    assert decode(b"data: one\ndata: two\ndata:\ndata: three\n\n") == [
        SSEEvent("message", "one\ntwo\n\nthree")
    ]


def test_crlf_cr_and_lf_line_endings() -> None:
    for sep in (b"\r\n", b"\r", b"\n"):
        stream = b"event: e" + sep + b"data: a" + sep + b"data: b" + sep + sep
        assert decode(stream) == [SSEEvent("e", "a\nb")], sep


def test_comments_and_unknown_fields_are_ignored() -> None:
    stream = b": keep-alive\n:\nfoo: bar\ndata: x\n: inside\n\n"
    assert decode(stream) == [SSEEvent("message", "x")]


def test_field_syntax_edge_cases() -> None:
    # no space after the colon; only one leading space stripped; a field with no colon
    assert decode(b"data:x\n\n") == [SSEEvent("message", "x")]
    assert decode(b"data:  x\n\n") == [SSEEvent("message", " x")]
    assert decode(b"data\n\n") == [SSEEvent("message", "")]
    assert decode(b"data: a:b: c\n\n") == [SSEEvent("message", "a:b: c")]


def test_id_persists_and_retry_is_reported() -> None:
    events = decode(b"id: 7\nretry: 1500\ndata: a\n\ndata: b\n\nid\ndata: c\n\n")
    assert events == [
        SSEEvent("message", "a", "7", 1500),
        SSEEvent("message", "b", "7", None),
        SSEEvent("message", "c", "", None),
    ]


def test_id_with_nul_and_bad_retry_are_ignored() -> None:
    events = decode(b"id: 1\n\nid: a\x00b\nretry: 12x\ndata: a\n\n")
    assert events == [SSEEvent("message", "a", "1", None)]


def test_event_without_data_is_not_dispatched_and_type_resets() -> None:
    assert decode(b"event: lonely\n\ndata: x\n\n") == [SSEEvent("message", "x")]


def test_bom_is_dropped_once_even_when_split() -> None:
    stream = b"\xef\xbb\xbfdata: x\n\n"
    assert decode(stream) == [SSEEvent("message", "x")]
    assert decode(stream[:1], stream[1:2], stream[2:]) == [SSEEvent("message", "x")]
    # a BOM later in the stream is not stripped: that line is an unknown field
    assert decode(b"data: a\n\n\xef\xbb\xbfdata: b\n\n") == [SSEEvent("message", "a")]


def test_final_unterminated_event_is_dispatched_at_close() -> None:
    assert decode(b"data: a\n\nevent: last\ndata: b") == [
        SSEEvent("message", "a"),
        SSEEvent("last", "b"),
    ]
    assert decode(b"data: a\n\ndata: b\n") == [SSEEvent("message", "a"), SSEEvent("message", "b")]


def test_invalid_utf8_becomes_replacement_characters() -> None:
    assert decode(b"data: a\xffb\n\n") == [SSEEvent("message", "a\ufffdb")]


def test_unicode_line_separators_inside_data_are_not_line_breaks() -> None:
    text = "a\u2028b\u0085c\x0cd"
    assert decode(f"data: {text}\n\n".encode()) == [SSEEvent("message", text)]


def test_huge_event_in_tiny_chunks() -> None:
    payload = b"x" * 300_000
    stream = b"data: " + payload + b"\n\n"
    chunks = [stream[i : i + 7] for i in range(0, len(stream), 7)]
    assert decode(*chunks) == [SSEEvent("message", payload.decode())]


TRICKY = (
    b"\xef\xbb\xbf: hello\r\n"
    b"event: message_start\r\n"
    b'data: {"type":"message_start"}\r\n'
    b"\r\n"
    b"id: 42\r"
    b"data: line one\r"
    b"data: line two \xc3\xa9\xe2\x82\xac\r"
    b"\r"
    b"retry: 10\n"
    b"event: x\n"
    b"data:\n"
    b"\n"
    b"data: tail"
)
TRICKY_EVENTS = [
    SSEEvent("message_start", '{"type":"message_start"}'),
    SSEEvent("message", "line one\nline two é€", "42"),
    SSEEvent("x", "", "42", 10),
    SSEEvent("message", "tail", "42"),
]


def test_tricky_stream_whole() -> None:
    assert decode(TRICKY) == TRICKY_EVENTS


def test_split_at_every_byte_boundary_gives_the_same_events() -> None:
    for i in range(len(TRICKY) + 1):
        assert decode(TRICKY[:i], TRICKY[i:]) == TRICKY_EVENTS, i
    for i in range(len(TRICKY)):
        for j in range(i, len(TRICKY) + 1):
            assert decode(TRICKY[:i], TRICKY[i:j], TRICKY[j:]) == TRICKY_EVENTS, (i, j)


def test_one_byte_chunks() -> None:
    assert decode(*(TRICKY[i : i + 1] for i in range(len(TRICKY)))) == TRICKY_EVENTS


# --------------------------------------------------------------------------- property

line_text = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n"), max_size=20
)
event_name = st.text(st.sampled_from("abcxyz_"), min_size=1, max_size=8)
newline = st.sampled_from([b"\n", b"\r\n", b"\r"])


@st.composite
def streams(draw: st.DrawFn) -> tuple[bytes, list[SSEEvent]]:
    """A valid stream written with random line endings and comments, and its events."""
    out = [b"\xef\xbb\xbf"] if draw(st.booleans()) else []
    expected: list[SSEEvent] = []
    last_id = ""

    def end() -> bytes:
        # A CR followed by a LF would be one CRLF: after a CR, never end a line with a bare LF.
        sep = draw(newline)
        return b"\r\n" if sep == b"\n" and out and out[-1] == b"\r" else sep

    for _ in range(draw(st.integers(0, 6))):
        if draw(st.booleans()):
            out += [b": ", draw(line_text).encode(), end()]
        name = draw(st.none() | event_name)
        if name is not None:
            out += [b"event: ", name.encode(), end()]
        if draw(st.booleans()):
            last_id = draw(st.text(st.sampled_from("0123456789abc"), max_size=4))
            out += [b"id: ", last_id.encode(), end()]
        lines = draw(st.lists(line_text, min_size=1, max_size=4))
        for line in lines:
            out += [b"data: ", line.encode(), end()]
        out.append(end())
        expected.append(SSEEvent(name or "message", "\n".join(lines), last_id))
    return b"".join(out), expected


@settings(max_examples=300, deadline=None)
@given(streams(), st.lists(st.integers(0, 10_000), max_size=12))
def test_any_split_of_a_valid_stream_decodes_to_the_same_events(
    stream_and_events: tuple[bytes, list[SSEEvent]], cuts: list[int]
) -> None:
    stream, expected = stream_and_events
    points = sorted({c % (len(stream) + 1) for c in cuts})
    chunks = [stream[a:b] for a, b in zip([0, *points], [*points, len(stream)], strict=True)]
    assert decode(*chunks) == expected
