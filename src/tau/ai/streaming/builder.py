"""The message builder: one streamed response's ``partial`` message and its events.

An adapter is an ``async def run(builder)`` that translates provider output into calls on a
:class:`MessageBuilder`, which keeps the stream contract's block rules: ``start`` first,
start/delta/end per block, exactly one terminal event, unfinished tool calls never ended, and
the output cap (:mod:`tau.ai.streaming.output_cap`). :func:`~tau.ai.streaming.launch.launch_stream`
runs the adapter as a task around a builder.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from tau.ai.core.cost import calculate_cost
from tau.ai.core.errors import ABORTED_MESSAGE as ABORTED_MESSAGE
from tau.ai.core.errors import UNKNOWN_ERROR_MESSAGE as UNKNOWN_ERROR_MESSAGE
from tau.ai.core.errors import ProviderConnectionError as ProviderConnectionError
from tau.ai.core.errors import ProviderError as ProviderError
from tau.ai.core.errors import ProviderTimeoutError as ProviderTimeoutError
from tau.ai.core.errors import describe_error as describe_error
from tau.ai.core.events import (
    DoneEvent,
    ErrorEvent,
    ErrorReason,
    StartEvent,
    TextDeltaEvent,
    TextEndEvent,
    TextStartEvent,
    ThinkingDeltaEvent,
    ThinkingEndEvent,
    ThinkingStartEvent,
    ToolCallDeltaEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
)
from tau.ai.core.settings import default_max_tokens
from tau.ai.core.types import (
    AssistantContent,
    AssistantMessage,
    Model,
    TextContent,
    ThinkingContent,
    ToolCall,
)
from tau.ai.streaming.event_stream import AssistantMessageEventStream
from tau.ai.streaming.output_cap import output_chars_for


class MessageBuilder:
    """Builds the one ``partial`` message of a stream and pushes the matching events.

    Adapters address blocks by the provider's own key: an output index, a block id, whatever
    the wire format names a block by (``None`` for "the current block" of a protocol that
    streams one block after another). The builder opens a block on the first use of a key,
    maps keys to content indexes, and applies the rules every protocol shares:

    * a key names one open block; a delta of another kind for it (text after thinking under
      ``None``, as chat completions streams them) closes that block and opens a new one;
    * opening a tool call closes the block under ``None`` (a call ends the text before it);
    * ``start=False`` appends only to a block the key already opened (protocols that announce
      every block, where a delta for anything else is ignored); the method then returns None.

    Blocks can also be addressed by content index (``open_text``/``text_delta``/…), the
    primitives the keyed methods are built on.

    A tool call is finished only when its adapter closes it, as the wire format marks the end
    of a call, and its streamed JSON text is then complete. One that is not (the provider
    never closed it, or the text stops inside a value, as a response cut by a token limit
    leaves it) never gets a ``toolcall_end``: the stream ends with an ``error`` event naming
    it, so nobody runs a call the model did not finish.

    The cost is computed once, when the stream ends (:meth:`done` or :meth:`fail`), from
    ``message.usage`` and the model's prices times :attr:`cost_multiplier`.

    Output is capped: text, thinking and tool-call argument deltas together may hold at most
    ``output_cap`` characters (:func:`output_cap`); the delta that passes it raises
    :class:`~tau.ai.core.errors.ProviderError`, which ends the stream with an ``error``. A server
    that streams without end (or far past ``max_tokens``) costs bounded memory.
    """

    __slots__ = (
        "_calls",
        "_cap",
        "_cut",
        "_open",
        "_push",
        "_room",
        "_started",
        "_texts",
        "_thoughts",
        "cost_multiplier",
        "message",
        "model",
        "stream",
    )

    def __init__(
        self, model: Model, stream: AssistantMessageEventStream, output_cap: int | None = None
    ) -> None:
        self.model = model
        self._cap = (
            output_chars_for(default_max_tokens(model)) if output_cap is None else output_cap
        )
        # Characters the deltas may still add: one subtraction per delta keeps the cap.
        self._room = self._cap
        self.stream = stream
        self._push = stream.push
        self.message = AssistantMessage(
            content=[], api=model.api, provider=model.provider, model=model.id
        )
        self._started = False
        self._open: set[int] = set()
        # Calls whose adapter closed them while their JSON text stopped inside a value.
        self._cut: set[int] = set()
        # The provider's key of each open block -> (its content index, the block), by kind.
        self._texts: dict[Hashable, tuple[int, TextContent]] = {}
        self._thoughts: dict[Hashable, tuple[int, ThinkingContent]] = {}
        self._calls: dict[Hashable, tuple[int, ToolCall]] = {}
        self.cost_multiplier: float | None = 1.0
        """The factor on the model's prices (a service tier's); None when ``usage.cost``
        arrives already computed (a proxy relays its server's) and is kept as it is."""

    @property
    def started(self) -> bool:
        """Whether ``start`` was pushed."""
        return self._started

    @property
    def finished(self) -> bool:
        """Whether a terminal event was pushed."""
        return self.stream.done

    def unread(self) -> int:
        """Events pushed that no consumer has taken yet (what a slow reader leaves queued)."""
        return self.stream.unread

    def start(self) -> None:
        """Push ``start`` (once; block methods call it when needed)."""
        if not self._started:
            self._started = True
            self._push(StartEvent(self.message))

    def response_id(self, value: object) -> None:
        """Keep the provider's response id (the first non-empty string given)."""
        if self.message.response_id is None and isinstance(value, str) and value:
            self.message.response_id = value

    # ----------------------------------------------------------------------- blocks by key

    def text(
        self,
        key: Hashable,
        delta: str,
        *,
        signature: str | None = None,
        start: bool = True,
    ) -> int | None:
        """Append ``delta`` to the text block ``key`` names; returns its content index.

        ``signature`` is the ``text_signature`` of a block this call opens (to change an open
        block's, use :meth:`block`).
        """
        entry = self._texts.get(key)
        if entry is None:
            if not start:
                return None
            self._release(key)
            index = self.open_text(signature)
            block = self.message.content[index]
            assert isinstance(block, TextContent)
            entry = self._texts[key] = (index, block)
        if delta:
            self._room -= len(delta)
            if self._room < 0:
                raise self._over_cap()
            entry[1].append(delta)
            self._push(TextDeltaEvent(entry[0], delta, self.message))
        return entry[0]

    def thinking(
        self,
        key: Hashable,
        delta: str,
        *,
        signature: str | None = None,
        redacted: bool = False,
        start: bool = True,
    ) -> int | None:
        """Append ``delta`` to the thinking block ``key`` names; returns its content index.

        ``signature`` is the ``thinking_signature`` and ``redacted`` the flag of a block this
        call opens (to change an open block's, use :meth:`block`).
        """
        entry = self._thoughts.get(key)
        if entry is None:
            if not start:
                return None
            self._release(key)
            index = self.open_thinking(signature, redacted=redacted)
            block = self.message.content[index]
            assert isinstance(block, ThinkingContent)
            entry = self._thoughts[key] = (index, block)
        if delta:
            self._room -= len(delta)
            if self._room < 0:
                raise self._over_cap()
            entry[1].append(delta)
            self._push(ThinkingDeltaEvent(entry[0], delta, self.message))
        return entry[0]

    def tool_call(
        self,
        key: Hashable,
        *,
        id: str = "",
        name: str = "",
        args_delta: str = "",
        arguments: dict[str, Any] | None = None,
        thought_signature: str | None = None,
        start: bool = True,
    ) -> int | None:
        """Append ``args_delta`` (a fragment of the arguments' JSON text) to the call ``key``
        names, opening it with ``id``, ``name`` and ``thought_signature`` on first use.

        ``arguments`` is a call that arrived whole: it opens, streams its JSON as one delta and
        closes at once. Returns the call's content index.
        """
        entry = self._calls.get(key)
        if entry is None:
            if not start:
                return None
            self._release(key)
            self._release(None)
            index = self.open_tool_call(id, name, thought_signature=thought_signature)
            block = self.message.content[index]
            assert isinstance(block, ToolCall)
            if arguments is not None:
                block.arguments = arguments
                # Imported here: only whole-argument calls need it, and not `import tau.ai`.
                import json

                text = json.dumps(arguments)
                self._room -= len(text)
                if self._room < 0:
                    raise self._over_cap()
                self._push(ToolCallDeltaEvent(index, text, self.message))
                self.close_tool_call(index, arguments)
                return index
            entry = self._calls[key] = (index, block)
        if args_delta:
            self._room -= len(args_delta)
            if self._room < 0:
                raise self._over_cap()
            entry[1].feed_arguments(args_delta)
            self._push(ToolCallDeltaEvent(entry[0], args_delta, self.message))
        return entry[0]

    def block(self, key: Hashable) -> AssistantContent | None:
        """The open block ``key`` names (to change its signature, name or id), or None."""
        entry: tuple[int, AssistantContent] | None = self._texts.get(key)
        if entry is None:
            entry = self._thoughts.get(key) or self._calls.get(key)
        return None if entry is None else entry[1]

    def close(self, key: Hashable, arguments: dict[str, Any] | None = None) -> None:
        """Close the block ``key`` names (nothing if none is open); a later use opens anew.

        For a tool call, ``arguments`` are its final arguments; without them, the parse of the
        streamed JSON text, and text that stops inside a value leaves the call unfinished.
        """
        call = self._calls.pop(key, None)
        if call is not None:
            self.close_tool_call(call[0], arguments)
        else:
            self._release(key)

    def close_calls(self) -> None:
        """Close every open tool call, in content order (the end of a response ends them all,
        in protocols that mark no end per call)."""
        calls, self._calls = self._calls, {}
        for index, _ in sorted(calls.values(), key=_first):
            self.close_tool_call(index)

    def _release(self, key: Hashable) -> None:
        # ``key`` is about to name a new block (or is done): the one it named is over.
        text = self._texts.pop(key, None)
        if text is not None:
            self.close_text(text[0])
            return
        thought = self._thoughts.pop(key, None)
        if thought is not None:
            self.close_thinking(thought[0])
            return
        call = self._calls.pop(key, None)
        if call is not None:
            self.close_tool_call(call[0])

    # ----------------------------------------------------------------------- text

    def open_text(self, text_signature: str | None = None) -> int:
        """Open a text block; returns its content index."""
        self.start()
        content = self.message.content
        index = len(content)
        content.append(TextContent("", text_signature))
        self._open.add(index)
        self._push(TextStartEvent(index, self.message))
        return index

    def text_delta(self, index: int, delta: str) -> None:
        """Append text to the block at ``index``."""
        self._room -= len(delta)
        if self._room < 0:
            raise self._over_cap()
        block = self.message.content[index]
        assert isinstance(block, TextContent)
        block.append(delta)
        self._push(TextDeltaEvent(index, delta, self.message))

    def close_text(self, index: int) -> None:
        """Close the text block at ``index`` (no-op if already closed)."""
        if index in self._open:
            self._open.discard(index)
            block = self.message.content[index]
            assert isinstance(block, TextContent)
            self._push(TextEndEvent(index, block.text, self.message))

    # ----------------------------------------------------------------------- thinking

    def open_thinking(self, signature: str | None = None, *, redacted: bool = False) -> int:
        """Open a thinking block; returns its content index."""
        self.start()
        content = self.message.content
        index = len(content)
        content.append(ThinkingContent("", signature, True if redacted else None))
        self._open.add(index)
        self._push(ThinkingStartEvent(index, self.message))
        return index

    def thinking_delta(self, index: int, delta: str) -> None:
        """Append reasoning to the block at ``index``."""
        self._room -= len(delta)
        if self._room < 0:
            raise self._over_cap()
        block = self.message.content[index]
        assert isinstance(block, ThinkingContent)
        block.append(delta)
        self._push(ThinkingDeltaEvent(index, delta, self.message))

    def close_thinking(self, index: int) -> None:
        """Close the thinking block at ``index`` (no-op if already closed)."""
        if index in self._open:
            self._open.discard(index)
            block = self.message.content[index]
            assert isinstance(block, ThinkingContent)
            self._push(ThinkingEndEvent(index, block.thinking, self.message))

    # ----------------------------------------------------------------------- tool calls

    def open_tool_call(self, id: str, name: str, *, thought_signature: str | None = None) -> int:
        """Open a tool-call block; returns its content index."""
        self.start()
        content = self.message.content
        index = len(content)
        content.append(ToolCall(id, name, None, thought_signature))
        self._open.add(index)
        self._push(ToolCallStartEvent(index, self.message))
        return index

    def tool_call_delta(self, index: int, delta: str) -> None:
        """Append a fragment of the arguments' JSON to the call at ``index``."""
        self._room -= len(delta)
        if self._room < 0:
            raise self._over_cap()
        block = self.message.content[index]
        assert isinstance(block, ToolCall)
        block.feed_arguments(delta)
        self._push(ToolCallDeltaEvent(index, delta, self.message))

    def close_tool_call(self, index: int, arguments: dict[str, Any] | None = None) -> None:
        """Close the call at ``index``: ``arguments`` if given, else the parse of the fragments.

        Fragments that stop inside a value leave the call unfinished (see the class docstring).
        """
        if index not in self._open or index in self._cut:
            return
        block = self.message.content[index]
        assert isinstance(block, ToolCall)
        if arguments is not None:
            block.arguments = arguments
        elif not block.finish_arguments():
            self._cut.add(index)
            return
        self._open.discard(index)
        self._push(ToolCallEndEvent(index, block, self.message))

    # ----------------------------------------------------------------------- ending

    def close_block(self, index: int) -> None:
        """Close whatever block is at ``index``."""
        block = self.message.content[index]
        if isinstance(block, TextContent):
            self.close_text(index)
        elif isinstance(block, ThinkingContent):
            self.close_thinking(index)
        else:
            self.close_tool_call(index)

    def close_all(self) -> None:
        """Close every open block, in content order."""
        for index in sorted(self._open):
            self.close_block(index)

    def done(self) -> None:
        """End normally with ``message.stop_reason`` (closing open blocks first).

        A stop reason of ``error``/``aborted`` ends with an ``error`` event instead.
        """
        if self.stream.done:
            return
        msg = self.message
        reason = msg.stop_reason
        if reason == "error" or reason == "aborted":
            self.fail(msg.error_message or UNKNOWN_ERROR_MESSAGE, aborted=reason == "aborted")
            return
        unfinished = [
            block
            for index in sorted(self._open)
            if isinstance(block := msg.content[index], ToolCall)
        ]
        if unfinished:
            self.fail(_unfinished_calls_message(unfinished, reason))
            return
        self.start()
        self.close_all()
        self._price()
        self._push(DoneEvent(reason, msg))

    def fail(
        self, error_message: str, *, aborted: bool = False, cause: BaseException | None = None
    ) -> None:
        """End with an ``error`` event, keeping the partial content and usage.

        ``cause`` is the exception behind the failure, if any (the event's ``cause``).
        """
        if self.stream.done:
            return
        self.start()
        msg = self.message
        for index in self._open:
            block = msg.content[index]
            if isinstance(block, ToolCall):
                block.finish_arguments()
        self._open.clear()
        reason: ErrorReason = "aborted" if aborted else "error"
        msg.stop_reason = reason
        msg.error_message = error_message
        self._price()
        self._push(ErrorEvent(reason, msg, cause))

    def _over_cap(self) -> ProviderError:
        return ProviderError(
            f"The response passed its output cap of {self._cap} characters, far more than "
            "its token limit allows: the server kept streaming, so the stream was ended there "
            "(the cap is 1 Mi characters + 64 per token of max_tokens; the max_output_chars "
            "option sets it)"
        )

    def _price(self) -> None:
        if self.cost_multiplier is not None:
            calculate_cost(self.model, self.message.usage, self.cost_multiplier)


def _first(entry: tuple[int, object]) -> int:
    return entry[0]


def _unfinished_calls_message(calls: list[ToolCall], reason: str) -> str:
    names = ", ".join(f"{call.name!r} (id {call.id!r})" for call in calls)
    plural = "s" if len(calls) > 1 else ""
    return (
        f"The response ended (stop reason {reason!r}) inside tool call{plural} {names}: "
        "the arguments never closed, so the call was not finished"
    )
