"""The decoder of what the ``llama-cpp`` worker thread hands over: builder calls."""

from __future__ import annotations

from typing import Any

from tau.ai.core.errors import ProviderError
from tau.ai.streaming.builder import MessageBuilder

__all__ = [
    "CALL_DELTA",
    "CALL_END",
    "CALL_START",
    "FAIL",
    "FINISH",
    "TEXT",
    "TEXT_START",
    "LlamaCppDecoder",
]

# What the worker hands to the event loop: (kind, value).
TEXT_START, TEXT, CALL_START, CALL_DELTA, CALL_END, FINISH, FAIL = range(7)


class LlamaCppDecoder:
    """Turns the worker's ``(kind, value)`` items into builder calls; each block it opens gets
    the next number as its key."""

    __slots__ = ("_builder", "_key")

    def __init__(self, builder: MessageBuilder) -> None:
        self._builder = builder
        self._key = 0

    def feed(self, item: tuple[int, Any]) -> bool:
        """Apply one item; False once the turn has ended."""
        kind, value = item
        builder = self._builder
        if kind == TEXT:
            builder.text(self._key, value)
        elif kind == CALL_DELTA:
            builder.tool_call(self._key, args_delta=value)
        elif kind == TEXT_START:
            self._key += 1
            builder.text(self._key, "")
        elif kind == CALL_START:
            self._key += 1
            builder.tool_call(self._key, id=value[0], name=value[1])
        elif kind == CALL_END:
            builder.close(self._key)
        elif kind == FINISH:
            builder.message.stop_reason = value
            return False
        else:
            raise ProviderError(value)
        return True

    def finish(self) -> None:
        """Nothing is left to settle: the worker's last item said how the turn ended."""
