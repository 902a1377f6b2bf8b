"""The event machinery every adapter shares.

An adapter is an ``async def run(builder)`` that translates provider output into calls on a
:class:`MessageBuilder`; :func:`launch_stream` runs it as a task and guarantees the stream
contract: ``start`` first, start/delta/end per block, exactly one terminal event, errors and
aborts in the stream (never raised), and the connection closed on abort or early exit.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from tau.ai.abort import AbortedError, AbortSignal
from tau.ai.event_stream import AssistantMessageEventStream
from tau.ai.events import (
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
from tau.ai.types import (
    AssistantMessage,
    Model,
    TextContent,
    ThinkingContent,
    ToolCall,
)

ABORTED_MESSAGE = "Request was aborted"
UNKNOWN_ERROR_MESSAGE = "An unknown error occurred"


class ProviderError(Exception):
    """A failure an adapter reports; its text becomes the message's ``error_message``.

    ``status`` is the HTTP status the provider gave for the failure, on the response or inside
    an error event of a streamed one (None when it gave none). ``retry_after`` is how many
    seconds the provider asked to wait before another request (its ``Retry-After``), when it
    named a delay: a scheduler that sends many requests slows down by it.
    """

    def __init__(
        self, *args: object, status: int | None = None, retry_after: float | None = None
    ) -> None:
        super().__init__(*args)
        self.status = status
        self.retry_after = retry_after


class ProviderConnectionError(ProviderError):
    """The request got no answer: no connection, or the connection broke."""


class ProviderTimeoutError(ProviderError):
    """Nothing arrived in time: the first byte, or the next chunk (the ``timeout`` option)."""


class MessageBuilder:
    """Builds the one ``partial`` message of a stream and pushes the matching events.

    Blocks are addressed by their content index, so adapters may keep several open at once
    (parallel tool calls, interleaved provider blocks).

    A tool call is finished only when its adapter closes it, as the wire format marks the end
    of a call, and its streamed JSON text is then complete. One that is not (the provider
    never closed it, or the text stops inside a value, as a response cut by a token limit
    leaves it) never gets a ``toolcall_end``: the stream ends with an ``error`` event naming
    it, so nobody runs a call the model did not finish.
    """

    __slots__ = ("_cut", "_open", "_push", "_started", "message", "model", "stream")

    def __init__(self, model: Model, stream: AssistantMessageEventStream) -> None:
        self.model = model
        self.stream = stream
        self._push = stream.push
        self.message = AssistantMessage(
            content=[], api=model.api, provider=model.provider, model=model.id
        )
        self._started = False
        self._open: set[int] = set()
        # Calls whose adapter closed them while their JSON text stopped inside a value.
        self._cut: set[int] = set()

    @property
    def started(self) -> bool:
        """Whether ``start`` was pushed."""
        return self._started

    @property
    def finished(self) -> bool:
        """Whether a terminal event was pushed."""
        return self.stream.done

    def start(self) -> None:
        """Push ``start`` (once; block methods call it when needed)."""
        if not self._started:
            self._started = True
            self._push(StartEvent(self.message))

    def response_id(self, value: object) -> None:
        """Keep the provider's response id (the first non-empty string given)."""
        if self.message.response_id is None and isinstance(value, str) and value:
            self.message.response_id = value

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

    def tool_call(
        self,
        id: str,
        name: str,
        arguments: dict[str, Any],
        *,
        thought_signature: str | None = None,
    ) -> int:
        """A call whose arguments arrived whole: start, one delta with the JSON, end."""
        import json

        index = self.open_tool_call(id, name, thought_signature=thought_signature)
        block = self.message.content[index]
        assert isinstance(block, ToolCall)
        block.arguments = arguments
        self._push(ToolCallDeltaEvent(index, json.dumps(arguments), self.message))
        self.close_tool_call(index, arguments)
        return index

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
        self._push(ErrorEvent(reason, msg, cause))


def _unfinished_calls_message(calls: list[ToolCall], reason: str) -> str:
    names = ", ".join(f"{call.name!r} (id {call.id!r})" for call in calls)
    plural = "s" if len(calls) > 1 else ""
    return (
        f"The response ended (stop reason {reason!r}) inside tool call{plural} {names}: "
        "the arguments never closed, so the call was not finished"
    )


async def apply_on_payload(
    options: Mapping[str, Any], payload: dict[str, Any], model: Model
) -> dict[str, Any]:
    """Run the ``on_payload`` hook (sync or async); a returned dict replaces the payload.

    An exception in the hook propagates, so it ends the stream as an ``error`` event.
    """
    hook = options.get("on_payload")
    if hook is None:
        return payload
    result = hook(payload, model)
    if inspect.isawaitable(result):
        result = await result
    if result is None:
        return payload
    if not isinstance(result, dict):
        raise ProviderError(f"on_payload must return a dict or None, not {type(result).__name__}")
    return result


def describe_error(exc: BaseException) -> str:
    """A one-line message for an exception: its text, else its type name."""
    text = str(exc).strip()
    return text if text else type(exc).__name__


Runner = Callable[[MessageBuilder], Awaitable[None]]


def launch_stream(
    model: Model, options: Mapping[str, Any], run: Runner
) -> AssistantMessageEventStream:
    """Start ``run`` as a task feeding a new stream, and return the stream at once.

    Whatever ``run`` raises becomes an ``error`` event; the ``signal`` option, task
    cancellation and a consumer leaving early all end it with ``aborted``.
    """
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        raise RuntimeError(
            "tau.ai streams need a running asyncio event loop; from synchronous code "
            "use tau.ai.complete_sync() or tau.ai.stream_sync()"
        ) from None
    stream = AssistantMessageEventStream()
    builder = MessageBuilder(model, stream)
    signal: AbortSignal | None = options.get("signal")

    async def drive() -> None:
        remove_callback: Callable[[], None] | None = None
        try:
            if signal is not None:
                if signal.aborted:
                    raise AbortedError(signal.reason or ABORTED_MESSAGE)
                remove_callback = signal.add_callback(lambda: _cancel_threadsafe(loop, task))
            await run(builder)
            builder.done()
        except asyncio.CancelledError:
            reason = signal.reason if signal is not None and signal.aborted else None
            builder.fail(reason or ABORTED_MESSAGE, aborted=True)
        except AbortedError as exc:
            builder.fail(describe_error(exc), aborted=True, cause=exc)
        except Exception as exc:
            aborted = signal is not None and signal.aborted
            builder.fail(describe_error(exc), aborted=aborted, cause=exc)
        finally:
            if remove_callback is not None:
                remove_callback()
            if not builder.finished:
                builder.fail(UNKNOWN_ERROR_MESSAGE)

    task = loop.create_task(drive())
    # The loop keeps only weak references to tasks: hold this one until it finishes.
    _running.add(task)
    task.add_done_callback(_running.discard)
    stream.set_on_close(lambda: _cancel(task))
    return stream


_running: set[asyncio.Task[None]] = set()


def _cancel_threadsafe(loop: asyncio.AbstractEventLoop, task: asyncio.Task[None]) -> None:
    if not loop.is_closed():
        loop.call_soon_threadsafe(_cancel, task)


def _cancel(task: asyncio.Task[None]) -> None:
    if not task.done():
        task.cancel()


def error_stream(model: Model, error_message: str) -> AssistantMessageEventStream:
    """A stream that fails at once with ``error_message`` (for failures before any request)."""

    async def run(builder: MessageBuilder) -> None:
        raise ProviderError(error_message)

    return launch_stream(model, {}, run)
