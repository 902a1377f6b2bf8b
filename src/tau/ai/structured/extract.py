"""Finding the JSON object in a text answer, whole or as it streams.

A native-mode answer is the JSON itself; a prompted one may wrap it in a Markdown fence or put
a sentence before it. :func:`find_json` picks the object out of the complete text;
:class:`PartialOutput` follows it while it streams, feeding the incremental JSON parser from
the first ``{`` on, and validates partial values on a schedule that keeps the total cost
linear in the answer's size.
"""

from __future__ import annotations

import json
import re
from typing import Any, Final

from tau.ai.streaming.partial_json import IncrementalJsonParser
from tau.ai.structured.spec import OutputSpec

_FENCE = re.compile(r"```[a-zA-Z0-9_-]*[ \t]*\r?\n(.*?)```", re.DOTALL)
_MAX_CANDIDATES = 16  # '{' positions tried in prose: hostile text cannot make this quadratic
_decoder = json.JSONDecoder()

NOTHING: Final[Any] = object()
"""No (new) partial value."""


def find_json(text: str) -> str:
    """The JSON text of the answer's object: the whole text when it is JSON, else the first
    fenced block or ``{…}`` that decodes as an object; the stripped text when none does (its
    validation then says why)."""
    stripped = text.strip()
    if stripped.startswith("{") and _is_object(stripped):
        return stripped
    for match in _FENCE.finditer(text):
        body = match.group(1).strip()
        if body.startswith("{") and _is_object(body):
            return body
    start = text.find("{")
    for _ in range(_MAX_CANDIDATES):
        if start < 0:
            break
        try:
            value, end = _decoder.raw_decode(text, start)
        except (ValueError, RecursionError):
            pass
        else:
            if isinstance(value, dict):
                return text[start:end]
        start = text.find("{", start + 1)
    return stripped


def _is_object(text: str) -> bool:
    try:
        return isinstance(json.loads(text), dict)
    except (ValueError, RecursionError):
        return False


class PartialOutput:
    """Partial values of one answer as it streams, each yielded once.

    Validating the partial object after every delta would cost O(n) per delta, O(n²) in all.
    A partial is validated instead each time the JSON text has grown by :attr:`growth` of its
    size at the last validation (and by one character at least), so a long answer costs about
    ``1 + 1/growth`` validations of the whole while a short one updates on every delta.
    """

    growth: float = 0.25

    __slots__ = ("_checked", "_last", "_parser", "_size", "_spec")

    def __init__(self, spec: OutputSpec[Any]) -> None:
        self._spec = spec
        self._parser: IncrementalJsonParser | None = None
        self._size = 0
        self._checked = 0
        self._last: Any = NOTHING

    @property
    def last(self) -> Any:
        """The last partial value given out (:data:`NOTHING` before the first)."""
        return self._last

    @property
    def text(self) -> str:
        """The JSON text fed so far in this answer (from its first ``{``)."""
        return self._parser.text if self._parser is not None else ""

    def restart(self) -> None:
        """A new answer begins (a retry): the values given out stay given out."""
        self._parser = None
        self._size = 0
        self._checked = 0

    def feed(self, delta: str) -> Any:
        """Add a delta of the answer's text (or of the output call's arguments); returns a new
        partial value or :data:`NOTHING`."""
        parser = self._parser
        if parser is None:
            # Prose or a fence opener before the object: the object starts at its first "{".
            at = delta.find("{")
            if at < 0:
                return NOTHING
            parser = self._parser = IncrementalJsonParser()
            delta = delta[at:]
        parser.feed(delta)
        self._size += len(delta)
        if self._size - self._checked < max(1, self.growth * self._checked):
            return NOTHING
        self._checked = self._size
        ok, partial = self._spec.validate_partial(parser.value())
        if not ok or partial == self._last:
            return NOTHING
        self._last = partial
        return partial

    def settle(self, final: Any) -> Any:
        """The validated final value, if it differs from the last partial (else
        :data:`NOTHING`): the last value given out is always the output."""
        if _same(final, self._last):
            return NOTHING
        self._last = final
        return final


def _same(final: Any, last: Any) -> bool:
    # A partial model is a Partial<Name> instance: never equal to the output's own class.
    return last is not NOTHING and type(final) is type(last) and bool(final == last)
