"""What a valid and a failing response looks like for each SSE-speaking adapter.

The fault suite (``test_faults.py``) breaks these responses in every way a network or a
provider does and checks that each adapter still ends with exactly one clear terminal event.
Each case builds a complete text response whose text is known, in the provider's own wire
shape, and a provider-shaped error body.
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import pytest

from tau.ai import Model
from tau.ai.lookup.registry import _BUILTIN
from tests.factories import sse


@dataclass(frozen=True)
class AdapterCase:
    """How to talk to one adapter through a local server."""

    api: str
    model: Callable[[str], Model]
    """Builds the model for a server base URL."""
    events: Callable[[list[str]], list[bytes]]
    """A complete response streaming these text pieces, one SSE event per item."""
    error_body: Callable[[int, str], bytes]
    """A provider-shaped JSON error body for (status, message)."""
    content_type: str = "text/event-stream"
    malformed: bytes = b"data: {this is not json\n\n"
    """One event whose payload is not JSON, in the wire framing."""

    def __str__(self) -> str:
        return self.api


def _model(api: str, id: str, base: str, provider: str = "fault") -> Model:
    return Model(id=id, name=id, api=api, provider=provider, base_url=base, max_tokens=1024)


def _anthropic_events(pieces: list[str]) -> list[bytes]:
    usage = {"input_tokens": 5, "output_tokens": 1}
    out = [
        sse(
            (
                "message_start",
                json.dumps(
                    {
                        "type": "message_start",
                        "message": {
                            "id": "msg_1",
                            "type": "message",
                            "role": "assistant",
                            "model": "claude-x",
                            "content": [],
                            "stop_reason": None,
                            "usage": usage,
                        },
                    }
                ),
            )
        ),
        sse(
            (
                "content_block_start",
                json.dumps(
                    {
                        "type": "content_block_start",
                        "index": 0,
                        "content_block": {"type": "text", "text": ""},
                    }
                ),
            )
        ),
    ]
    out += [
        sse(
            (
                "content_block_delta",
                json.dumps(
                    {
                        "type": "content_block_delta",
                        "index": 0,
                        "delta": {"type": "text_delta", "text": p},
                    }
                ),
            )
        )
        for p in pieces
    ]
    out += [
        sse(("content_block_stop", json.dumps({"type": "content_block_stop", "index": 0}))),
        sse(
            (
                "message_delta",
                json.dumps(
                    {
                        "type": "message_delta",
                        "delta": {"stop_reason": "end_turn"},
                        "usage": {"output_tokens": len(pieces)},
                    }
                ),
            )
        ),
        sse(("message_stop", json.dumps({"type": "message_stop"}))),
    ]
    return out


def _anthropic_error(status: int, message: str) -> bytes:
    kind = {429: "rate_limit_error", 529: "overloaded_error"}.get(status, "api_error")
    return json.dumps({"type": "error", "error": {"type": kind, "message": message}}).encode()


def _openai_chunk(delta: dict[str, object], finish: str | None = None) -> bytes:
    chunk = {
        "id": "c1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "gpt-x",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return sse((None, json.dumps(chunk)))


def _openai_events(pieces: list[str]) -> list[bytes]:
    out = [_openai_chunk({"role": "assistant", "content": ""})]
    out += [_openai_chunk({"content": p}) for p in pieces]
    out.append(_openai_chunk({}, "stop"))
    out.append(
        sse(
            (
                None,
                json.dumps(
                    {
                        "id": "c1",
                        "object": "chat.completion.chunk",
                        "created": 1,
                        "model": "gpt-x",
                        "choices": [],
                        "usage": {
                            "prompt_tokens": 5,
                            "completion_tokens": len(pieces),
                            "total_tokens": 5 + len(pieces),
                        },
                    }
                ),
            )
        )
    )
    out.append(b"data: [DONE]\n\n")
    return out


def _openai_error(status: int, message: str) -> bytes:
    return json.dumps(
        {"error": {"message": message, "type": "server_error", "code": status}}
    ).encode()


def _responses_events(pieces: list[str]) -> list[bytes]:
    item = {
        "type": "message",
        "id": "msg_1",
        "role": "assistant",
        "status": "in_progress",
        "content": [],
    }
    out = [
        sse(
            (
                "response.created",
                json.dumps(
                    {
                        "type": "response.created",
                        "response": {"id": "resp_1", "status": "in_progress", "output": []},
                    }
                ),
            )
        ),
        sse(
            (
                "response.output_item.added",
                json.dumps({"type": "response.output_item.added", "output_index": 0, "item": item}),
            )
        ),
        sse(
            (
                "response.content_part.added",
                json.dumps(
                    {
                        "type": "response.content_part.added",
                        "item_id": "msg_1",
                        "output_index": 0,
                        "content_index": 0,
                        "part": {"type": "output_text", "text": "", "annotations": []},
                    }
                ),
            )
        ),
    ]
    out += [
        sse(
            (
                "response.output_text.delta",
                json.dumps(
                    {
                        "type": "response.output_text.delta",
                        "item_id": "msg_1",
                        "output_index": 0,
                        "content_index": 0,
                        "delta": p,
                    }
                ),
            )
        )
        for p in pieces
    ]
    text = "".join(pieces)
    done_item = {
        **item,
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }
    out += [
        sse(
            (
                "response.output_item.done",
                json.dumps(
                    {"type": "response.output_item.done", "output_index": 0, "item": done_item}
                ),
            )
        ),
        sse(
            (
                "response.completed",
                json.dumps(
                    {
                        "type": "response.completed",
                        "response": {
                            "id": "resp_1",
                            "status": "completed",
                            "output": [done_item],
                            "usage": {
                                "input_tokens": 5,
                                "output_tokens": len(pieces),
                                "total_tokens": 5 + len(pieces),
                                "input_tokens_details": {"cached_tokens": 0},
                                "output_tokens_details": {"reasoning_tokens": 0},
                            },
                        },
                    }
                ),
            )
        ),
    ]
    return out


def _mistral_events(pieces: list[str]) -> list[bytes]:
    def chunk(delta: dict[str, object], finish: str | None = None) -> bytes:
        return sse(
            (
                None,
                json.dumps(
                    {
                        "id": "m1",
                        "object": "chat.completion.chunk",
                        "created": 1,
                        "model": "mistral-x",
                        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
                    }
                ),
            )
        )

    out = [chunk({"role": "assistant", "content": ""})]
    out += [chunk({"content": p}) for p in pieces]
    last = json.loads(chunk({}, "stop")[6:].decode())
    last["usage"] = {
        "prompt_tokens": 5,
        "completion_tokens": len(pieces),
        "total_tokens": 5 + len(pieces),
    }
    out.append(sse((None, json.dumps(last))))
    out.append(b"data: [DONE]\n\n")
    return out


def _mistral_error(status: int, message: str) -> bytes:
    return json.dumps(
        {"object": "error", "message": message, "type": "server_error", "code": str(status)}
    ).encode()


def _google_events(pieces: list[str]) -> list[bytes]:
    out = [
        sse(
            (
                None,
                json.dumps(
                    {
                        "candidates": [
                            {"content": {"role": "model", "parts": [{"text": p}]}, "index": 0}
                        ],
                        "modelVersion": "gemini-x",
                    }
                ),
            )
        )
        for p in pieces
    ]
    out.append(
        sse(
            (
                None,
                json.dumps(
                    {
                        "candidates": [
                            {
                                "content": {"role": "model", "parts": [{"text": ""}]},
                                "finishReason": "STOP",
                                "index": 0,
                            }
                        ],
                        "usageMetadata": {
                            "promptTokenCount": 5,
                            "candidatesTokenCount": len(pieces),
                            "totalTokenCount": 5 + len(pieces),
                        },
                    }
                ),
            )
        )
    )
    return out


def _google_error(status: int, message: str) -> bytes:
    return json.dumps(
        {"error": {"code": status, "message": message, "status": "UNAVAILABLE"}}
    ).encode()


def _bedrock_events(pieces: list[str]) -> list[bytes]:
    from tests.factories import bedrock_event as event

    out = [event("messageStart", {"role": "assistant"})]
    out += [
        event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": p}}) for p in pieces
    ]
    out += [
        event("contentBlockStop", {"contentBlockIndex": 0}),
        event("messageStop", {"stopReason": "end_turn"}),
        event(
            "metadata",
            {
                "usage": {
                    "inputTokens": 5,
                    "outputTokens": len(pieces),
                    "totalTokens": 5 + len(pieces),
                },
                "metrics": {"latencyMs": 1},
            },
        ),
    ]
    return out


def _bedrock_malformed() -> bytes:
    from tests.factories import event_stream_frame as frame

    headers = {
        ":event-type": "contentBlockDelta",
        ":content-type": "application/json",
        ":message-type": "event",
    }
    return frame(headers, b"{this is not json")


def _bedrock_error(status: int, message: str) -> bytes:
    return json.dumps({"message": message}).encode()


# Adapters whose module is not on this checkout yet are skipped by the suite.
CASES = [
    AdapterCase(
        "anthropic-messages",
        lambda base: _model("anthropic-messages", "claude-x", base),
        _anthropic_events,
        _anthropic_error,
    ),
    AdapterCase(
        "openai-completions",
        lambda base: _model("openai-completions", "gpt-x", base + "/v1"),
        _openai_events,
        _openai_error,
    ),
    AdapterCase(
        "openai-responses",
        lambda base: _model("openai-responses", "gpt-x", base + "/v1"),
        _responses_events,
        _openai_error,
    ),
    AdapterCase(
        "mistral-conversations",
        lambda base: _model("mistral-conversations", "mistral-x", base),
        _mistral_events,
        _mistral_error,
    ),
    AdapterCase(
        "google-generative-ai",
        lambda base: _model("google-generative-ai", "gemini-x", base + "/v1beta"),
        _google_events,
        _google_error,
    ),
    AdapterCase(
        "bedrock-converse-stream",
        lambda base: _model(
            "bedrock-converse-stream", "anthropic.claude-x", base, provider="amazon-bedrock"
        ),
        _bedrock_events,
        _bedrock_error,
        content_type="application/vnd.amazon.eventstream",
        malformed=_bedrock_malformed() if importlib.util.find_spec("botocore") else b"",
    ),
]


def case_params(cases: Iterable[AdapterCase] = CASES) -> list[Any]:
    """One ``pytest.param`` per case, named by its api, skipped when its adapter is not built."""
    return [
        pytest.param(
            case,
            id=case.api,
            marks=pytest.mark.skipif(
                importlib.util.find_spec(_BUILTIN[case.api][0]) is None,
                reason="adapter not built",
            ),
        )
        for case in cases
    ]
