"""Server-sent events: an incremental decoder from bytes to events, and the JSON in them.

It needs no HTTP library (it is fed whatever bytes arrive), so decoders and tests that only
decode never import one.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import jiter

from tau.ai.core.errors import ProviderError

__all__ = [
    "DEFAULT_MAX_LINE_BYTES",
    "JsonEventDecoder",
    "SSEDecoder",
    "SSEEvent",
    "decode_json_data",
    "max_line_bytes",
    "oversized_event",
    "parse_event_json",
    "parse_json",
]

_BOM = b"\xef\xbb\xbf"

DEFAULT_MAX_LINE_BYTES = 8 * 1024 * 1024
"""Bytes of one event held at most while it is incomplete (its unterminated line, or its data
lines before the blank line that ends it): 8 MiB, the ``max_line_bytes`` option. Far above
any real event (a Responses ``response.completed`` repeating a long answer, an image Gemini
returns inline), far below what a broken or hostile server could make a client hold."""


def max_line_bytes(options: Mapping[str, Any]) -> int:
    """The ``max_line_bytes`` option (:data:`DEFAULT_MAX_LINE_BYTES` when not given)."""
    value = options.get("max_line_bytes")
    if value is None:
        return DEFAULT_MAX_LINE_BYTES
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise ProviderError(f"max_line_bytes must be a positive number of bytes, not {value!r}")
    return value


def oversized_event(limit: int, what: str = "an event") -> ProviderError:
    """The error that ends a stream whose ``what`` grew past ``limit`` bytes unfinished."""
    return ProviderError(
        f"The server sent {what} of more than {limit} bytes without finishing it; the stream "
        "was ended there (a broken or hostile server; raise the max_line_bytes option if "
        "events this large are expected)"
    )


# How many distinct ``event:`` lines an SSEDecoder keeps decoded, and the longest it keeps:
# a stream naming its events otherwise is decoded line by line (memory stays bounded whatever
# a server sends).
_NAMES_KEPT = 64
_NAME_BYTES_KEPT = 128


@dataclass(slots=True)
class SSEEvent:
    """One dispatched server-sent event."""

    event: str
    """The ``event:`` field, ``"message"`` when absent."""
    data: str
    """The ``data:`` lines joined with ``\\n``."""
    id: str = ""
    """The last event id seen so far in the stream (it persists across events)."""
    retry: int | None = None
    """A ``retry:`` value given since the previous event, else None."""


class SSEDecoder:
    """Incremental WHATWG ``text/event-stream`` decoder: feed bytes, get events.

    Lines end in CRLF, LF or CR (a CRLF split across two chunks counts once); lines starting
    with ``:`` are comments; a leading UTF-8 BOM is dropped; data is decoded as UTF-8 with
    replacement characters for invalid bytes. Events without data are not dispatched, as the
    standard says. Unlike the standard, an event left unterminated at end of stream *is*
    dispatched by :meth:`close`: a server that closes right after its last ``data:`` line
    still meant it (several proxies do this).

    The work per chunk is a few ``bytes`` searches and one ``splitlines``; an unterminated
    line is kept as a list of pieces, so a huge event in tiny chunks stays linear. An event
    still incomplete after ``max_line_bytes`` bytes (one line without an end, or data lines
    without the blank line that dispatches them) raises :func:`oversized_event`: memory stays
    bounded whatever the server sends.
    """

    __slots__ = (
        "_data",
        "_event",
        "_held",
        "_id",
        "_limit",
        "_names",
        "_parts",
        "_retry",
        "_skip_lf",
        "_started",
    )

    def __init__(self, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> None:
        self._limit = max_line_bytes
        # Bytes fed since the last event was dispatched (an upper bound of what is held).
        self._held = 0
        self._parts: list[bytes] = []
        self._data: list[bytes] = []
        self._event = ""
        self._id = ""
        self._retry: int | None = None
        self._skip_lf = False
        self._started = False
        self._names: dict[bytes, str] = {}

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        """Decode ``chunk``; returns the events it completed (often none or one)."""
        if not chunk:
            return []
        if self._skip_lf:
            # The previous chunk ended in CR: a LF here is the rest of that CRLF.
            self._skip_lf = False
            if chunk[0] == 10:
                chunk = chunk[1:]
                if not chunk:
                    return []
        if not self._started:
            parts = self._parts
            head = b"".join(parts) + chunk if parts else chunk
            if len(head) < 3 and _BOM.startswith(head):
                self._parts = [head]
                return []
            self._started = True
            self._parts = []
            chunk = head[3:] if head.startswith(_BOM) else head
            if not chunk:
                return []
        # Byte tests by int (10 in chunk: a memchr; b"\n" in chunk first tries the argument as
        # an int and pays for the TypeError, 10 times the cost), and no search at all for the
        # usual chunk, which ends a line.
        last = chunk[-1]
        ends_line = last == 10 or last == 13
        if not ends_line and 10 not in chunk and 13 not in chunk:
            self._held += len(chunk)
            if self._held > self._limit:
                raise oversized_event(self._limit)
            self._parts.append(chunk)
            return []
        if self._parts:
            self._parts.append(chunk)
            data = b"".join(self._parts)
            self._parts = []
        else:
            data = chunk
        # Parts held from earlier chunks never contain a line end, so this chunk says whether
        # any CR is in play; without one (most servers), a split on LF does what splitlines
        # does, a little faster.
        if 13 in chunk:
            lines = data.splitlines()
            if not ends_line:
                self._parts.append(lines.pop())
            elif last == 13:
                self._skip_lf = True  # the LF of this CRLF may open the next chunk
        else:
            lines = data.split(b"\n")
            rest = lines.pop()  # what follows the last line end: empty when the chunk ends one
            if rest:
                self._parts.append(rest)
        events = self._lines(lines)
        if self._data or self._parts:
            # Something is still incomplete: what it holds came in this chunk, or since the
            # last dispatch if this chunk dispatched nothing.
            self._held = len(chunk) if events else self._held + len(chunk)
            if self._held > self._limit:
                raise oversized_event(self._limit)
        else:
            self._held = 0
        return events

    def close(self) -> list[SSEEvent]:
        """End of stream: the pending line, and an unterminated event, are dispatched."""
        lines = [b"".join(self._parts), b""] if self._parts else [b""]
        self._parts = []
        return self._lines(lines)  # the blank line added dispatches an unterminated event

    def _lines(self, lines: Iterable[bytes]) -> list[SSEEvent]:
        events: list[SSEEvent] = []
        data = self._data
        for line in lines:
            if not line:
                if data:
                    text = (data[0] if len(data) == 1 else b"\n".join(data)).decode(
                        "utf-8", "replace"
                    )
                    events.append(SSEEvent(self._event or "message", text, self._id, self._retry))
                    data = self._data = []
                    self._retry = None
                self._event = ""
                continue
            # Fast paths for what providers actually send, then the general field syntax.
            if line.startswith(b"data: "):
                data.append(line[6:])
                continue
            if line.startswith(b"event: "):
                # A stream names its events from a small set: each line is decoded once.
                known = self._names.get(line)
                if known is None:
                    known = line[7:].decode("utf-8", "replace")
                    if len(line) <= _NAME_BYTES_KEPT and len(self._names) < _NAMES_KEPT:
                        self._names[line] = known
                self._event = known
                continue
            name, _, value = line.partition(b":")
            if not name:
                continue  # comment
            if value.startswith(b" "):
                value = value[1:]
            if name == b"data":
                data.append(value)
            elif name == b"event":
                self._event = value.decode("utf-8", "replace")
            elif name == b"id":
                if b"\0" not in value:
                    self._id = value.decode("utf-8", "replace")
            elif name == b"retry" and value.isdigit():
                self._retry = int(value)
        return events


def _no_constant(name: str) -> Any:
    # json.loads reads NaN, Infinity and -Infinity by default; JSON has none of them.
    raise ValueError(f"{name} is not valid JSON")


def parse_json(data: str) -> Any:
    """The value of the JSON text ``data`` (``NaN`` and ``Infinity`` refused, as JSON
    says): jiter parses it (three to four times faster than
    the json module on the small objects of an event stream); what jiter refuses, json gets
    to judge, since json accepts lone surrogate escapes (``"\\ud83d"``), which servers send
    when a delta splits an emoji, and raises its own error for malformed text."""
    try:
        return jiter.from_json(data.encode(), allow_inf_nan=False)
    except ValueError:
        return json.loads(data, parse_constant=_no_constant)


def parse_event_json(data: str, sender: str) -> Any:
    """:func:`parse_json` for one event's ``data``: malformed JSON is a
    :class:`~tau.ai.core.errors.ProviderError` saying that ``sender`` (``"Google"``) sent it."""
    try:
        try:  # parse_json, inlined: this runs once per event
            return jiter.from_json(data.encode(), allow_inf_nan=False)
        except ValueError:
            return json.loads(data, parse_constant=_no_constant)
    except ValueError:
        raise ProviderError(
            f"{sender} sent malformed JSON in a stream event: {data[:200]!r}"
        ) from None


def decode_json_data(data: str, what: str) -> dict[str, Any] | None:
    """The JSON object in one SSE ``data`` field; ``None`` for an empty field or ``[DONE]``.

    ``what`` names the event in errors (``"Mistral stream chunk"``): anything but a JSON
    object is a :class:`~tau.ai.core.errors.ProviderError`, never a raw decoder exception.
    """
    if data == "[DONE]" or not data:
        return None
    try:
        try:  # parse_json, inlined: this runs once per event
            value = jiter.from_json(data.encode(), allow_inf_nan=False)
        except ValueError:
            value = json.loads(data, parse_constant=_no_constant)
    except ValueError as exc:
        raise ProviderError(f"Malformed JSON in {what}: {exc}") from None
    if not isinstance(value, dict):
        raise ProviderError(f"Unexpected {what}: {data[:200]}")
    return value


class JsonEventDecoder(ABC):
    """The base of a decoder whose every SSE ``data`` is one JSON object: :meth:`feed` decodes
    it (empty data and ``[DONE]`` skipped, anything but an object a clear error naming
    :attr:`what`) and hands it to :meth:`apply`."""

    __slots__ = ()
    what: ClassVar[str] = "stream event"
    """What one event is called in errors (``"Mistral stream chunk"``)."""

    def feed(self, data: str, event: str = "message") -> bool:
        """Decode one SSE ``data`` field and apply it; the stream goes on to its end."""
        decoded = decode_json_data(data, self.what)
        if decoded is not None:
            self.apply(decoded)
        return True

    @abstractmethod
    def apply(self, event: dict[str, Any]) -> None:
        """Apply one decoded event."""
