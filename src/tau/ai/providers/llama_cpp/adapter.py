"""The ``llama-cpp`` entry points: a worker thread generates the turn, the decoder applies it."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from typing import Any, cast

from tau.ai.core.options import SimpleStreamOptions
from tau.ai.core.types import Context, Model, Usage
from tau.ai.providers.llama_cpp.decoder import FAIL, LlamaCppDecoder
from tau.ai.providers.llama_cpp.generate import Counts, Stopped, Turn, load
from tau.ai.providers.llama_cpp.options import LlamaCppOptions
from tau.ai.providers.llama_cpp.request import build_request
from tau.ai.providers.simple_options import base_options
from tau.ai.streaming.builder import MessageBuilder
from tau.ai.streaming.event_stream import AssistantMessageEventStream
from tau.ai.streaming.launch import launch_stream

__all__ = ["OPTIONS", "SIMPLE_OPTIONS", "stream", "stream_simple"]

OPTIONS = LlamaCppOptions
SIMPLE_OPTIONS = SimpleStreamOptions


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
