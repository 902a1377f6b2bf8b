"""Scripted responses: what a faux model answers, and what it was asked (for tests)."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from tau.ai.core.errors import ProviderError
from tau.ai.core.types import (
    AssistantContent,
    Context,
    Model,
    StopReason,
    TextContent,
    ThinkingContent,
    ToolCall,
    Usage,
    UserMessage,
)
from tau.ai.providers.faux.options import FauxOptions

__all__ = [
    "FauxResponse",
    "FauxScript",
    "faux_calls",
    "faux_model",
    "faux_payloads",
    "next_response",
    "record_payload",
    "text",
    "thinking",
    "tool_call",
]


def text(value: str, *, signature: str | None = None) -> TextContent:
    """A text block for a scripted response."""
    return TextContent(value, signature)


def thinking(value: str, *, signature: str | None = None) -> ThinkingContent:
    """A thinking block for a scripted response."""
    return ThinkingContent(value, signature)


_ids = itertools.count(1)


def tool_call(name: str, arguments: dict[str, Any], *, id: str | None = None) -> ToolCall:
    """A tool call for a scripted response (ids default to ``faux_call_<n>``)."""
    return ToolCall(id or f"faux_call_{next(_ids)}", name, arguments)


@dataclass
class FauxResponse:
    """One scripted response.

    ``chunk_size`` characters go in each delta (0: each block in one delta); ``delay`` seconds
    pass before each delta and ``first_delay`` before the first byte. ``error`` ends the
    response with that error after streaming ``content``, as the HTTP status ``error_status``
    if one is given (529: an overloaded provider). ``usage`` defaults to a count of about four
    characters per token, with cost from the model's prices.
    """

    content: Sequence[AssistantContent | str] = ()
    stop_reason: StopReason | None = None
    usage: Usage | None = None
    error: str | None = None
    error_status: int | None = None
    chunk_size: int = 4
    delay: float = 0.0
    first_delay: float = 0.0


FauxScript: TypeAlias = (
    Sequence[FauxResponse] | Callable[[Context, Mapping[str, Any]], FauxResponse]
)


@dataclass
class _ScriptState:
    script: FauxScript | None
    position: int = 0
    calls: list[tuple[Context, dict[str, Any]]] = field(default_factory=list)
    payloads: list[dict[str, Any]] = field(default_factory=list)


_scripts: dict[str, _ScriptState] = {}
_script_ids = itertools.count(1)


def faux_model(
    script: FauxScript | None = None,
    *,
    id: str = "faux-model",
    reasoning: bool = False,
    images: bool = True,
    context_window: int = 128_000,
    max_tokens: int = 16_384,
    provider: str = "faux",
) -> Model:
    """A model whose responses come from ``script`` (an echo model if None)."""
    key = f"script-{next(_script_ids)}"
    _scripts[key] = _ScriptState(script)
    return Model(
        id=id,
        name=f"Faux {id}",
        api="faux",
        provider=provider,
        base_url=f"faux://{key}",
        reasoning=reasoning,
        input=["text", "image"] if images else ["text"],
        context_window=context_window,
        max_tokens=max_tokens,
    )


def faux_calls(model: Model) -> list[tuple[Context, dict[str, Any]]]:
    """Every ``(context, options)`` a faux model was called with, in order (for tests)."""
    return _state(model).calls


def faux_payloads(model: Model) -> list[dict[str, Any]]:
    """The request bodies a faux model "sent", after ``on_payload``, in order (for tests)."""
    return _state(model).payloads


def _state(model: Model) -> _ScriptState:
    key = model.base_url.removeprefix("faux://")
    state = _scripts.get(key)
    if state is None:
        state = _scripts[key] = _ScriptState(None)
    return state


def next_response(model: Model, context: Context, options: FauxOptions) -> FauxResponse:
    state = _state(model)
    state.calls.append((context, dict(options)))
    script = state.script
    if script is None:
        return FauxResponse([text(_echo(context))])
    if callable(script):
        return script(context, options)
    if state.position >= len(script):
        raise ProviderError(
            f"faux model {model.id!r}: no scripted response left "
            f"({len(script)} given, call {state.position + 1})"
        )
    response = script[state.position]
    state.position += 1
    return response


def _echo(context: Context) -> str:
    for message in reversed(context.messages):
        if isinstance(message, UserMessage):
            if isinstance(message.content, str):
                return message.content
            # Blocks are separate texts (a prompt, then an attached file): keep them apart.
            return "\n\n".join(b.text for b in message.content if isinstance(b, TextContent))
    return "(faux: nothing to echo)"


def record_payload(model: Model, payload: dict[str, Any]) -> None:
    """Keep what ``model`` "sent" (see :func:`faux_payloads`)."""
    _state(model).payloads.append(payload)
