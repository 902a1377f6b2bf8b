"""Playing a scripted response into builder calls: the faux provider's decoder.

A real decoder translates wire events; here the "wire" is a :class:`FauxResponse`, cut into
deltas of ``chunk_size`` characters with ``delay`` seconds before each.
"""

from __future__ import annotations

import asyncio
import json

from tau.ai.capabilities.size import context_chars
from tau.ai.core.errors import ProviderError
from tau.ai.core.types import Context, TextContent, ThinkingContent, ToolCall, Usage
from tau.ai.providers.faux.script import FauxResponse
from tau.ai.streaming.builder import MessageBuilder

__all__ = ["FauxDecoder"]


def _chunks(value: str, size: int) -> list[str]:
    if size <= 0 or len(value) <= size:
        return [value]
    return [value[i : i + size] for i in range(0, len(value), size)]


def _count_tokens(chars: int) -> int:
    return (chars + 3) // 4


class FauxDecoder:
    """Streams one scripted response into ``builder``, usage growing as it goes."""

    __slots__ = ("_builder", "_output_chars", "_spent")

    def __init__(self, builder: MessageBuilder, context: Context) -> None:
        self._builder = builder
        # Usage grows as the response streams, as a real provider's does: a response aborted
        # half-way still reports the prompt and what it produced so far.
        self._spent = Usage(input=_count_tokens(context_chars(context)))
        self._output_chars = 0

    def _produced(self, chars: int) -> None:
        spent = self._spent
        self._output_chars += chars
        spent.output = _count_tokens(self._output_chars)
        spent.total_tokens = spent.input + spent.output

    async def play(self, response: FauxResponse) -> None:
        """Stream ``response``'s blocks, then settle its usage, error and stop reason."""
        out = self._builder
        out.start()
        self._produced(0)
        out.message.usage = self._spent

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
                    self._produced(len(piece))
            elif isinstance(block, ThinkingContent):
                signature = block.thinking_signature
                out.thinking(key, "", signature=signature, redacted=bool(block.redacted))
                for piece in _chunks(block.thinking, response.chunk_size):
                    await pause()
                    out.thinking(key, piece)
                    self._produced(len(piece))
            else:
                out.tool_call(
                    key, id=block.id, name=block.name, thought_signature=block.thought_signature
                )
                raw = json.dumps(block.arguments)
                for piece in _chunks(raw, response.chunk_size):
                    await pause()
                    out.tool_call(key, args_delta=piece)
                    self._produced(len(piece))
                out.close(key, block.arguments)
                continue
            out.close(key)

        if response.usage is not None:
            out.message.usage = response.usage
        if response.error is not None:
            raise ProviderError(response.error, status=response.error_status)
        has_calls = any(isinstance(b, ToolCall) for b in out.message.content)
        out.message.stop_reason = response.stop_reason or ("toolUse" if has_calls else "stop")
