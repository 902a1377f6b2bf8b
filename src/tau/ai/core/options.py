"""Keyword options of the entry points, as ``TypedDict``s for ``Unpack``.

:class:`StreamOptions` are the options every adapter takes; each adapter declares its own
``TypedDict`` beside itself that extends them (``AnthropicOptions``…), and
:func:`tau.ai.stream` accepts exactly the keys of the adapter its model's api names: any
other key is a ``TypeError`` at the call, like an unknown keyword argument, naming the close
matches (:func:`check_options`).

The annotations are evaluated (no ``from __future__ import annotations``): a ``TypedDict``
turns each string annotation into a compiled ``ForwardRef``, which cost ``import tau.ai``
about 0.2 ms here.
"""

from collections.abc import Awaitable, Callable, Mapping
from typing import Any, NotRequired, TypeAlias, TypedDict

from tau.ai.core.abort import AbortSignal
from tau.ai.core.types import CacheRetention, Model, ThinkingBudgets, ThinkingLevel

PayloadHook: TypeAlias = Callable[
    [dict[str, Any], Model], "dict[str, Any] | Awaitable[dict[str, Any] | None] | None"
]
"""Sees the provider request body before it is sent; a returned dict replaces it."""


class Timeouts(TypedDict, total=False):
    """Seconds to wait: for the connection, for the first byte, and between two events."""

    connect: float
    first_byte: float
    idle: float


class OutputSchema(TypedDict):
    """Native structured output: the response's text is one JSON value following ``schema``.

    Each adapter maps it onto its provider's own wire format (``response_format``,
    ``text.format``, ``responseJsonSchema``, Anthropic's ``output_format``, a llama.cpp
    grammar), making the schema strict where the provider needs that and the schema allows
    it. An adapter whose provider has no native mode raises :class:`~tau.ai.ProviderError`
    (the stream's ``error`` event). :func:`tau.ai.complete_structured` sets it for you.
    """

    name: str
    """The schema's name (letters, digits, ``_`` and ``-``; at most 64)."""
    schema: dict[str, Any]
    """A JSON Schema whose root is an object."""
    description: NotRequired[str]


class StreamOptions(TypedDict, total=False):
    """Options every provider accepts."""

    api_key: str
    """Overrides the key from the environment."""
    signal: AbortSignal
    """Fires to abort the call; the stream ends with ``error``/``aborted``."""
    max_tokens: int
    temperature: float
    headers: dict[str, str]
    """Extra HTTP headers, applied last."""
    session_id: str
    """Used for prompt-cache keys and routing affinity where the provider supports them."""
    cache_retention: CacheRetention
    on_payload: PayloadHook
    metadata: dict[str, Any]
    client: Any
    """An ``httpx2.AsyncClient`` to use instead of the shared per-loop one."""
    timeout: float | Timeouts
    """One number for all three phases, or each phase separately."""
    max_retries: int
    """Retries of 429/5xx/overloaded before the first byte (default 3)."""
    max_retry_delay_ms: int
    """Fail instead of waiting when the server asks for a longer delay (default 60 000; 0 = no cap)."""
    max_output_chars: int
    """Characters of output (text, thinking, tool arguments) one response may stream before
    it ends with an error (default: 1 Mi + 64 per token of ``max_tokens``)."""
    max_buffered_events: int
    """Pause reading the response while the stream's reader leaves more events than this
    unread (default: no limit, for callers that only await the result)."""
    max_line_bytes: int
    """Bytes one incomplete server-sent event (or binary frame) may hold before the stream
    ends with an error (default 8 MiB)."""
    output_schema: OutputSchema
    """Ask for native structured output: the text follows this JSON Schema."""


class SimpleStreamOptions(StreamOptions, total=False):
    """:class:`StreamOptions` plus one unified reasoning level."""

    reasoning: ThinkingLevel
    thinking_budgets: ThinkingBudgets


ToolChoice: TypeAlias = str | dict[str, Any]
"""``"auto"``, ``"none"``, ``"any"``/``"required"``, a tool's name, or a provider-shaped dict."""


class ToolChoiceOption(TypedDict, total=False):
    """The ``tool_choice`` option of the adapters that take one (each says which forms)."""

    tool_choice: ToolChoice


def option_keys(options_type: type) -> frozenset[str]:
    """The keys a ``TypedDict`` of options declares (its bases' included)."""
    required: frozenset[str] = getattr(options_type, "__required_keys__", frozenset())
    optional: frozenset[str] = getattr(options_type, "__optional_keys__", frozenset())
    return required | optional


SIMPLE_ONLY_KEYS = option_keys(SimpleStreamOptions) - option_keys(StreamOptions)
"""The keys ``stream_simple`` maps to provider options instead of passing them on."""

COMMON_KEYS = option_keys(SimpleStreamOptions) | option_keys(ToolChoiceOption)
"""The keys of :class:`tau.ai.CommonSettings`: every provider's, never prefixed."""


def check_options(
    options: Mapping[str, Any], allowed: frozenset[str], what: str, *, noun: str = "option"
) -> None:
    """Raise ``TypeError`` if ``options`` has a key not in ``allowed``.

    ``what`` names the call (``"stream() for api 'anthropic-messages'"``); the message names
    each unknown key and the allowed keys closest to it, so a misspelling is never silently
    ignored. ``noun`` names what a key is (``"setting"``: then the allowed keys, too many to
    list, are not listed).
    """
    unknown = [key for key in options if key not in allowed]
    if not unknown:
        return
    import difflib

    problems = []
    for key in unknown:
        close = difflib.get_close_matches(str(key), sorted(allowed), n=3, cutoff=0.6)
        hint = f" (did you mean {' or '.join(repr(c) for c in close)}?)" if close else ""
        problems.append(f"{key!r}{hint}")
    plural = "s" if len(unknown) > 1 else ""
    takes = (
        "see tau.ai.Settings for the keys"
        if noun == "setting"
        else f"it takes: {', '.join(sorted(allowed))}"
    )
    raise TypeError(f"{what} got unknown {noun}{plural} {', '.join(problems)}; {takes}")
