"""``faux``: a scripted provider that streams given responses through the real event machinery.

Higher layers test against it, the examples use it, and it lets anyone try tau with no key
and no model::

    from tau.ai import complete, Context, UserMessage
    from tau.ai.providers.faux import FauxResponse, faux_model, text, tool_call

    model = faux_model([
        FauxResponse([tool_call("get_weather", {"city": "Paris"})]),
        FauxResponse([text("It is sunny in Paris.")]),
    ])

A script is a list of responses (used in order) or a function ``(context, options) ->
FauxResponse`` for replies that depend on the request. A model with no script echoes the
last user message, its text blocks a blank line apart (the catalog's
``get_model("faux", "echo")`` is one).

Like a real adapter, each call builds a request body (the model id, the pi-format context,
the sampling options) and runs the ``on_payload`` hook on it before any response is chosen;
:func:`faux_payloads` keeps what was "sent".
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from tau.ai.capabilities.serialization import dump_context
from tau.ai.capabilities.size import context_chars
from tau.ai.core.errors import ProviderError
from tau.ai.core.options import SimpleStreamOptions, ToolChoiceOption
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
from tau.ai.streaming.adapter import apply_on_payload
from tau.ai.streaming.builder import MessageBuilder
from tau.ai.streaming.event_stream import AssistantMessageEventStream
from tau.ai.streaming.launch import launch_stream

__all__ = [
    "OPTIONS",
    "SIMPLE_OPTIONS",
    "FauxOptions",
    "FauxResponse",
    "FauxScript",
    "faux_calls",
    "faux_model",
    "faux_payloads",
    "stream",
    "stream_simple",
    "text",
    "thinking",
    "tool_call",
]


class FauxOptions(SimpleStreamOptions, ToolChoiceOption, total=False):
    """What a faux model takes: the simple options, and a tool choice (recorded only), so
    that it stands in for a real adapter under ``stream`` and ``stream_simple`` alike."""


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


def request_body(model: Model, context: Context, options: FauxOptions) -> dict[str, Any]:
    """What a real adapter would send: the model, the pi-format context, the sampling options."""
    payload: dict[str, Any] = {"model": model.id, **dump_context(context)}
    for key in ("max_tokens", "temperature", "reasoning", "output_schema"):
        if options.get(key) is not None:
            payload[key] = options[key]
    return payload


def _state(model: Model) -> _ScriptState:
    key = model.base_url.removeprefix("faux://")
    state = _scripts.get(key)
    if state is None:
        state = _scripts[key] = _ScriptState(None)
    return state


def _next_response(model: Model, context: Context, options: FauxOptions) -> FauxResponse:
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


def _chunks(value: str, size: int) -> list[str]:
    if size <= 0 or len(value) <= size:
        return [value]
    return [value[i : i + size] for i in range(0, len(value), size)]


def _count_tokens(chars: int) -> int:
    return (chars + 3) // 4


def stream(model: Model, context: Context, options: FauxOptions) -> AssistantMessageEventStream:
    """Stream the model's next scripted response."""

    async def run(out: MessageBuilder) -> None:
        payload = await apply_on_payload(options, request_body(model, context, options), model)
        _state(model).payloads.append(payload)
        response = _next_response(model, context, options)
        if response.first_delay:
            await asyncio.sleep(response.first_delay)
        out.start()
        # Usage grows as the response streams, as a real provider's does: a response aborted
        # half-way still reports the prompt and what it produced so far.
        spent = Usage(input=_count_tokens(context_chars(context)))
        output_chars = 0

        def produced(chars: int) -> None:
            nonlocal output_chars
            output_chars += chars
            spent.output = _count_tokens(output_chars)
            spent.total_tokens = spent.input + spent.output

        produced(0)
        out.message.usage = spent

        async def pause() -> None:
            # Even with no delay, yield so a consumer sees events as they are made.
            await asyncio.sleep(response.delay)

        # Each scripted block is the builder's block under its position in the script.
        for key, block in enumerate(response.content):
            if isinstance(block, str):
                block = TextContent(block)
            if isinstance(block, TextContent):
                out.text(key, "", signature=block.text_signature)
                for piece in _chunks(block.text, response.chunk_size):
                    await pause()
                    out.text(key, piece)
                    produced(len(piece))
            elif isinstance(block, ThinkingContent):
                signature = block.thinking_signature
                out.thinking(key, "", signature=signature, redacted=bool(block.redacted))
                for piece in _chunks(block.thinking, response.chunk_size):
                    await pause()
                    out.thinking(key, piece)
                    produced(len(piece))
            else:
                out.tool_call(
                    key, id=block.id, name=block.name, thought_signature=block.thought_signature
                )
                raw = json.dumps(block.arguments)
                for piece in _chunks(raw, response.chunk_size):
                    await pause()
                    out.tool_call(key, args_delta=piece)
                    produced(len(piece))
                out.close(key, block.arguments)
                continue
            out.close(key)

        if response.usage is not None:
            out.message.usage = response.usage
        if response.error is not None:
            raise ProviderError(response.error, status=response.error_status)
        has_calls = any(isinstance(b, ToolCall) for b in out.message.content)
        out.message.stop_reason = response.stop_reason or ("toolUse" if has_calls else "stop")

    return launch_stream(model, options, run)


stream_simple = stream
"""The faux provider takes the simple options as they are (``reasoning`` is recorded only)."""

OPTIONS = FauxOptions
SIMPLE_OPTIONS = FauxOptions
