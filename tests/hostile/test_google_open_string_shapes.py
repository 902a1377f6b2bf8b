"""Odd chunks while a Gemini string argument streams by path (``partialArgs``).

The decoder takes the usual chunk (one candidate, one part, one value continuing the open
string) by a short path; every other shape must get the general rules, whatever a server
sends. Each case streams an opening, then a first piece that leaves ``$.content`` open, then
the odd chunk, and checks what the general rules say:

* a piece that is not a string is an error naming the path;
* a piece for another path closes the open string and starts that member;
* a part carrying a thought signature gives the call that signature;
* a chunk with a second candidate uses the first only;
* a piece in the chunk that carries the finish reason is applied, and MAX_TOKENS leaves the
  call unfinished (an error stream);
* an ``error`` chunk ends the stream with Google's message.
"""

from __future__ import annotations

from typing import Any

from tau.ai import AssistantMessage
from tau.ai.adapters import launch_stream
from tau.ai.core.types import ToolCall
from tau.ai.providers.google.decoder import GoogleDecoder
from tau.ai.streaming.builder import MessageBuilder
from tests.ai.test_google import gemini

OPENING = {"functionCall": {"name": "write", "id": "c1", "willContinue": True}}


def piece(text: Any, path: str = "$.content", more: bool = True, **part: Any) -> dict[str, Any]:
    value: dict[str, Any] = {"jsonPath": path, "stringValue": text}
    if more:
        value["willContinue"] = True
    return {"functionCall": {"partialArgs": [value], "willContinue": True}, **part}


def chunk(*parts: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": list(parts)}}
    if finish:
        candidate["finishReason"] = finish
    return {"candidates": [candidate], "responseId": "r1"}


END = chunk({"functionCall": {}}, finish="STOP")


async def decode(*chunks: dict[str, Any]) -> AssistantMessage:
    async def run(builder: MessageBuilder) -> None:
        decoder = GoogleDecoder(builder)
        for data in (chunk(OPENING), chunk(piece("ab")), *chunks):
            decoder.apply(data)
        decoder.finish()

    return await launch_stream(gemini(), {}, run).result()


def only_call(message: AssistantMessage) -> ToolCall:
    (call,) = [b for b in message.content if isinstance(b, ToolCall)]
    return call


async def test_a_piece_that_is_not_a_string_is_an_error_naming_the_path() -> None:
    message = await decode(chunk(piece(5)), END)
    assert message.stop_reason == "error"
    assert "stringValue at $.content is not a string" in (message.error_message or "")


async def test_a_piece_for_another_path_closes_the_open_string() -> None:
    message = await decode(chunk(piece("cd", more=False)), chunk(piece("x", "$.path", False)), END)
    assert message.stop_reason == "toolUse"
    assert only_call(message).arguments == {"content": "abcd", "path": "x"}
    message = await decode(chunk(piece("x", "$.path", more=False)), END)
    assert only_call(message).arguments == {"content": "ab", "path": "x"}


async def test_a_part_with_a_thought_signature_signs_the_call() -> None:
    message = await decode(chunk(piece("cd", more=False, thoughtSignature="sig")), END)
    call = only_call(message)
    assert call.arguments == {"content": "abcd"}
    assert call.thought_signature == "sig"


async def test_a_second_candidate_is_ignored() -> None:
    data = chunk(piece("cd", more=False))
    data["candidates"].append({"content": {"parts": [piece("zz", more=False)]}})
    message = await decode(data, END)
    assert only_call(message).arguments == {"content": "abcd"}


async def test_a_piece_with_the_finish_reason_is_applied_before_it() -> None:
    message = await decode(chunk(piece("cd", more=False), {"functionCall": {}}, finish="STOP"))
    assert message.stop_reason == "toolUse"
    assert only_call(message).arguments == {"content": "abcd"}
    message = await decode(chunk(piece("cd"), finish="MAX_TOKENS"))
    assert message.stop_reason == "error"
    assert "stop reason 'length'" in (message.error_message or "")
    assert "never closed" in (message.error_message or "")


async def test_an_error_chunk_ends_the_stream_with_its_message() -> None:
    data = chunk(piece("cd"))
    data["error"] = {"code": 500, "message": "backend went away"}
    message = await decode(data, END)
    assert message.stop_reason == "error"
    assert "backend went away" in (message.error_message or "")
