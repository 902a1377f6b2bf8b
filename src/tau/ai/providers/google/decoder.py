"""Decoding Gemini's response chunks into :class:`~tau.ai.streaming.builder.MessageBuilder` calls.

Deliberate differences from pi-ai, in one place:

* ``usage.input`` excludes cached prompt tokens (``cachedContentTokenCount`` goes to
  ``cache_read`` only), as with every other tau adapter; pi-ai counts them twice for Google.
  Prompt tokens spent on server-side tools (``toolUsePromptTokenCount``) are input too, so
  ``input + output + cache_read`` equals ``totalTokenCount``.
* ``usage.reasoning`` is ``thoughtsTokenCount`` (already included in ``output``).
* Empty text parts that carry nothing new are skipped instead of opening empty blocks.
* A finish reason other than STOP/MAX_TOKENS ends the stream with an ``error`` event that
  names the reason (and Google's ``finishMessage``); an unknown reason does the same instead
  of crashing.
* Function-call arguments streamed by JSON path (``partialArgs``) are built into JSON text
  and streamed as ``toolcall_delta`` events; a part without a name never creates a call.
"""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Mapping
from typing import Any

from tau.ai.core.errors import ProviderError
from tau.ai.core.types import StopReason, TextContent, ThinkingContent, ToolCall, Usage
from tau.ai.streaming.builder import MessageBuilder
from tau.ai.streaming.json_path import JsonPathError, PathJsonWriter
from tau.ai.streaming.sse import parse_event_json

_STOP_REASONS: dict[str, StopReason] = {"STOP": "stop", "MAX_TOKENS": "length"}


def map_finish_reason(reason: str) -> StopReason:
    """STOP → stop, MAX_TOKENS → length; every other reason (safety, recitation…) → error."""
    return _STOP_REASONS.get(reason, "error")


def apply_usage(usage: Usage, meta: Mapping[str, Any]) -> None:
    """Fill ``usage`` from one ``usageMetadata`` (each one replaces the previous counts)."""
    get = meta.get  # every chunk repeats the usage: this runs once per event
    prompt = get("promptTokenCount") or 0
    cached = get("cachedContentTokenCount") or 0
    thoughts = get("thoughtsTokenCount")
    usage.input = (prompt - cached if prompt > cached else 0) + (
        get("toolUsePromptTokenCount") or 0
    )
    usage.output = (get("candidatesTokenCount") or 0) + (thoughts or 0)
    usage.cache_read = cached
    usage.cache_write = 0
    usage.reasoning = thoughts
    usage.total_tokens = get("totalTokenCount") or (usage.input + usage.output + cached)


_call_ids = itertools.count(1)


class GoogleDecoder:
    """Turns the parsed JSON chunks of one response into builder calls.

    Text parts grow the open block of their kind (thought or not); a change of kind closes
    it. Signatures are retained: a later part without one never erases an earlier one.

    A function call arrives whole (``{name, args}``, or ``{name}`` with no arguments) or, with
    ``streamFunctionCallArguments``, in parts: ``{name, willContinue: true}`` opens it, parts
    of ``partialArgs`` (a value at a JSON path each; a string may continue in the next one)
    follow, and an empty ``functionCall`` or a part in which nothing has ``willContinue``
    ends it. The values become the arguments' JSON text through a
    :class:`~tau.ai.streaming.json_path.PathJsonWriter`, streamed as ``toolcall_delta`` events like
    every other provider's. A call still open when the answer ends (finish reason STOP) ends
    with it, unless a string argument was waiting for its next piece; then, as after any other
    finish reason, it stays unfinished and the stream ends with an error naming it. A part
    without a name never creates a call.
    """

    __slots__ = ("_builder", "_call", "_finish", "_ids", "_index", "_writer")

    def __init__(self, builder: MessageBuilder) -> None:
        self._builder = builder
        self._ids: set[str] = set()
        self._finish: str | None = None
        # The call whose arguments are streaming (its id, the builder key, and its content
        # index), and the writer of their JSON text.
        self._call: str | None = None
        self._index = 0
        self._writer: PathJsonWriter | None = None

    def feed(self, data: str, event: str = "message") -> bool:
        """Decode one SSE ``data`` payload (a ``GenerateContentResponse``) and apply it."""
        if not data:
            return True
        chunk = parse_event_json(data, "Google")
        if not isinstance(chunk, dict):
            raise ProviderError(f"Google sent an unexpected stream event: {data[:200]!r}")
        self.apply(chunk)
        return True

    def apply(self, chunk: Mapping[str, Any]) -> None:
        """Apply one decoded ``GenerateContentResponse``."""
        error = chunk.get("error")
        if error is not None:
            message = error.get("message") if isinstance(error, Mapping) else None
            raise ProviderError(f"Google API error: {message or json.dumps(error)}")
        builder = self._builder
        if builder.message.response_id is None:  # Gemini repeats the id in every chunk
            builder.start()
            builder.response_id(chunk.get("responseId"))
        writer = self._writer
        if writer is None or writer.open_string is None or not self._next_piece(chunk, writer):
            candidates = chunk.get("candidates")
            if candidates:
                candidate = candidates[0]
                content = candidate.get("content")
                if content:
                    for part in content.get("parts") or ():
                        text = part.get("text")
                        if text and "thoughtSignature" not in part:
                            # The one part per token, here rather than in _part: more of the
                            # current block, or a new one.
                            if part.get("thought") is True:
                                builder.thinking(None, text)
                            else:
                                builder.text(None, text)
                        else:
                            self._part(part)
                reason = candidate.get("finishReason")
                if reason:
                    self._finish = reason
                    message = candidate.get("finishMessage")
                    if map_finish_reason(reason) == "error":
                        builder.message.error_message = f"Gemini stopped with {reason}" + (
                            f": {message}" if message else ""
                        )
            else:
                feedback = chunk.get("promptFeedback")
                if isinstance(feedback, Mapping) and feedback.get("blockReason"):
                    self._finish = "BLOCKED"
                    builder.message.error_message = "Gemini blocked the prompt: " + str(
                        feedback.get("blockReasonMessage") or feedback["blockReason"]
                    )
        meta = chunk.get("usageMetadata")
        if meta:
            apply_usage(builder.message.usage, meta)

    def _next_piece(self, chunk: Mapping[str, Any], writer: PathJsonWriter) -> bool:
        """Apply ``chunk`` if it is the usual one while a string argument is open (its one
        part continues that string and nothing else); False to leave it to the general path."""
        # One chunk per ~100 characters of a long argument: subscripts in a try cost nothing
        # when they hold, and any other shape raises or fails a test below.
        try:
            (candidate,) = chunk["candidates"]
            (part,) = candidate["content"]["parts"]
            call = part["functionCall"]
            (value,) = call["partialArgs"]
            piece = value["stringValue"]
        except (KeyError, TypeError, ValueError):
            return False
        if (
            piece.__class__ is not str
            or value.get("jsonPath") != writer.open_string
            or "name" in call
            or "finishReason" in candidate
            or part.get("thoughtSignature")
            or "text" in part
        ):
            return False
        more = value.get("willContinue") is True
        self._builder.tool_call_delta(self._index, writer.add_to_string(piece, more))
        if not (more or call.get("willContinue") is True):
            self._end_call()
        return True

    def _part(self, part: Mapping[str, Any]) -> None:
        builder = self._builder
        signature = part.get("thoughtSignature") or None
        text = part.get("text")
        if text is not None:
            thought = part.get("thought") is True
            current = builder.block(None)
            if thought:
                if isinstance(current, ThinkingContent):
                    if signature:
                        current.thinking_signature = signature
                elif not text:
                    return  # nothing to show, and no block of this kind to carry a signature
                builder.thinking(None, text, signature=signature)
            else:
                if isinstance(current, TextContent):
                    if signature:
                        current.text_signature = signature
                elif not text:
                    return
                builder.text(None, text, signature=signature)
            return
        call = part.get("functionCall")
        # dict, not Mapping: parsed JSON is made of dicts, and an ABC check costs per part.
        if isinstance(call, dict):
            self._function_call(call, signature)
        # Server-side tool parts (executableCode, codeExecutionResult, toolCall…) carry nothing
        # tau models; the text the model writes about them arrives as text parts.

    def _function_call(self, call: Mapping[str, Any], signature: str | None) -> None:
        builder = self._builder
        name = call.get("name")
        if name and isinstance(name, str):
            builder.close(None)
            if self._call is not None:
                self._end_call_before(name)
            id = call.get("id")
            if not id or not isinstance(id, str) or id in self._ids:
                id = f"{name}_{int(time.time() * 1000)}_{next(_call_ids)}"
            self._ids.add(id)
            args = call.get("args")
            if isinstance(args, dict):
                builder.tool_call(id, id=id, name=name, arguments=args, thought_signature=signature)
                return
            index = builder.tool_call(id, id=id, name=name, thought_signature=signature)
            assert index is not None
            self._call = id
            self._index = index
            self._writer = PathJsonWriter()
        elif self._call is None:
            if call.get("partialArgs") or call.get("args"):
                raise ProviderError(
                    "Gemini sent function-call arguments without a call to belong to (a "
                    f"functionCall part with no name): {json.dumps(call)[:200]}"
                )
            return  # an end marker with nothing open
        elif signature:
            block = builder.block(self._call)
            if isinstance(block, ToolCall):
                block.thought_signature = signature
        more = call.get("willContinue") is True
        values = call.get("partialArgs")
        if values:
            more = self._arguments(values) or more
        if not more:
            self._end_call()

    def _arguments(self, values: Any) -> bool:
        """Append streamed argument values; True if one says more follows for its path."""
        writer = self._writer
        assert writer is not None
        if not isinstance(values, list):
            raise self._bad_arguments(f"partialArgs is not a list: {values!r}"[:200])
        more = False
        pieces: list[str] = []
        for value in values:
            piece, continues = self._value(writer, value)
            pieces.append(piece)
            more = more or continues
        text = "".join(pieces)
        if text:
            self._builder.tool_call_delta(self._index, text)
        return more

    def _value(self, writer: PathJsonWriter, value: Any) -> tuple[str, bool]:
        """The JSON text of one ``partialArgs`` entry, and whether its string continues."""
        if not isinstance(value, dict):
            raise self._bad_arguments(f"a partialArgs entry is not an object: {value!r}"[:200])
        path = value.get("jsonPath")
        if not isinstance(path, str):
            raise self._bad_arguments(f"a partialArgs entry has no jsonPath: {value!r}"[:200])
        continues = value.get("willContinue") is True
        if "stringValue" in value:
            scalar = value["stringValue"]
            if not isinstance(scalar, str):
                raise self._bad_arguments(f"stringValue at {path} is not a string")
        elif "numberValue" in value:
            scalar = value["numberValue"]
            if not isinstance(scalar, int | float) or isinstance(scalar, bool):
                raise self._bad_arguments(f"numberValue at {path} is not a number")
        elif "boolValue" in value:
            scalar = value["boolValue"]
            if not isinstance(scalar, bool):
                raise self._bad_arguments(f"boolValue at {path} is not a boolean")
        elif "nullValue" in value:
            scalar = None
        else:
            return "", continues  # no value to place
        try:
            return writer.add(path, scalar, more=continues), continues
        except JsonPathError as exc:
            raise self._bad_arguments(str(exc)) from None

    def _bad_arguments(self, problem: str) -> ProviderError:
        block = self._builder.block(self._call)
        assert isinstance(block, ToolCall)
        return ProviderError(
            f"Gemini streamed the arguments of tool call {block.name!r} (id {block.id!r}) in a "
            f"way they cannot be built: {problem}"
        )

    def _end_call(self) -> None:
        key = self._call
        writer = self._writer
        assert key is not None and writer is not None
        self._call = None
        self._writer = None
        self._builder.tool_call(key, args_delta=writer.close())
        self._builder.close(key)

    def _end_call_before(self, name: str) -> None:
        """A new call begins while one streams: that ends it, unless a string was cut."""
        writer = self._writer
        assert writer is not None
        if writer.open_string is not None:
            raise self._bad_arguments(
                f"call {name!r} began while its argument {writer.open_string} was still streaming"
            )
        self._end_call()

    def finish(self) -> None:
        """The body ended: close the open blocks and settle the stop reason."""
        builder = self._builder
        builder.close(None)
        message = builder.message
        if self._finish is None:
            raise ProviderError("Google stream ended before a finish reason (truncated response)")
        reason = map_finish_reason(self._finish)
        writer = self._writer
        if reason == "stop" and writer is not None and writer.open_string is None:
            self._end_call()  # the answer's end ends the call that was still streaming
        if (
            reason != "error"
            and self._call is None
            and any(isinstance(b, ToolCall) for b in message.content)
        ):
            reason = "toolUse"
        message.stop_reason = reason
        if reason == "error" and not message.error_message:
            message.error_message = f"Gemini stopped with {self._finish}"
