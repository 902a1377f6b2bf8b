"""Decoding a chat-completions SSE stream into :class:`~tau.ai.streaming.builder.MessageBuilder` calls.

OpenAI-compatible servers differ in small ways that matter here: reasoning arrives in one of
several delta fields (or in OpenRouter's ``reasoning_details``, or as Mistral's typed content
parts); usage sits in ``chunk.usage``, ``choice.usage`` or Groq's ``x_groq.usage``; parallel
tool calls are told apart by ``index`` (some servers reuse an index with a new ``id``); llama.cpp
repeats the tool name in every delta. :class:`OpenAICompletionsDecoder` absorbs all of that, and turns
every way a stream can go wrong into one :class:`~tau.ai.streaming.builder.ProviderError`.
"""

from __future__ import annotations

import json
import secrets
from typing import Any

from tau.ai.core.errors import ProviderError
from tau.ai.core.types import StopReason, ToolCall, Usage
from tau.ai.streaming.builder import MessageBuilder
from tau.ai.streaming.sse import parse_event_json

# OpenAI's own reasons, and the others that compatible servers document, by what they mean.
# A reason not listed ends the stream with an error that names it: z.ai's
# ``model_context_window_exceeded`` must stay one, since that text is how an overflow is told.
_STOP_REASONS: dict[str, StopReason] = {
    # The model finished its answer.
    "stop": "stop",
    "end": "stop",  # Ollama, LM Studio
    "eos": "stop",  # Together: the end-of-sequence token
    "eos_token": "stop",  # Hugging Face text-generation-inference
    "stop_sequence": "stop",  # text-generation-inference
    "end_turn": "stop",  # servers passing Anthropic's reasons through
    "complete": "stop",  # Cohere's compatibility API
    # The output was cut at a token limit.
    "length": "length",
    "max_tokens": "length",  # Anthropic's reason, passed through
    "model_length": "length",  # Mistral: the context window is full
    # The model called tools.
    "tool_calls": "toolUse",
    "function_call": "toolUse",  # the deprecated single-function form
    "tool_use": "toolUse",  # Anthropic's reason, passed through
    "tool_call": "toolUse",  # Cohere's compatibility API
}
# Reasons that say the response failed, with what to tell the user.
_ERROR_REASONS: dict[str, str] = {
    "content_filter": "The provider's content filter stopped the response",
    "sensitive": "The provider's content filter stopped the response",  # z.ai
    "insufficient_system_resource": "The provider ran out of capacity mid-response",  # DeepSeek
    "network_error": "The provider had a network error mid-response",  # z.ai
    "error": "The provider reported an error mid-response",  # OpenRouter, Mistral
    "abort": "The server aborted the response",  # vLLM
}
_ERROR_EXCERPT = 200
# Delta fields a chat-completions server streams reasoning in; a thinking block's signature
# names the one it came from, and replaying the turn sets that same field.
REASONING_FIELDS = ("reasoning_content", "reasoning", "reasoning_text")


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def parse_usage(raw: dict[str, Any]) -> Usage:
    """Tau usage from a chat-completions ``usage`` object.

    ``completion_tokens`` already includes reasoning tokens (OpenAI's documented rule, and
    what every recorded provider does: prompt + completion = total), so ``output`` is
    ``completion_tokens`` and ``reasoning`` its reasoning share, never added on top. The
    reference adds them, which double-counts; a server whose reasoning count exceeds its
    completion count (OpenRouter cut off by max tokens) still has total = prompt + completion.
    """
    prompt = _int(raw.get("prompt_tokens"))
    completion = _int(raw.get("completion_tokens"))
    prompt_details = raw.get("prompt_tokens_details")
    if not isinstance(prompt_details, dict):
        prompt_details = {}
    cached = (
        _int(prompt_details.get("cached_tokens"))
        or _int(raw.get("cached_tokens"))  # Together via Hugging Face
        or _int(raw.get("prompt_cache_hit_tokens"))  # DeepSeek
    )
    cache_write = _int(prompt_details.get("cache_write_tokens"))  # OpenRouter
    # Cache reads and writes are part of the prompt; some servers report more (an xAI model on
    # Azure: prompt 7, cached 161, total 15). Capped, the parts add up to the prompt again.
    cached = min(cached, prompt)
    cache_write = min(cache_write, prompt - cached)
    completion_details = raw.get("completion_tokens_details")
    reasoning: int | None = None
    if isinstance(completion_details, dict) and "reasoning_tokens" in completion_details:
        reasoning = _int(completion_details.get("reasoning_tokens"))
    usage = Usage(
        input=max(0, prompt - cached - cache_write),
        output=completion,
        cache_read=cached,
        cache_write=cache_write,
        reasoning=reasoning,
    )
    usage.total_tokens = usage.input + usage.output + usage.cache_read + usage.cache_write
    return usage


def describe_error_object(error: Any) -> str:
    """A one-line message for an ``error`` object of a chat-completions body or chunk.

    OpenRouter puts the upstream provider's own words in ``metadata.raw``; they are appended
    on a second line.
    """
    if not isinstance(error, dict):
        return str(error)
    message = error.get("message")
    text = str(message) if message else json.dumps(error)[:_ERROR_EXCERPT]
    code = error.get("code")
    if code is not None and str(code) not in text:
        text = f"{text} (code: {code})"
    metadata = error.get("metadata")
    if isinstance(metadata, dict) and metadata.get("raw"):
        raw = metadata["raw"]
        text = f"{text}\n{raw if isinstance(raw, str) else json.dumps(raw)}"
    return text


class _Call:
    """One streamed call: its key in the builder and its block (whose id may come late)."""

    __slots__ = ("block", "key")

    def __init__(self, key: int, block: ToolCall) -> None:
        self.key = key
        self.block = block


class OpenAICompletionsDecoder:
    """Feeds chat-completions chunks (the ``data`` of each SSE event) to a builder.

    Text and reasoning are one block after another (key None). Tool calls are keyed by their
    position among the calls; a chunk names a call by ``id`` or by ``index``, and this decoder
    works out which call that is.
    """

    __slots__ = (
        "_by_id",
        "_by_index",
        "_calls",
        "_pending_signatures",
        "builder",
        "chunks",
        "finish_reason",
        "saw_done",
    )

    def __init__(self, builder: MessageBuilder) -> None:
        self.builder = builder
        self._calls: list[_Call] = []
        # By the chunk's ``index`` (an int when the server is well-behaved).
        self._by_index: dict[object, _Call] = {}
        self._by_id: dict[str, _Call] = {}
        self._pending_signatures: dict[str, str] = {}
        self.finish_reason: str | None = None
        self.chunks = 0
        self.saw_done = False

    # ----------------------------------------------------------------------- input

    def feed(self, data: str, event: str = "message") -> bool:
        """Feed one SSE ``data`` payload; returns False once ``[DONE]`` has arrived."""
        if data[:1] != "{":
            if data == "[DONE]":
                self.saw_done = True
                return False
            stripped = data.lstrip()
            if not stripped or stripped[0] not in "{[":
                return True  # keep-alive noise some proxies send as data
        chunk = parse_event_json(data, "The server")
        if not isinstance(chunk, dict):
            return True
        if event == "error" and "error" not in chunk:
            chunk = {"error": chunk}
        self._chunk(chunk)
        return True

    def _chunk(self, chunk: dict[str, Any]) -> None:
        self.chunks += 1
        if self.chunks == 1:
            self.builder.response_id(chunk.get("id"))
        choices = chunk.get("choices")
        choice = choices[0] if type(choices) is list and choices else None
        if type(choice) is not dict:
            choice = None
        usage = chunk.get("usage")
        if usage is None:
            if choice is not None and "usage" in choice:
                usage = choice["usage"]  # Moonshot
            elif "x_groq" in chunk:
                groq = chunk["x_groq"]
                usage = groq.get("usage") if type(groq) is dict else None
        if type(usage) is dict:
            self.builder.message.usage = parse_usage(usage)
        if chunk.get("error"):
            # A mid-stream failure (OpenRouter chunk error, Groq ``event: error``).
            raise ProviderError(describe_error_object(chunk["error"]))
        if choice is None:
            return
        delta = choice.get("delta")
        if type(delta) is dict:
            content = delta.get("content")
            if len(delta) != 1:
                self._delta(delta)
            elif type(content) is str:
                # The one delta per token: plain text and nothing else.
                if content:
                    self.builder.text(None, content)
            elif "tool_calls" in delta:
                self._tool_calls(delta["tool_calls"])
            else:
                self._delta(delta)
        reason = choice.get("finish_reason")
        if reason:
            self.finish_reason = str(reason)

    def _delta(self, delta: dict[str, Any]) -> None:
        builder = self.builder
        for field in REASONING_FIELDS:
            # Only the first non-empty one: some servers fill two with the same text.
            value = delta.get(field)
            if isinstance(value, str) and value:
                builder.thinking(None, value, signature=field)
                break
        else:
            details = delta.get("reasoning_details")
            if isinstance(details, list) and details:
                self._reasoning_details_text(details)
        content = delta.get("content")
        if isinstance(content, str):
            if content:
                builder.text(None, content)
        elif isinstance(content, list):
            self._content_parts(content)
        refusal = delta.get("refusal")
        if isinstance(refusal, str) and refusal:
            # The model's refusal is what it says instead of an answer: text, as in Responses.
            builder.text(None, refusal)
        tool_calls = delta.get("tool_calls")
        if tool_calls:
            self._tool_calls(tool_calls)
        details = delta.get("reasoning_details")
        if isinstance(details, list):
            self._encrypted_details(details)

    # ----------------------------------------------------------------------- blocks

    def _content_parts(self, parts: list[Any]) -> None:
        # Mistral streams typed parts: text, and thinking made of text parts.
        builder = self.builder
        for part in parts:
            if not isinstance(part, dict):
                continue
            kind = part.get("type")
            if kind == "text" and isinstance(part.get("text"), str) and part["text"]:
                builder.text(None, part["text"])
            elif kind == "thinking" and isinstance(part.get("thinking"), list):
                for sub in part["thinking"]:
                    if isinstance(sub, dict) and isinstance(sub.get("text"), str) and sub["text"]:
                        builder.thinking(None, sub["text"])

    def _reasoning_details_text(self, details: list[Any]) -> None:
        # Servers that send reasoning only as OpenRouter-style details (Snowflake Cortex).
        for detail in details:
            if not isinstance(detail, dict):
                continue
            kind = detail.get("type")
            text = detail.get("text") if kind == "reasoning.text" else None
            if kind == "reasoning.summary":
                text = detail.get("summary")
            if isinstance(text, str) and text:
                self.builder.thinking(None, text)

    def _encrypted_details(self, details: list[Any]) -> None:
        for detail in details:
            if not isinstance(detail, dict) or detail.get("type") != "reasoning.encrypted":
                continue
            call_id = detail.get("id")
            if not isinstance(call_id, str) or not call_id or not detail.get("data"):
                continue
            signature = json.dumps(detail)
            call = self._by_id.get(call_id)
            if call is None:
                self._pending_signatures[call_id] = signature
            else:
                call.block.thought_signature = signature

    def _find_call(self, index: Any, call_id: str) -> _Call | None:
        if call_id:
            call = self._by_id.get(call_id)
            if call is not None:
                return call
        if isinstance(index, int):
            call = self._by_index.get(index)
            # The same index with a new id is a new call (servers that number every call 0).
            if call is not None and (not call_id or not call.block.id):
                return call
            return None
        if call_id:
            return None
        return self._calls[-1] if self._calls else None

    def _tool_calls(self, items: Any) -> None:
        if type(items) is list:
            for item in items:
                if type(item) is dict:
                    self._tool_call_delta(item)

    def _tool_call_delta(self, item: dict[str, Any]) -> None:
        builder = self.builder
        if "id" not in item:
            # Fast path, one per argument fragment: a continuation addressed by index only.
            call = self._by_index.get(item.get("index"))
            function = item.get("function")
            if call is not None and type(function) is dict and "name" not in function:
                arguments = function.get("arguments")
                if type(arguments) is str:
                    builder.tool_call(call.key, args_delta=arguments)
                    return
        call_id = item.get("id")
        call_id = call_id if isinstance(call_id, str) else ""
        function = item.get("function")
        if not isinstance(function, dict):
            function = {}
        name = function.get("name")
        name = name if isinstance(name, str) else ""
        index = item.get("index")
        call = self._find_call(index, call_id)
        if call is None:
            key = len(self._calls)
            builder.tool_call(key, id=call_id, name=name)
            block = builder.block(key)
            assert isinstance(block, ToolCall)
            call = _Call(key, block)
            self._calls.append(call)
            if isinstance(index, int):
                self._by_index[index] = call
        else:
            block = call.block
            # llama.cpp repeats the whole name in every delta: never concatenate.
            if name and name != block.name and name.startswith(block.name):
                block.name = name
            if call_id and not block.id:
                block.id = call_id
        if call_id and call_id not in self._by_id:
            self._by_id[call_id] = call
            pending = self._pending_signatures.pop(call_id, None)
            if pending is not None:
                call.block.thought_signature = pending
        arguments = function.get("arguments")
        if isinstance(arguments, str):
            builder.tool_call(call.key, args_delta=arguments)
        elif isinstance(arguments, dict):
            # Some servers send the arguments as an object rather than JSON text.
            builder.tool_call(call.key, args_delta=json.dumps(arguments))

    # ----------------------------------------------------------------------- end

    def finish(self) -> None:
        """Decide the stop reason once the stream has ended; raises on a bad ending."""
        message = self.builder.message
        for call in self._calls:
            if not call.block.id:
                call.block.id = f"call_{secrets.token_hex(12)}"
        reason = self.finish_reason
        if reason is None:
            if self.chunks == 0:
                raise ProviderError(
                    "The server returned an empty response: no stream events "
                    "(HTTP 200 with an empty body)"
                )
            if not self.saw_done:
                raise ProviderError(
                    "The stream ended before the response was complete "
                    "(no finish_reason and no [DONE])"
                )
            if not message.content:
                raise ProviderError("The server ended the stream without any content")
            stop: StopReason = "stop"
        else:
            mapped = _STOP_REASONS.get(reason) or _STOP_REASONS.get(reason.lower())
            if mapped is None:
                problem = _ERROR_REASONS.get(reason)
                if problem is not None:
                    raise ProviderError(f"{problem} (finish_reason: {reason})")
                raise ProviderError(f"Unhandled stop reason: {reason}")
            stop = mapped
        if stop == "stop" and self._calls:
            # Several servers (Ollama, some proxies) say "stop" after calling tools.
            stop = "toolUse"
        message.stop_reason = stop
        # This wire format has no end marker per call: the end of the choice ends them all.
        self.builder.close(None)
        self.builder.close_calls()
