"""Best-effort parsing of streamed tool-call arguments."""

from __future__ import annotations

from typing import Any

import jiter


def parse_streaming_json(text: str) -> dict[str, Any]:
    """Parse possibly incomplete JSON into a dict; ``{}`` when nothing usable is there."""
    if not text or text.isspace():
        return {}
    data = text.encode()
    try:
        value = jiter.from_json(data)
    except ValueError:
        try:
            value = jiter.from_json(data, partial_mode="trailing-strings")
        except ValueError:
            return {}
    return value if isinstance(value, dict) else {}


class IncrementalJsonParser:
    """Accumulates JSON fragments; :meth:`value` is the partial parse, :meth:`final` the end."""

    __slots__ = ("_chunks", "_text")

    def __init__(self) -> None:
        self._chunks: list[str] = []
        self._text = ""

    @property
    def text(self) -> str:
        if self._chunks:
            self._text += "".join(self._chunks)
            self._chunks.clear()
        return self._text

    def feed(self, delta: str) -> None:
        self._chunks.append(delta)

    def value(self) -> dict[str, Any]:
        return parse_streaming_json(self.text)

    def final(self) -> dict[str, Any]:
        return parse_streaming_json(self.text)
