"""The ``llama-cpp`` entry points, and the decoder of what the worker thread hands over."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from typing import Any, cast

from tau.ai.core.errors import ProviderError
from tau.ai.core.options import SimpleStreamOptions
from tau.ai.core.types import Context, Model, Usage
from tau.ai.providers.llama_cpp.generate import (
    CALL_DELTA,
    CALL_END,
    CALL_START,
    FAIL,
    FINISH,
    TEXT,
    TEXT_START,
    Counts,
    Stopped,
    Turn,
    load,
)
from tau.ai.providers.llama_cpp.options import LlamaCppOptions
from tau.ai.providers.llama_cpp.request import build_request
from tau.ai.providers.simple_options import base_options
from tau.ai.streaming.builder import MessageBuilder
from tau.ai.streaming.event_stream import AssistantMessageEventStream
from tau.ai.streaming.launch import launch_stream

__all__ = ["OPTIONS", "SIMPLE_OPTIONS", "LlamaCppDecoder", "stream", "stream_simple"]

OPTIONS = LlamaCppOptions
SIMPLE_OPTIONS = SimpleStreamOptions


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


def stream(model: Model, context: Context, options: LlamaCppOptions) -> AssistantMessageEventStream:
    """Stream one response of a local GGUF model."""

    async def run(builder: MessageBuilder) -> None:
        request = build_request(model, context, options)
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[tuple[int, Any]] = asyncio.Queue()
        stop = threading.Event()
        counts = Counts()

        def post(kind: int, value: Any) -> None:
            if stop.is_set():
                raise Stopped
            try:
                loop.call_soon_threadsafe(queue.put_nowait, (kind, value))
            except RuntimeError:  # the loop closed under us
                stop.set()
                raise Stopped from None

        def work() -> None:
            try:
                loaded = load(request.path, request.n_ctx)
            except Exception as exc:
                with contextlib.suppress(Stopped):
                    post(FAIL, str(exc))
                return
            Turn(loaded, request, stop, post, counts).run()

        builder.start()
        threading.Thread(target=work, name="tau-llama-cpp", daemon=True).start()
        decoder = LlamaCppDecoder(builder)
        try:
            while decoder.feed(await queue.get()):
                pass
            decoder.finish()
        finally:
            stop.set()
            # However the turn ended: tokens already read and sampled were spent.
            usage = Usage(input=counts.input, output=counts.output)
            usage.total_tokens = counts.input + counts.output
            builder.message.usage = usage

    return launch_stream(model, options, run)


def stream_simple(
    model: Model, context: Context, options: SimpleStreamOptions
) -> AssistantMessageEventStream:
    """Like :func:`stream`; local models have no reasoning setting, so ``reasoning`` is ignored."""
    return stream(model, context, cast(LlamaCppOptions, base_options(model, options)))
