"""The 12 events of one streamed response.

One event is built per token, so each is a slotted class with a hand-written ``__init__``.
``partial`` is the one :class:`~tau.ai.core.types.AssistantMessage` being built, shared by every
event of a stream, never a copy. Every stream ends with exactly one :class:`DoneEvent` or
:class:`ErrorEvent`.
"""

from __future__ import annotations

from typing import ClassVar, Literal, TypeAlias

from tau.ai.core.types import AssistantMessage, ToolCall

DoneReason: TypeAlias = Literal["stop", "length", "toolUse"]
ErrorReason: TypeAlias = Literal["error", "aborted"]


class StartEvent:
    """The response has started; ``partial`` is the empty message."""

    __slots__ = ("partial",)
    type: ClassVar[Literal["start"]] = "start"

    def __init__(self, partial: AssistantMessage) -> None:
        self.partial = partial

    def __repr__(self) -> str:
        return "StartEvent()"


class _BlockEvent:
    __slots__ = ("content_index", "partial")

    def __init__(self, content_index: int, partial: AssistantMessage) -> None:
        self.content_index = content_index
        self.partial = partial

    def __repr__(self) -> str:
        return f"{type(self).__name__}(content_index={self.content_index})"


class _DeltaEvent:
    __slots__ = ("content_index", "delta", "partial")

    def __init__(self, content_index: int, delta: str, partial: AssistantMessage) -> None:
        self.content_index = content_index
        self.delta = delta
        self.partial = partial

    def __repr__(self) -> str:
        return f"{type(self).__name__}(content_index={self.content_index}, delta={self.delta!r})"


class _EndEvent:
    __slots__ = ("content", "content_index", "partial")

    def __init__(self, content_index: int, content: str, partial: AssistantMessage) -> None:
        self.content_index = content_index
        self.content = content
        self.partial = partial

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(content_index={self.content_index}, content={self.content!r})"
        )


class TextStartEvent(_BlockEvent):
    """A text block opened at ``content_index``."""

    __slots__ = ()
    type: ClassVar[Literal["text_start"]] = "text_start"


class TextDeltaEvent(_DeltaEvent):
    """Text appended to the block at ``content_index``."""

    __slots__ = ()
    type: ClassVar[Literal["text_delta"]] = "text_delta"


class TextEndEvent(_EndEvent):
    """The text block at ``content_index`` is complete; ``content`` is its whole text."""

    __slots__ = ()
    type: ClassVar[Literal["text_end"]] = "text_end"


class ThinkingStartEvent(_BlockEvent):
    """A thinking block opened at ``content_index``."""

    __slots__ = ()
    type: ClassVar[Literal["thinking_start"]] = "thinking_start"


class ThinkingDeltaEvent(_DeltaEvent):
    """Reasoning appended to the block at ``content_index``."""

    __slots__ = ()
    type: ClassVar[Literal["thinking_delta"]] = "thinking_delta"


class ThinkingEndEvent(_EndEvent):
    """The thinking block at ``content_index`` is complete; ``content`` is its whole text."""

    __slots__ = ()
    type: ClassVar[Literal["thinking_end"]] = "thinking_end"


class ToolCallStartEvent(_BlockEvent):
    """A tool call opened at ``content_index`` (its id and name are on the block)."""

    __slots__ = ()
    type: ClassVar[Literal["toolcall_start"]] = "toolcall_start"


class ToolCallDeltaEvent(_DeltaEvent):
    """A fragment of the tool call's JSON arguments."""

    __slots__ = ()
    type: ClassVar[Literal["toolcall_delta"]] = "toolcall_delta"


class ToolCallEndEvent:
    """The tool call at ``content_index`` is complete, with its final parsed arguments."""

    __slots__ = ("content_index", "partial", "tool_call")
    type: ClassVar[Literal["toolcall_end"]] = "toolcall_end"

    def __init__(self, content_index: int, tool_call: ToolCall, partial: AssistantMessage) -> None:
        self.content_index = content_index
        self.tool_call = tool_call
        self.partial = partial

    def __repr__(self) -> str:
        return f"ToolCallEndEvent(content_index={self.content_index}, tool_call={self.tool_call!r})"


class DoneEvent:
    """The response ended normally; ``message`` is final."""

    __slots__ = ("message", "reason")
    type: ClassVar[Literal["done"]] = "done"

    def __init__(self, reason: DoneReason, message: AssistantMessage) -> None:
        self.reason = reason
        self.message = message

    def __repr__(self) -> str:
        return f"DoneEvent(reason={self.reason!r})"


class ErrorEvent:
    """The response failed or was aborted.

    ``error`` is the message as far as it got: partial content, usage so far, and
    ``error_message`` saying what went wrong. ``cause`` is the exception that ended the
    stream when it was raised in this process (None for a failure known only as text, such
    as one relayed by a proxy): code that must tell failures apart, like
    :func:`tau.ai.fallback_stream_fn`, reads its type and ``status`` instead of the text.
    """

    __slots__ = ("cause", "error", "reason")
    type: ClassVar[Literal["error"]] = "error"

    def __init__(
        self, reason: ErrorReason, error: AssistantMessage, cause: BaseException | None = None
    ) -> None:
        self.reason = reason
        self.error = error
        self.cause = cause

    def __repr__(self) -> str:
        return f"ErrorEvent(reason={self.reason!r}, error_message={self.error.error_message!r})"


AssistantMessageEvent: TypeAlias = (
    StartEvent
    | TextStartEvent
    | TextDeltaEvent
    | TextEndEvent
    | ThinkingStartEvent
    | ThinkingDeltaEvent
    | ThinkingEndEvent
    | ToolCallStartEvent
    | ToolCallDeltaEvent
    | ToolCallEndEvent
    | DoneEvent
    | ErrorEvent
)
"""Any of the 12 events of a streamed response."""
