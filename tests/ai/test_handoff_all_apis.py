"""One conversation handed through all eight built-in APIs in sequence, twice round.

The conversation starts with a user question, an Anthropic turn (signed thinking, text, a
tool call), a tool result with text and an image, an aborted turn (thinking whose signature
never arrived, half a tool call) and a user follow-up. Each step sends it to the next API
through the real adapter over HTTP on 127.0.0.1, captures the request body, and appends
that API's scripted reply (thinking, text and a tool call, in its own wire shape) and a tool
result (text and image). The second lap gives each API its own earlier turn back.

Every request body is read back in that API's own wire format, independently of tau's
conversion code, and compared with what the history says must be sent: another model's
thinking never goes back as thinking, the same model's signatures do; the aborted turn and
its call are gone; every call has exactly one result, in order, under an id valid for the
target; tool-result images sit where the API wants them; no lone
surrogate reaches the wire. Each body is also checked against the official request types
(anthropic, openai, google-genai, botocore's Converse model; Mistral ships none here).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from itertools import pairwise
from typing import Any

import pytest

from tau.ai import Context, Model, UserMessage, stream
from tau.ai.core.types import (
    AssistantMessage,
    ImageContent,
    Message,
    TextContent,
    ThinkingContent,
    Tool,
    ToolCall,
    ToolResultMessage,
)
from tau.ai.lookup.catalog import get_model
from tau.ai.providers.bedrock import auth as bedrock
from tests.ai.openai_sdk_check import check_openai_body
from tests.ai.responses_sdk import validate_with_sdk
from tests.ai.servers import LocalServer, Reply, Request
from tests.ai.stream_checks import check_grammar
from tests.ai.test_anthropic import assert_sdk_valid
from tests.ai.test_bedrock import validate as validate_converse
from tests.ai.test_google import validate_body as validate_gemini
from tests.factories import bedrock_event, sse

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
LONE = "\ud83d"  # half of a surrogate pair: must never reach a provider
TOOL = Tool(
    "inspect",
    "Look at one region of the screen.",
    {"type": "object", "properties": {"region": {"type": "string"}}, "required": ["region"]},
)
CLAUDE_SIGNATURE = "EqQBCkYIBxgCKkDh5e0Lq1vkTtU7b7jZy2m3Wb0n0d8R2kq5Yf8u7rXo3nB9t1wQ=="


def catalog(provider: str, model_id: str) -> Model:
    model = get_model(provider, model_id)
    assert model is not None, (provider, model_id)
    assert model.supports_images and model.reasoning
    return model


CLAUDE = catalog("anthropic", "claude-sonnet-4-5")
GROK = catalog("xai", "grok-4.3")
GPT = catalog("openai", "gpt-5-mini")
AZURE = catalog("azure-openai-responses", "gpt-5-mini")
GEMINI3 = catalog("google", "gemini-3-pro-preview")
VERTEX25 = catalog("google-vertex", "gemini-2.5-flash")
MISTRAL = catalog("mistral", "mistral-medium-latest")
BEDROCK_CLAUDE = catalog("amazon-bedrock", "us.anthropic.claude-sonnet-4-5-20250929-v1:0")
ORDER = [CLAUDE, GROK, GPT, AZURE, GEMINI3, VERTEX25, MISTRAL, BEDROCK_CLAUDE]


# --------------------------------------------------------------------------- the conversation


def start_of_conversation() -> list[Message]:
    claude_turn = AssistantMessage(
        [
            ThinkingContent("The user wants the top bar read.", CLAUDE_SIGNATURE),
            TextContent("Let me look at the top bar."),
            ToolCall("toolu_01A09q90qw90lq917835lq9", TOOL.name, {"region": "top"}),
        ],
        api=CLAUDE.api,
        provider=CLAUDE.provider,
        model=CLAUDE.id,
        stop_reason="toolUse",
    )
    aborted = AssistantMessage(
        [
            ThinkingContent("Now the bottom half, then", ""),
            ToolCall("toolu_01HalfCallNeverFinished", TOOL.name, {"regi": "bot"}),
        ],
        api=CLAUDE.api,
        provider=CLAUDE.provider,
        model=CLAUDE.id,
        stop_reason="aborted",
    )
    return [
        UserMessage(
            [TextContent(f"What does the screen say?{LONE} 🌧"), ImageContent(PNG, "image/png")]
        ),
        claude_turn,
        tool_result(claude_turn.tool_calls[0], f"Top bar: 'Inbox (3)'{LONE}"),
        aborted,
        UserMessage("Keep going, please."),
    ]


def tool_result(call: ToolCall, text: str) -> ToolResultMessage:
    return ToolResultMessage(
        call.id, call.name, [TextContent(text), ImageContent(PNG, "image/png")]
    )


# --------------------------------------------------------------------------- scripted replies
# Each API's reply in its own wire shape (field names and id formats as in the recordings
# under shared/fixtures/recorded), carrying reasoning, text and one tool call.


@dataclass
class Script:
    headers: dict[str, str]
    body: list[bytes]
    thinking: str
    text: str
    call_id: str | None
    """The id the API gives its call (None: the API sends none and tau makes one up)."""
    arguments: dict[str, Any]
    signature: str | None = None
    """What tau must keep on the thinking block (or Gemini's call) to replay the turn."""


SSE = {"content-type": "text/event-stream"}


def _event(name: str, data: dict[str, Any]) -> bytes:
    return sse((name, json.dumps(data)))


def _data(data: dict[str, Any]) -> bytes:
    return sse((None, json.dumps(data)))


def anthropic_reply(n: int, model: Model) -> Script:
    thinking, text, args = (
        f"Step {n}: the next region.",
        f"Checking region {n}.",
        {"region": f"r{n}"},
    )
    call_id, signature = f"toolu_01{n:02d}Xq9PwLrT5mZk3VbN8cJd", f"EqQBCkYIBxgCKkB{n:02d}sig=="
    raw = json.dumps(args)
    body = [
        _event(
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": f"msg_01{n:02d}",
                    "type": "message",
                    "role": "assistant",
                    "model": model.id,
                    "content": [],
                    "stop_reason": None,
                    "usage": {"input_tokens": 900, "output_tokens": 1},
                },
            },
        ),
        _event(
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "thinking", "thinking": "", "signature": ""},
            },
        ),
        _event(
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "thinking_delta", "thinking": thinking},
            },
        ),
        _event(
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "signature_delta", "signature": signature},
            },
        ),
        _event("content_block_stop", {"type": "content_block_stop", "index": 0}),
        _event(
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 1,
                "content_block": {"type": "text", "text": ""},
            },
        ),
        _event(
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 1,
                "delta": {"type": "text_delta", "text": text},
            },
        ),
        _event("content_block_stop", {"type": "content_block_stop", "index": 1}),
        _event(
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 2,
                "content_block": {
                    "type": "tool_use",
                    "id": call_id,
                    "name": TOOL.name,
                    "input": {},
                },
            },
        ),
        _event(
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 2,
                "delta": {"type": "input_json_delta", "partial_json": raw[:7]},
            },
        ),
        _event(
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 2,
                "delta": {"type": "input_json_delta", "partial_json": raw[7:]},
            },
        ),
        _event("content_block_stop", {"type": "content_block_stop", "index": 2}),
        _event(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": "tool_use"},
                "usage": {"output_tokens": 40},
            },
        ),
        _event("message_stop", {"type": "message_stop"}),
    ]
    return Script(SSE, body, thinking, text, call_id, args, signature)


def completions_reply(n: int, model: Model) -> Script:
    thinking, text, args = (
        f"Step {n}: grok reasons.",
        f"Grok checks region {n}.",
        {"region": f"r{n}"},
    )
    call_id = f"call_{n:02d}77662918"

    def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> bytes:
        return _data(
            {
                "id": f"a1b2c3d4-{n}",
                "object": "chat.completion.chunk",
                "created": 1764680000,
                "model": model.id,
                "system_fingerprint": "fp_grok",
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
                **extra,
            }
        )

    raw = json.dumps(args)
    body = [
        chunk({"role": "assistant", "reasoning_content": thinking[:6]}),
        chunk({"reasoning_content": thinking[6:]}),
        chunk({"content": text}),
        chunk(
            {
                "tool_calls": [
                    {
                        "index": 0,
                        "id": call_id,
                        "type": "function",
                        "function": {"name": TOOL.name, "arguments": raw},
                    }
                ]
            }
        ),
        chunk(
            {},
            "tool_calls",
            usage={
                "prompt_tokens": 900,
                "completion_tokens": 40,
                "total_tokens": 940,
                "completion_tokens_details": {"reasoning_tokens": 12},
            },
        ),
        b"data: [DONE]\n\n",
    ]
    return Script(SSE, body, thinking, text, call_id, args, "reasoning_content")


def responses_reply(n: int, model: Model) -> Script:
    thinking, text, args = (
        f"**Step {n}**\n\nA closer look.",
        f"Looking at region {n}.",
        {"region": f"r{n}"},
    )
    tag = model.provider[:5]
    rs_id, msg_id = f"rs_0{n:02d}68b2f1c9{tag}a7d3e5", f"msg_0{n:02d}68b2f1ca{tag}b8e4f6"
    call_id, fc_id = (
        f"call_{n:02d}KX8mNq3PzR7vTy2WbL5d",
        f"fc_0{n:02d}68b2f1cb7e9d81a3c5f7e9b1d3f5a7c9e1b3d5{tag}",
    )
    raw = json.dumps(args)
    reasoning_done = {
        "id": rs_id,
        "type": "reasoning",
        "encrypted_content": f"gAAAAABo{n:02d}{tag}-encrypted",
        "summary": [{"type": "summary_text", "text": thinking}],
    }
    message_done = {
        "id": msg_id,
        "type": "message",
        "status": "completed",
        "role": "assistant",
        "content": [{"type": "output_text", "annotations": [], "logprobs": [], "text": text}],
    }
    call_done = {
        "id": fc_id,
        "type": "function_call",
        "status": "completed",
        "arguments": raw,
        "call_id": call_id,
        "name": TOOL.name,
    }
    usage = {
        "input_tokens": 900,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 40,
        "output_tokens_details": {"reasoning_tokens": 12},
        "total_tokens": 940,
    }

    def ev(kind: str, **data: Any) -> bytes:
        return _event(kind, {"type": kind, **data})

    body = [
        ev("response.created", response={"id": f"resp_{n}", "status": "in_progress", "output": []}),
        ev(
            "response.output_item.added",
            output_index=0,
            item={"id": rs_id, "type": "reasoning", "summary": []},
        ),
        ev(
            "response.reasoning_summary_part.added",
            item_id=rs_id,
            output_index=0,
            summary_index=0,
            part={"type": "summary_text", "text": ""},
        ),
        ev(
            "response.reasoning_summary_text.delta",
            item_id=rs_id,
            output_index=0,
            summary_index=0,
            delta=thinking,
        ),
        ev(
            "response.reasoning_summary_text.done",
            item_id=rs_id,
            output_index=0,
            summary_index=0,
            text=thinking,
        ),
        ev("response.output_item.done", output_index=0, item=reasoning_done),
        ev(
            "response.output_item.added",
            output_index=1,
            item={
                "id": msg_id,
                "type": "message",
                "status": "in_progress",
                "role": "assistant",
                "content": [],
            },
        ),
        ev(
            "response.content_part.added",
            item_id=msg_id,
            output_index=1,
            content_index=0,
            part={"type": "output_text", "annotations": [], "text": ""},
        ),
        ev(
            "response.output_text.delta",
            item_id=msg_id,
            output_index=1,
            content_index=0,
            delta=text,
        ),
        ev("response.output_text.done", item_id=msg_id, output_index=1, content_index=0, text=text),
        ev("response.output_item.done", output_index=1, item=message_done),
        ev(
            "response.output_item.added",
            output_index=2,
            item={**call_done, "status": "in_progress", "arguments": ""},
        ),
        ev("response.function_call_arguments.delta", item_id=fc_id, output_index=2, delta=raw[:5]),
        ev("response.function_call_arguments.delta", item_id=fc_id, output_index=2, delta=raw[5:]),
        ev("response.function_call_arguments.done", item_id=fc_id, output_index=2, arguments=raw),
        ev("response.output_item.done", output_index=2, item=call_done),
        ev(
            "response.completed",
            response={
                "id": f"resp_{n}",
                "status": "completed",
                "output": [reasoning_done, message_done, call_done],
                "usage": usage,
            },
        ),
    ]
    return Script(SSE, body, thinking, text, f"{call_id}|{fc_id}", args, json.dumps(reasoning_done))


def google_reply(n: int, model: Model) -> Script:
    thinking, text, args = (
        f"**Step {n}**\n\nGemini reasons.",
        f"Gemini checks region {n}.",
        {"region": f"r{n}"},
    )
    signature = f"CpwIAXLI2nxl{n:02d}U6gsWZaZHRYkX1orzuM8vSUFwaAtw="  # base64, as Gemini sends
    assert len(signature) % 4 == 0

    def chunk(parts: list[dict[str, Any]], finish: str | None = None) -> bytes:
        candidate: dict[str, Any] = {"content": {"parts": parts, "role": "model"}, "index": 0}
        if finish:
            candidate["finishReason"] = finish
        return _data(
            {
                "candidates": [candidate],
                "usageMetadata": {
                    "promptTokenCount": 900,
                    "candidatesTokenCount": 28,
                    "totalTokenCount": 940,
                    "thoughtsTokenCount": 12,
                },
                "modelVersion": model.id,
                "responseId": f"REVVabai{n}",
            }
        )

    body = [
        chunk([{"text": thinking, "thought": True}]),
        chunk([{"text": text}]),
        chunk([{"functionCall": {"name": TOOL.name, "args": args}, "thoughtSignature": signature}]),
        chunk([{"text": ""}], "STOP"),
    ]
    # Gemini sends no call id: tau makes one up (so call_id is None here).
    return Script(SSE, body, thinking, text, None, args, signature)


def mistral_reply(n: int, model: Model) -> Script:
    thinking, text, args = (
        f"Step {n}: Mistral reasons.",
        f"Mistral checks region {n}.",
        {"region": f"r{n}"},
    )
    call_id = f"Xk{n:02d}pQ7rZ"
    assert len(call_id) == 9

    def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> bytes:
        return _data(
            {
                "id": f"cmpl-{n}",
                "object": "chat.completion.chunk",
                "created": 1764680000,
                "model": model.id,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
                **extra,
            }
        )

    body = [
        chunk({"role": "assistant", "content": ""}),
        chunk(
            {"content": [{"type": "thinking", "thinking": [{"type": "text", "text": thinking}]}]}
        ),
        chunk({"content": text}),
        chunk(
            {
                "tool_calls": [
                    {
                        "id": call_id,
                        "function": {"name": TOOL.name, "arguments": json.dumps(args)},
                        "index": 0,
                    }
                ]
            },
            "tool_calls",
            usage={"prompt_tokens": 900, "total_tokens": 940, "completion_tokens": 40},
        ),
        b"data: [DONE]\n\n",
    ]
    return Script(SSE, body, thinking, text, call_id, args, "thinking")


def bedrock_reply(n: int, model: Model) -> Script:
    thinking, text, args = (
        f"Step {n}: Bedrock Claude reasons.",
        f"Bedrock checks region {n}.",
        {"region": f"r{n}"},
    )
    call_id, signature = f"tooluse_{n:02d}aB3dE5fG7hJ9kL1mN3pQ5r", f"EqQBCkYIBxgCKkBedrock{n:02d}=="
    raw = json.dumps(args)

    def delta(index: int, value: dict[str, Any]) -> bytes:
        return bedrock_event("contentBlockDelta", {"contentBlockIndex": index, "delta": value})

    body = [
        bedrock_event("messageStart", {"role": "assistant"}),
        delta(0, {"reasoningContent": {"text": thinking}}),
        delta(0, {"reasoningContent": {"signature": signature}}),
        bedrock_event("contentBlockStop", {"contentBlockIndex": 0}),
        delta(1, {"text": text}),
        bedrock_event("contentBlockStop", {"contentBlockIndex": 1}),
        bedrock_event(
            "contentBlockStart",
            {
                "contentBlockIndex": 2,
                "start": {"toolUse": {"toolUseId": call_id, "name": TOOL.name}},
            },
        ),
        delta(2, {"toolUse": {"input": raw[:4]}}),
        delta(2, {"toolUse": {"input": raw[4:]}}),
        bedrock_event("contentBlockStop", {"contentBlockIndex": 2}),
        bedrock_event("messageStop", {"stopReason": "tool_use"}),
        bedrock_event(
            "metadata",
            {
                "usage": {"inputTokens": 900, "outputTokens": 40, "totalTokens": 940},
                "metrics": {"latencyMs": 812},
            },
        ),
    ]
    return Script(
        {"content-type": "application/vnd.amazon.eventstream"},
        body,
        thinking,
        text,
        call_id,
        args,
        signature,
    )


# --------------------------------------------------------------------------- normalised view
# Both the expectation (from the history) and the reading of a request body (from the wire)
# end up as these entries, so they can be compared one by one.


@dataclass
class Entry:
    role: str
    """user, assistant or result."""
    texts: list[str] = field(default_factory=list)
    images: int = 0
    thinking: list[tuple[str, str | None]] = field(default_factory=list)
    """(text, what replays it on this API) per thinking block."""
    calls: list[tuple[str | None, str, dict[str, Any], str | None]] = field(default_factory=list)
    """(id, name, arguments, Gemini thought signature) per call."""
    call_id: str | None = None
    """For a result: the id (or, for Gemini, the name) of the call it answers."""


def clean(text: str) -> str:
    return re.sub("[\ud800-\udfff]", "", text)


def _texts_images(content: str | list[Any]) -> tuple[list[str], int]:
    if isinstance(content, str):
        return [clean(content)], 0
    texts = [clean(b.text) for b in content if isinstance(b, TextContent) and b.text]
    return texts, sum(isinstance(b, ImageContent) for b in content)


@dataclass(frozen=True)
class Api:
    """How one API must receive a history."""

    model: Model
    reply: Callable[[int, Model], Script]
    read: Callable[[dict[str, Any]], list[Entry]]
    validate: Callable[[dict[str, Any]], None]
    valid_id: Callable[[str], bool] | None
    """None: ids are not sent (Gemini matches results to calls by name)."""
    thinking_token: Callable[[ThinkingContent], str | None]
    """What the body carries to replay this API's own thinking block."""
    result_images: str
    """``inline`` (in the result), ``after_run`` (a user message after the run of results)."""
    gemini3_sentinel: bool = False


def expected(history: list[Message], api: Api) -> Iterator[Entry]:
    """What ``api`` must be sent for ``history``, by the handoff rules."""
    target = api.model
    skipped: set[str] = set()
    run_images = 0
    for message in history:
        if not isinstance(message, ToolResultMessage) and run_images:
            yield Entry("user", ["<marker>"], run_images)
            run_images = 0
        if isinstance(message, UserMessage):
            yield Entry("user", *_texts_images(message.content))
        elif isinstance(message, AssistantMessage):
            if message.stop_reason in ("aborted", "error"):
                skipped.update(c.id for c in message.tool_calls)
                continue
            same = (message.provider, message.api, message.model) == (
                target.provider,
                target.api,
                target.id,
            )
            entry = Entry("assistant")
            for block in message.content:
                if isinstance(block, ThinkingContent):
                    replayable = same and bool(block.thinking_signature)
                    if api.model.api.startswith("google"):
                        replayable = False  # Gemini's thought summaries are unsigned
                    if replayable:
                        entry.thinking.append((block.thinking, api.thinking_token(block)))
                elif isinstance(block, TextContent):
                    entry.texts.append(clean(block.text))
                else:
                    signature = None
                    if api.model.api.startswith("google"):
                        if same:
                            signature = block.thought_signature
                        elif api.gemini3_sentinel:
                            signature = "skip_thought_signature_validator"
                    entry.calls.append((block.id, block.name, block.arguments, signature))
            yield entry
        else:
            if message.tool_call_id in skipped:
                continue
            texts, images = _texts_images(message.content)
            if api.result_images == "after_run":
                run_images += images
                images = 0
            yield Entry("result", texts, images, call_id=message.tool_call_id)
    if run_images:
        yield Entry("user", ["<marker>"], run_images)


def compare(body: dict[str, Any], history: list[Message], api: Api, step: str) -> None:
    """The body read back equals the expectation; ids valid, consistent and one-to-one."""
    got = api.read(body)
    want = list(expected(history, api))
    assert [e.role for e in got] == [e.role for e in want], step
    sent_ids: dict[str, str] = {}  # history id -> id on the wire
    call_names: dict[str, str] = {}
    open_calls: list[str] = []  # ids still waiting for their result, in call order
    for g, w in zip(got, want, strict=True):
        where = f"{step}: {w.role} {w.texts}"
        if w.texts != ["<marker>"]:
            assert g.texts == w.texts, where
        assert g.images == w.images, where
        assert g.thinking == w.thinking, where
        if w.role == "assistant":
            assert not open_calls, f"{where}: calls left without a result: {open_calls}"
            assert len(g.calls) == len(w.calls), where
            for (gid, gname, gargs, gsig), (wid, wname, wargs, wsig) in zip(
                g.calls, w.calls, strict=True
            ):
                assert (gname, gargs, gsig) == (wname, wargs, wsig), where
                assert wid is not None
                if api.valid_id is None:
                    assert gid is None, where
                    call_names[wid] = wname
                    open_calls.append(wid)
                    continue
                assert gid is not None and api.valid_id(gid), f"{where}: id {gid!r}"
                assert gid not in sent_ids.values(), f"{where}: id {gid!r} reused"
                if api.valid_id(wid):
                    assert gid == wid, f"{where}: a valid id was changed"
                sent_ids[wid] = gid
                open_calls.append(wid)
        elif w.role == "result":
            assert w.call_id is not None and open_calls, where
            # Exactly one result per call, in the order of the calls.
            assert open_calls.pop(0) == w.call_id, where
            if api.valid_id is None:
                assert g.call_id == call_names[w.call_id], where
            else:
                # (A Responses output names the call_id, the part before "|".)
                assert g.call_id == sent_ids[w.call_id].partition("|")[0], where
    assert not open_calls, f"{step}: calls without a result: {open_calls}"


def walk_strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield k
            yield from walk_strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from walk_strings(v)


# --------------------------------------------------------------------------- reading bodies


def read_anthropic(body: dict[str, Any]) -> list[Entry]:
    out: list[Entry] = []
    for message in body["messages"]:
        content = message["content"]
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        if message["role"] == "assistant":
            entry = Entry("assistant")
            for block in content:
                if block["type"] == "thinking":
                    entry.thinking.append((block["thinking"], block["signature"]))
                elif block["type"] == "text":
                    entry.texts.append(block["text"])
                else:
                    assert block["type"] == "tool_use", block
                    entry.calls.append((block["id"], block["name"], block["input"], None))
            out.append(entry)
            continue
        user = Entry("user")
        for block in content:
            if block["type"] == "tool_result":
                # images go inside tool_result.content.
                parts = block["content"]
                parts = [{"type": "text", "text": parts}] if isinstance(parts, str) else parts
                out.append(
                    Entry(
                        "result",
                        [p["text"] for p in parts if p["type"] == "text"],
                        sum(p["type"] == "image" for p in parts),
                        call_id=block["tool_use_id"],
                    )
                )
                assert block["is_error"] is False
            elif block["type"] == "text":
                user.texts.append(block["text"])
            else:
                assert block["type"] == "image" and block["source"]["data"] == PNG
                user.images += 1
        if user.texts or user.images:
            out.append(user)
    return out


def read_completions(body: dict[str, Any]) -> list[Entry]:
    out: list[Entry] = []
    for message in body["messages"]:
        role, content = message["role"], message.get("content")
        if role in ("system", "developer"):
            continue
        if role == "assistant":
            entry = Entry("assistant")
            if message.get("reasoning_content"):
                entry.thinking.append((message["reasoning_content"], "reasoning_content"))
            if isinstance(content, str) and content:
                entry.texts.append(content)
            elif isinstance(content, list):
                entry.texts += [p["text"] for p in content if p["type"] == "text"]
            for call in message.get("tool_calls") or []:
                fn = call["function"]
                entry.calls.append((call["id"], fn["name"], json.loads(fn["arguments"]), None))
            out.append(entry)
        elif role == "tool":
            # a tool message carries text only ...
            assert isinstance(content, str)
            out.append(Entry("result", [content], call_id=message["tool_call_id"]))
        else:
            assert role == "user"
            if isinstance(content, str):
                out.append(Entry("user", [content]))
                continue
            user = Entry("user")
            for part in content:
                if part["type"] == "text":
                    user.texts.append(part["text"])
                else:
                    assert part["image_url"]["url"] == f"data:image/png;base64,{PNG}"
                    user.images += 1
            out.append(user)
    return out


def read_responses(body: dict[str, Any]) -> list[Entry]:
    out: list[Entry] = []
    assert body["store"] is False
    items = body["input"]
    for n, item in enumerate(items):
        kind = item.get("type", "message")
        if item.get("role") in ("system", "developer"):
            continue
        if item.get("role") == "user":
            user = Entry("user")
            for part in item["content"]:
                if part["type"] == "input_text":
                    user.texts.append(part["text"])
                else:
                    assert part["image_url"] == f"data:image/png;base64,{PNG}"
                    user.images += 1
            out.append(user)
            continue
        if kind == "function_call_output":
            output = item["output"]
            if isinstance(output, str):
                out.append(Entry("result", [output], call_id=item["call_id"]))
            else:
                # images go inside function_call_output.output as input_image parts.
                out.append(
                    Entry(
                        "result",
                        [p["text"] for p in output if p["type"] == "input_text"],
                        sum(p["type"] == "input_image" for p in output),
                        call_id=item["call_id"],
                    )
                )
            continue
        if not out or out[-1].role != "assistant":
            out.append(Entry("assistant"))
        entry = out[-1]
        if kind == "reasoning":
            # A reasoning item is only ever sent with the item that followed it.
            assert items[n + 1]["type"] in ("message", "function_call"), items[n + 1]
            summary = "\n\n".join(s["text"] for s in item["summary"])
            entry.thinking.append((summary, item["encrypted_content"]))
        elif kind == "message":
            assert item["role"] == "assistant"
            entry.texts += [p["text"] for p in item["content"]]
        else:
            assert kind == "function_call", item
            wire_id = item["call_id"] + (f"|{item['id']}" if "id" in item else "")
            entry.calls.append((wire_id, item["name"], json.loads(item["arguments"]), None))
    # Adjacent assistant items of one turn were grouped; a user entry splits turns.
    return out


def read_google(body: dict[str, Any]) -> list[Entry]:
    out: list[Entry] = []
    for content in body["contents"]:
        if content["role"] == "model":
            entry = Entry("assistant")
            for part in content["parts"]:
                if part.get("thought"):
                    entry.thinking.append((part["text"], part.get("thoughtSignature")))
                elif "text" in part:
                    entry.texts.append(part["text"])
                else:
                    call = part["functionCall"]
                    assert "id" not in call  # Gemini models take no call ids
                    entry.calls.append(
                        (None, call["name"], call["args"], part.get("thoughtSignature"))
                    )
            out.append(entry)
            continue
        user = Entry("user")
        for part in content["parts"]:
            if "functionResponse" in part:
                response = part["functionResponse"]
                images = response.get("parts", [])
                assert all(p["inlineData"]["data"] == PNG for p in images)
                out.append(
                    Entry(
                        "result",
                        [response["response"]["output"]],
                        len(images),
                        call_id=response["name"],
                    )
                )
            elif "text" in part:
                user.texts.append(part["text"])
            else:
                assert part["inlineData"] == {"mimeType": "image/png", "data": PNG}
                user.images += 1
        if user.texts or user.images:
            out.append(user)
    return out


def read_mistral(body: dict[str, Any]) -> list[Entry]:
    out: list[Entry] = []
    for message in body["messages"]:
        role, content = message["role"], message["content"]
        if role == "system":
            continue
        chunks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        if role == "assistant":
            entry = Entry("assistant")
            for chunk in chunks:
                if chunk["type"] == "thinking":
                    text = "".join(p["text"] for p in chunk["thinking"])
                    entry.thinking.append((text, "thinking"))
                elif chunk["text"]:
                    entry.texts.append(chunk["text"])
            for call in message.get("tool_calls") or []:
                fn = call["function"]
                entry.calls.append((call["id"], fn["name"], json.loads(fn["arguments"]), None))
            out.append(entry)
            continue
        # a tool message's images go inside its content.
        entry = Entry("result" if role == "tool" else "user", call_id=message.get("tool_call_id"))
        for chunk in chunks:
            if chunk["type"] == "text":
                entry.texts.append(chunk["text"])
            else:
                assert chunk["image_url"] == f"data:image/png;base64,{PNG}"
                entry.images += 1
        out.append(entry)
    return out


def read_bedrock(body: dict[str, Any]) -> list[Entry]:
    out: list[Entry] = []
    roles = [m["role"] for m in body["messages"]]
    # Converse rejects two messages of the same role in a row.
    assert all(a != b for a, b in pairwise(roles)), roles
    for message in body["messages"]:
        if message["role"] == "assistant":
            entry = Entry("assistant")
            for block in message["content"]:
                if "reasoningContent" in block:
                    reasoning = block["reasoningContent"]["reasoningText"]
                    entry.thinking.append((reasoning["text"], reasoning["signature"]))
                elif "text" in block:
                    entry.texts.append(block["text"])
                else:
                    use = block["toolUse"]
                    entry.calls.append((use["toolUseId"], use["name"], use["input"], None))
            out.append(entry)
            continue
        user = Entry("user")
        for block in message["content"]:
            if "toolResult" in block:
                if user.texts or user.images:
                    out.append(user)
                    user = Entry("user")
                # images go inside the toolResult content.
                result = block["toolResult"]
                assert result["status"] == "success"
                parts = result["content"]
                out.append(
                    Entry(
                        "result",
                        [p["text"] for p in parts if "text" in p],
                        sum("image" in p for p in parts),
                        call_id=result["toolUseId"],
                    )
                )
            elif "text" in block:
                user.texts.append(block["text"])
            elif "image" in block:
                assert block["image"] == {"format": "png", "source": {"bytes": PNG}}
                user.images += 1
            else:
                assert "cachePoint" in block
        if user.texts or user.images:
            out.append(user)
    return out


ANTHROPIC_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")


def responses_id(wire: str) -> bool:
    call_id, _, item_id = wire.partition("|")
    return (
        0 < len(call_id) <= 64
        and "|" not in item_id
        and (not item_id or (item_id.startswith("fc_") and len(item_id) <= 64))
    )


def _signature(block: ThinkingContent) -> str | None:
    return block.thinking_signature


APIS = {
    "anthropic-messages": Api(
        CLAUDE,
        anthropic_reply,
        read_anthropic,
        assert_sdk_valid,
        lambda i: ANTHROPIC_ID.fullmatch(i) is not None,
        _signature,
        "inline",
    ),
    "openai-completions": Api(
        GROK,
        completions_reply,
        read_completions,
        lambda b: check_openai_body(b, message_extensions={"reasoning_content"}),
        lambda i: 0 < len(i) <= 40,
        _signature,
        "after_run",
    ),
    "openai-responses": Api(
        GPT,
        responses_reply,
        read_responses,
        validate_with_sdk,
        responses_id,
        lambda b: json.loads(b.thinking_signature or "{}")["encrypted_content"],
        "inline",
    ),
    "azure-openai-responses": Api(
        AZURE,
        responses_reply,
        read_responses,
        validate_with_sdk,
        responses_id,
        lambda b: json.loads(b.thinking_signature or "{}")["encrypted_content"],
        "inline",
    ),
    "google-generative-ai": Api(
        GEMINI3,
        google_reply,
        read_google,
        validate_gemini,
        None,
        _signature,
        "inline",
        gemini3_sentinel=True,
    ),
    "google-vertex": Api(
        VERTEX25,
        google_reply,
        read_google,
        validate_gemini,
        None,
        _signature,
        "after_run",
    ),
    "mistral-conversations": Api(
        MISTRAL,
        mistral_reply,
        read_mistral,
        lambda b: None,
        lambda i: re.fullmatch(r"[A-Za-z0-9]{9}", i) is not None,
        _signature,
        "inline",
    ),
    "bedrock-converse-stream": Api(
        BEDROCK_CLAUDE,
        bedrock_reply,
        read_bedrock,
        lambda b: validate_converse(b, BEDROCK_CLAUDE.id),
        lambda i: ANTHROPIC_ID.fullmatch(i) is not None,
        _signature,
        "inline",
    ),
}


# --------------------------------------------------------------------------- running a step


@pytest.fixture
def fake_cloud_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    """Fake AWS keys (SigV4 signs offline), no cloud project settings, no real files."""
    for name in (
        "AWS_PROFILE",
        "AWS_BEARER_TOKEN_BEDROCK",
        "AWS_BEDROCK_SKIP_AUTH",
        "AWS_SESSION_TOKEN",
        "AWS_DEFAULT_REGION",
        "GOOGLE_CLOUD_PROJECT",
        "GCLOUD_PROJECT",
        "GOOGLE_CLOUD_LOCATION",
        "GOOGLE_CLOUD_API_KEY",
        "AZURE_OPENAI_DEPLOYMENT_NAME_MAP",
        "AZURE_OPENAI_BASE_URL",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLEHANDOFF")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY")
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setattr(bedrock, "_sessions", {})


async def send(
    api: Api, history: list[Message], script: Script
) -> tuple[AssistantMessage, Request, dict[str, Any]]:
    """Stream ``history`` to ``api`` over a local server; the reply and the request."""
    async with LocalServer([Reply(200, script.headers, script.body)]) as server:
        model = api.model
        options: dict[str, Any] = {"max_retries": 0}
        kind = model.api
        if kind == "azure-openai-responses":
            options.update(api_key="azure-key", azure_base_url=server.url + "/openai/v1")
        elif kind == "google-generative-ai":
            model = replace(model, base_url=server.url + "/v1beta")
            options["api_key"] = "gemini-key"
        elif kind == "google-vertex":
            model = replace(model, base_url=server.url)  # a non-googleapis host: used as is
            options["api_key"] = "vertex-key"
        elif kind == "bedrock-converse-stream":
            model = replace(model, base_url=server.url)  # signed with the fake AWS keys
        elif kind == "mistral-conversations":
            model = replace(model, base_url=server.url)
            options["api_key"] = "mistral-key"
        elif kind == "anthropic-messages":
            model = replace(model, base_url=server.url)
            options["api_key"] = "sk-ant-key"
        else:
            model = replace(model, base_url=server.url + "/v1")
            options["api_key"] = "sk-key"
        context = Context(list(history), system_prompt="You read screens.", tools=[TOOL])
        s = stream(model, context, **options)
        events = [e async for e in s]
        message = await s.result()
    assert message.stop_reason == "toolUse", message.error_message
    check_grammar(events, message)
    assert len(server.requests) == 1
    request = server.requests[0]
    return message, request, json.loads(request.body)


def check_request(api: Api, request: Request) -> None:
    """The endpoint and the authentication each API expects."""
    model, headers, path = api.model, request.headers, request.path
    match model.api:
        case "anthropic-messages":
            assert path == "/v1/messages" and headers["x-api-key"] == "sk-ant-key"
        case "openai-completions":
            assert path == "/v1/chat/completions" and headers["authorization"] == "Bearer sk-key"
        case "openai-responses":
            assert path == "/v1/responses" and headers["authorization"] == "Bearer sk-key"
        case "azure-openai-responses":
            assert path.startswith("/openai/v1/responses") and headers["api-key"] == "azure-key"
        case "google-generative-ai":
            assert path == f"/v1beta/models/{model.id}:streamGenerateContent?alt=sse"
            assert headers["x-goog-api-key"] == "gemini-key"
        case "google-vertex":
            assert path == f"/v1/publishers/google/models/{model.id}:streamGenerateContent?alt=sse"
            assert headers["x-goog-api-key"] == "vertex-key"
        case "mistral-conversations":
            assert (
                path == "/v1/chat/completions" and headers["authorization"] == "Bearer mistral-key"
            )
        case "bedrock-converse-stream":
            assert path == "/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse-stream"
            assert headers["authorization"].startswith(
                "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLEHANDOFF/"
            )
            assert "x-amz-date" in headers


def check_reply(message: AssistantMessage, api: Api, script: Script) -> None:
    """The scripted reply decoded as that API means it (so the next step gets a real turn)."""
    thinking = [b for b in message.content if isinstance(b, ThinkingContent)]
    assert [t.thinking for t in thinking] == [script.thinking]
    assert message.text == script.text
    (call,) = message.tool_calls
    assert call.name == TOOL.name and call.arguments == script.arguments
    if script.call_id is not None:
        assert call.id == script.call_id
    if api.model.api.startswith("google"):
        assert call.thought_signature == script.signature
    elif "responses" in api.model.api:
        assert json.loads(thinking[0].thinking_signature or "") == json.loads(
            script.signature or ""
        )
    else:
        assert thinking[0].thinking_signature == script.signature


async def test_one_conversation_through_all_eight_apis_twice(fake_cloud_env: None) -> None:
    history = start_of_conversation()
    assert [m.api for m in ORDER] == list(APIS)
    step = 0
    for lap in (1, 2):
        for name, api in APIS.items():
            step += 1
            label = f"lap {lap}, step {step}: {name}"
            script = api.reply(step, api.model)
            message, request, body = await send(api, history, script)
            check_request(api, request)
            api.validate(body)
            compare(body, history, api, label)
            strings = list(walk_strings(body))
            assert not any(re.search("[\ud800-\udfff]", s) for s in strings), label
            assert any("🌧" in s for s in strings), label  # a valid pair is kept
            dumped = request.body.decode()
            # The aborted turn left nothing behind, and nothing needed a synthetic result.
            assert "toolu_01HalfCallNeverFinished" not in dumped, label
            assert "Now the bottom half" not in dumped and '"regi"' not in dumped, label
            assert "No result provided" not in dumped, label
            if name != "anthropic-messages":
                assert CLAUDE_SIGNATURE not in dumped, label  # signatures stay with their model
            else:
                assert dumped.count(CLAUDE_SIGNATURE) == 1, label
            check_reply(message, api, script)
            history += [message, tool_result(message.tool_calls[0], f"region {step}: ok{LONE}")]
    # The last request carried all sixteen answered calls.
    assert sum(len(m.tool_calls) for m in history if isinstance(m, AssistantMessage)) == 18
