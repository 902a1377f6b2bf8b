"""tau's messages in the GenAI conventions' content format, as the JSON strings spans carry.

Roles ``user``/``assistant``/``tool``; parts ``text``, ``reasoning``, ``tool_call`` (with the
arguments as an object), ``tool_call_response`` and ``blob`` (images, base64). Only recorded
with ``capture_content=True``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from tau.ai import (
    AssistantMessage,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from tau.telemetry._semconv import finish_reason


def to_json(value: Any) -> str:
    """Compact JSON; anything JSON cannot hold becomes its ``str``."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def _part(block: object) -> dict[str, Any]:
    match block:
        case TextContent():
            return {"type": "text", "content": block.text}
        case ThinkingContent():
            return {"type": "reasoning", "content": block.thinking}
        case ToolCall():
            return {
                "type": "tool_call",
                "id": block.id,
                "name": block.name,
                "arguments": block.arguments,
            }
        case ImageContent():
            return {
                "type": "blob",
                "modality": "image",
                "mime_type": block.mime_type,
                "content": block.data,
            }
    return {"type": getattr(block, "type", type(block).__name__)}


def result_value(content: Sequence[object]) -> Any:
    """A tool result's content: its text when it is all text, else its parts."""
    if all(isinstance(block, TextContent) for block in content):
        return "".join(block.text for block in content if isinstance(block, TextContent))
    return [_part(block) for block in content]


def message(value: object) -> dict[str, Any] | None:
    """One message in the conventions' format; None for a message the model never sees."""
    match value:
        case UserMessage(content=str() as text):
            return {"role": "user", "parts": [{"type": "text", "content": text}]}
        case UserMessage(content=blocks):
            return {"role": "user", "parts": [_part(block) for block in blocks]}
        case AssistantMessage():
            return {"role": "assistant", "parts": [_part(block) for block in value.content]}
        case ToolResultMessage():
            response = {
                "type": "tool_call_response",
                "id": value.tool_call_id,
                "response": result_value(value.content),
            }
            return {"role": "tool", "parts": [response]}
    return None


def input_messages(messages: Iterable[object]) -> str:
    """``gen_ai.input.messages``."""
    return to_json([m for m in map(message, messages) if m is not None])


def output_messages(reply: AssistantMessage) -> str:
    """``gen_ai.output.messages``: the one response, with its finish reason."""
    return to_json(
        [
            {
                "role": "assistant",
                "parts": [_part(block) for block in reply.content],
                "finish_reason": finish_reason(reply.stop_reason),
            }
        ]
    )


def system_instructions(prompt: str) -> str:
    """``gen_ai.system_instructions``."""
    return to_json([{"type": "text", "content": prompt}])
