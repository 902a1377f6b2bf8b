"""The streamed responses every library is measured on, rendered once as SSE bytes."""

from __future__ import annotations

import json


def _sse(data: dict[str, object], event: str | None = None) -> str:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(data, separators=(',', ':'))}\n\n"


def openai_stream(deltas: int) -> tuple[bytes, int]:
    """A chat-completions stream of ``deltas`` text chunks; returns (body, SSE event count)."""
    base = {
        "id": "chatcmpl-bench",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "gpt-4o-mini",
    }
    parts = [
        _sse(
            {
                **base,
                "choices": [
                    {
                        "index": 0,
                        "delta": {"role": "assistant", "content": ""},
                        "finish_reason": None,
                    }
                ],
            }
        )
    ]
    for i in range(deltas):
        parts.append(
            _sse(
                {
                    **base,
                    "choices": [
                        {"index": 0, "delta": {"content": f"tok{i % 10} "}, "finish_reason": None}
                    ],
                }
            )
        )
    parts.append(_sse({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}))
    parts.append(
        _sse(
            {
                **base,
                "choices": [],
                "usage": {
                    "prompt_tokens": 12,
                    "completion_tokens": deltas,
                    "total_tokens": 12 + deltas,
                },
            }
        )
    )
    parts.append("data: [DONE]\n\n")
    return "".join(parts).encode(), len(parts)


def anthropic_stream(text_deltas: int, tool_bytes: int, tool_chunk: int = 100) -> tuple[bytes, int]:
    """A Messages stream: text deltas, then one tool call of ``tool_bytes`` JSON in chunks."""
    parts = [
        _sse(
            {
                "type": "message_start",
                "message": {
                    "id": "msg_bench",
                    "type": "message",
                    "role": "assistant",
                    "model": "claude-sonnet-4-5",
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {
                        "input_tokens": 25,
                        "output_tokens": 1,
                        "cache_read_input_tokens": 0,
                        "cache_creation_input_tokens": 0,
                    },
                },
            },
            "message_start",
        ),
        _sse(
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            },
            "content_block_start",
        ),
    ]
    for i in range(text_deltas):
        parts.append(
            _sse(
                {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {"type": "text_delta", "text": f"tok{i % 10} "},
                },
                "content_block_delta",
            )
        )
    parts.append(_sse({"type": "content_block_stop", "index": 0}, "content_block_stop"))
    parts.append(
        _sse(
            {
                "type": "content_block_start",
                "index": 1,
                "content_block": {
                    "type": "tool_use",
                    "id": "toolu_bench",
                    "name": "write_file",
                    "input": {},
                },
            },
            "content_block_start",
        )
    )
    content = ('line of file content with "quotes" and \\ slashes\n' * (tool_bytes // 50 + 1))[
        :tool_bytes
    ]
    args = json.dumps({"path": "out.txt", "content": content})
    for start in range(0, len(args), tool_chunk):
        parts.append(
            _sse(
                {
                    "type": "content_block_delta",
                    "index": 1,
                    "delta": {
                        "type": "input_json_delta",
                        "partial_json": args[start : start + tool_chunk],
                    },
                },
                "content_block_delta",
            )
        )
    parts.append(_sse({"type": "content_block_stop", "index": 1}, "content_block_stop"))
    parts.append(
        _sse(
            {
                "type": "message_delta",
                "delta": {"stop_reason": "tool_use", "stop_sequence": None},
                "usage": {"output_tokens": text_deltas + len(args) // 4},
            },
            "message_delta",
        )
    )
    parts.append(_sse({"type": "message_stop"}, "message_stop"))
    return "".join(parts).encode(), len(parts)
