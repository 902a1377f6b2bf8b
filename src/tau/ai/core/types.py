"""The data model of one LLM call: models, messages, content blocks, tools, usage.

Attribute names are Python's snake_case; the JSON form (see :mod:`tau.ai.capabilities.serialization`)
uses exactly pi-ai's camelCase field names and discriminator values, so a conversation saved
by either library loads in the other.

Blocks, tool calls and tools compare by value (``__eq__``), which also makes them unhashable,
as mutable values should be.

Content blocks that grow while a response streams (text, thinking, tool-call arguments) keep
their growth in an internal chunk list and join it only when read, so building a message of
any size stays linear however many deltas it arrives in.
"""

from __future__ import annotations

import time
from dataclasses import Field, dataclass, field, fields
from operator import attrgetter
from typing import TYPE_CHECKING, Any, ClassVar, Literal, TypeAlias, TypedDict

if TYPE_CHECKING:
    from pydantic import BaseModel

    from tau.ai.core.compat import OpenAICompletionsCompat
    from tau.ai.streaming.partial_json import IncrementalJsonParser

StopReason: TypeAlias = Literal["stop", "length", "toolUse", "error", "aborted"]
"""Why a response ended. ``error`` and ``aborted`` arrive as an ``error`` event."""

ThinkingLevel: TypeAlias = Literal["minimal", "low", "medium", "high", "xhigh"]
"""The unified reasoning level of :func:`tau.ai.stream_simple`."""

CacheRetention: TypeAlias = Literal["none", "short", "long"]
"""Prompt-cache retention: none, the provider's default (short), or the long TTL."""

Modality: TypeAlias = Literal["text", "image"]


class ThinkingBudgets(TypedDict, total=False):
    """Token budgets per reasoning level, for providers that take a budget."""

    minimal: int
    low: int
    medium: int
    high: int


def now_ms() -> int:
    """The current time as integer Unix milliseconds, the timestamp unit of every message."""
    return int(time.time() * 1000)


class _Record:
    """Value equality and the usual repr, written once for the dataclasses below.

    ``@dataclass`` generates (compiles) both for every class by default, which cost
    ``import tau.ai`` about 2 ms for these eight; these behave the same (equal when of the
    same class with equal fields, ``Name(field=value, ...)``). Each is declared
    ``@dataclass(slots=True, eq=False, repr=False)``: only ``__init__`` is generated.
    """

    __slots__ = ()
    __dataclass_fields__: ClassVar[dict[str, Field[Any]]]

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        values = _field_values(type(self))
        return bool(values(self) == values(other))

    def __repr__(self) -> str:
        shown = ", ".join(f"{f.name}={getattr(self, f.name)!r}" for f in fields(self) if f.repr)
        return f"{type(self).__qualname__}({shown})"


_FIELD_VALUES: dict[type[_Record], attrgetter[Any]] = {}


def _field_values(cls: type[_Record]) -> attrgetter[Any]:
    # Built on a class's first comparison (not at import): its fields' values as one tuple,
    # read in C, which keeps ``==`` as quick as the generated method was.
    values = _FIELD_VALUES.get(cls)
    if values is None:
        values = _FIELD_VALUES[cls] = attrgetter(*(f.name for f in fields(cls)))
    return values


# --------------------------------------------------------------------------- content blocks


class TextContent:
    """A block of text. ``text_signature`` is opaque provider data needed to replay the block."""

    __slots__ = ("_chunks", "_text", "text_signature")
    type: ClassVar[Literal["text"]] = "text"

    def __init__(self, text: str = "", text_signature: str | None = None) -> None:
        self._text = text
        self._chunks: list[str] = []
        self.text_signature = text_signature

    @property
    def text(self) -> str:
        """The text so far."""
        if self._chunks:
            self._text += "".join(self._chunks)
            self._chunks.clear()
        return self._text

    @text.setter
    def text(self, value: str) -> None:
        self._chunks.clear()
        self._text = value

    def append(self, delta: str) -> None:
        """Add streamed text; O(1), joined when :attr:`text` is next read."""
        self._chunks.append(delta)

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, TextContent)
            and self.text == other.text
            and self.text_signature == other.text_signature
        )

    def __repr__(self) -> str:
        sig = f", text_signature={self.text_signature!r}" if self.text_signature else ""
        return f"TextContent(text={self.text!r}{sig})"


class ThinkingContent:
    """A block of model reasoning.

    ``thinking_signature`` holds what replaying the block to the same model needs (an Anthropic
    signature, an OpenAI reasoning item, the name of a chat-completions reasoning field…).
    ``redacted`` marks an Anthropic ``redacted_thinking`` block whose data is the signature.
    """

    __slots__ = ("_chunks", "_thinking", "redacted", "thinking_signature")
    type: ClassVar[Literal["thinking"]] = "thinking"

    def __init__(
        self,
        thinking: str = "",
        thinking_signature: str | None = None,
        redacted: bool | None = None,
    ) -> None:
        self._thinking = thinking
        self._chunks: list[str] = []
        self.thinking_signature = thinking_signature
        self.redacted = redacted

    @property
    def thinking(self) -> str:
        """The reasoning text so far."""
        if self._chunks:
            self._thinking += "".join(self._chunks)
            self._chunks.clear()
        return self._thinking

    @thinking.setter
    def thinking(self, value: str) -> None:
        self._chunks.clear()
        self._thinking = value

    def append(self, delta: str) -> None:
        """Add streamed reasoning; O(1), joined when :attr:`thinking` is next read."""
        self._chunks.append(delta)

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, ThinkingContent)
            and self.thinking == other.thinking
            and self.thinking_signature == other.thinking_signature
            and bool(self.redacted) == bool(other.redacted)
        )

    def __repr__(self) -> str:
        extra = ""
        if self.thinking_signature:
            extra += f", thinking_signature={self.thinking_signature[:24]!r}…"
        if self.redacted:
            extra += ", redacted=True"
        return f"ThinkingContent(thinking={self.thinking!r}{extra})"


class ToolCall:
    """A tool call requested by the model.

    While the call streams, :attr:`arguments` is the best-effort parse of the arguments so far
    (always a dict, ``{}`` at least), computed incrementally and only when read.
    """

    __slots__ = ("_arguments", "_parser", "id", "name", "thought_signature")
    type: ClassVar[Literal["toolCall"]] = "toolCall"

    def __init__(
        self,
        id: str,
        name: str,
        arguments: dict[str, Any] | None = None,
        thought_signature: str | None = None,
    ) -> None:
        self.id = id
        self.name = name
        self._arguments: dict[str, Any] = arguments if arguments is not None else {}
        self._parser: IncrementalJsonParser | None = None
        self.thought_signature = thought_signature

    @property
    def arguments(self) -> dict[str, Any]:
        """The call's arguments (the partial parse while streaming)."""
        if self._parser is not None:
            return self._parser.value()
        return self._arguments

    @arguments.setter
    def arguments(self, value: dict[str, Any]) -> None:
        self._parser = None
        self._arguments = value

    def feed_arguments(self, delta: str) -> None:
        """Add a streamed fragment of the arguments' JSON text."""
        if self._parser is None:
            from tau.ai.streaming.partial_json import IncrementalJsonParser

            self._parser = IncrementalJsonParser()
        self._parser.feed(delta)

    def finish_arguments(self) -> bool:
        """Replace the partial parse by the final parse of everything fed so far.

        Returns False when that text stops inside the arguments object (a string, key or value
        never finished): the arguments were cut off, and :attr:`arguments` holds their prefix.
        """
        parser = self._parser
        if parser is None:
            return True
        self._parser = None
        self._arguments = parser.final()
        return not parser.cut_off

    @property
    def arguments_text(self) -> str:
        """The raw JSON text fed so far (empty when the arguments arrived whole)."""
        return self._parser.text if self._parser is not None else ""

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, ToolCall)
            and self.id == other.id
            and self.name == other.name
            and self.arguments == other.arguments
            and self.thought_signature == other.thought_signature
        )

    def __repr__(self) -> str:
        return f"ToolCall(id={self.id!r}, name={self.name!r}, arguments={self.arguments!r})"


class ImageContent:
    """An image, as base64 data with its MIME type."""

    # A plain class like the other blocks: a dataclass's generated methods cost
    # ``import tau.ai`` half a millisecond for two fields.
    __slots__ = ("data", "mime_type")
    __match_args__ = ("data", "mime_type")
    type: ClassVar[Literal["image"]] = "image"

    def __init__(self, data: str, mime_type: str) -> None:
        self.data = data
        self.mime_type = mime_type

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, ImageContent)
            and self.data == other.data
            and self.mime_type == other.mime_type
        )

    def __repr__(self) -> str:
        # The data is base64 of a whole image: its size says enough.
        return f"ImageContent(mime_type={self.mime_type!r}, data=<{len(self.data):,} chars>)"


AssistantContent: TypeAlias = TextContent | ThinkingContent | ToolCall
"""A block of an assistant message: text, thinking or a tool call."""
UserContent: TypeAlias = TextContent | ImageContent
"""A block of a user message (or of a tool result): text or an image."""


# --------------------------------------------------------------------------- usage


@dataclass(slots=True, eq=False, repr=False)
class UsageCost(_Record):
    """Cost of one response in USD, per component."""

    input: float = 0.0
    output: float = 0.0
    cache_read: float = 0.0
    cache_write: float = 0.0
    total: float = 0.0


@dataclass(slots=True, eq=False, repr=False)
class Usage(_Record):
    """Token counts of one response.

    ``input`` is the non-cached prompt tokens; ``cache_read`` and ``cache_write`` are separate
    from it; ``output`` includes reasoning; ``reasoning`` is the reasoning share of ``output``
    when the provider reports it, else None (unknown, never invented).
    """

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    total_tokens: int = 0
    cost: UsageCost = field(default_factory=UsageCost)
    reasoning: int | None = None


# --------------------------------------------------------------------------- messages


@dataclass(slots=True, eq=False, repr=False)
class UserMessage(_Record):
    """A user turn: plain text, or a list of text and image blocks."""

    content: str | list[UserContent]
    timestamp: int = field(default_factory=now_ms)
    role: Literal["user"] = field(default="user", init=False)


@dataclass(slots=True, eq=False, repr=False)
class AssistantMessage(_Record):
    """A model turn, with the api, provider and model that produced it (needed for handoff)."""

    content: list[AssistantContent]
    api: str
    provider: str
    model: str
    usage: Usage = field(default_factory=Usage)
    stop_reason: StopReason = "stop"
    error_message: str | None = None
    timestamp: int = field(default_factory=now_ms)
    response_id: str | None = None
    """The provider's id of this response (``msg_…``, ``chatcmpl-…``, ``resp_…``) when it
    sends one."""
    role: Literal["assistant"] = field(default="assistant", init=False)

    @property
    def text(self) -> str:
        """All text blocks, joined."""
        return "".join(b.text for b in self.content if isinstance(b, TextContent))

    @property
    def tool_calls(self) -> list[ToolCall]:
        """The tool-call blocks, in order."""
        return [b for b in self.content if isinstance(b, ToolCall)]


@dataclass(slots=True, eq=False, repr=False)
class ToolResultMessage(_Record):
    """The result of one tool call. ``details`` is for apps and is never sent to a provider."""

    tool_call_id: str
    tool_name: str
    content: list[UserContent]
    is_error: bool = False
    details: Any = None
    timestamp: int = field(default_factory=now_ms)
    role: Literal["toolResult"] = field(default="toolResult", init=False)


Message: TypeAlias = UserMessage | AssistantMessage | ToolResultMessage
"""One message of a conversation: from the user, from the model, or a tool's result."""
_MESSAGE_TYPES = (UserMessage, AssistantMessage, ToolResultMessage)


# --------------------------------------------------------------------------- tools, context


class Tool:
    """A tool's schema: what the model sees. Executing tools is the agent layer's business.

    ``parameters`` is a JSON Schema dict or a pydantic model class; for a model class, its
    JSON schema is what providers receive and the class itself validates arguments.
    """

    __slots__ = ("_schema", "description", "name", "parameters")

    def __init__(
        self,
        name: str,
        description: str,
        parameters: dict[str, Any] | type[BaseModel] | None = None,
    ) -> None:
        self.name = name
        self.description = description
        self.parameters: dict[str, Any] | type[BaseModel] = (
            parameters if parameters is not None else {"type": "object", "properties": {}}
        )
        self._schema: tuple[type[BaseModel], dict[str, Any]] | None = None

    @property
    def json_schema(self) -> dict[str, Any]:
        """The parameters as a JSON Schema dict."""
        params = self.parameters
        if isinstance(params, dict):
            return params
        # A model class's schema is costly to build: cache it, for that class only, so that
        # assigning new parameters never leaves a stale schema behind.
        cached = self._schema
        if cached is None or cached[0] is not params:
            cached = self._schema = (params, params.model_json_schema())
        return cached[1]

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Tool)
            and self.name == other.name
            and self.description == other.description
            and self.json_schema == other.json_schema
        )

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"


@dataclass(slots=True, eq=False, repr=False)
class Context(_Record):
    """Everything one call sends: system prompt, message history, tool schemas.

    A plain ``str`` among the messages (or as ``messages`` itself) is one user message, as it
    is for the entry points' ``context``; anything else that is not a message raises
    ``TypeError`` here, not as a blank answer later.
    """

    messages: list[Message] = field(default_factory=list)
    system_prompt: str | None = None
    tools: list[Tool] | None = None

    def __post_init__(self) -> None:
        messages: Any = self.messages
        if isinstance(messages, str):
            self.messages = [UserMessage(messages)]
            return
        has_text = False
        for index, message in enumerate(messages):
            if isinstance(message, _MESSAGE_TYPES):
                continue
            if not isinstance(message, str):
                raise TypeError(
                    f"Context.messages[{index}] is a {type(message).__name__}: expected a "
                    "UserMessage, AssistantMessage or ToolResultMessage (or a str for a user "
                    "message)"
                )
            has_text = True
        if has_text:
            self.messages = [UserMessage(m) if isinstance(m, str) else m for m in messages]


# --------------------------------------------------------------------------- models


@dataclass(slots=True, eq=False, repr=False)
class ModelCost(_Record):
    """Prices in USD per million tokens."""

    input: float = 0.0
    output: float = 0.0
    cache_read: float = 0.0
    cache_write: float = 0.0


@dataclass(slots=True, eq=False, repr=False)
class Model(_Record):
    """One model of one provider, and how to reach it."""

    id: str
    name: str
    api: str
    provider: str
    base_url: str
    reasoning: bool = False
    input: list[Modality] = field(default_factory=lambda: ["text"])
    cost: ModelCost = field(default_factory=ModelCost)
    context_window: int = 128_000
    max_tokens: int = 16_384
    headers: dict[str, str] | None = None
    compat: OpenAICompletionsCompat | None = None

    @property
    def supports_images(self) -> bool:
        """Whether the model accepts image input."""
        return "image" in self.input
