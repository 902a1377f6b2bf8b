"""MCP content as tau content: what a tool result, a resource or a prompt turns into.

A tool result reaches the model as text and images (what every provider accepts in a tool
result). Audio and binary resources cannot, so they become a short note saying what was
returned; ``structuredContent`` is kept as the result's ``details`` and, when the server sent
no text along with it, shown to the model as JSON.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from mcp import types as mcp_types

from tau.agent.tools import AgentToolResult
from tau.ai import ImageContent, TextContent

__all__ = ["error_text", "progress_result", "resource_contents", "tool_result", "user_content"]

UserBlock = TextContent | ImageContent


def _size(data: str) -> str:
    """The decoded size of base64 ``data``, for notes."""
    size = len(data) * 3 // 4 - data[-2:].count("=")
    return f"{size} bytes" if size < 1024 else f"{size / 1024:.1f} KiB"


def _resource(
    contents: mcp_types.TextResourceContents | mcp_types.BlobResourceContents,
) -> UserBlock:
    mime = contents.mime_type or ""
    if isinstance(contents, mcp_types.TextResourceContents):
        header = f"[resource {contents.uri}{f' ({mime})' if mime else ''}]"
        return TextContent(f"{header}\n{contents.text}")
    if mime.startswith("image/"):
        return ImageContent(contents.blob, mime)
    kind = mime or "binary data"
    return TextContent(
        f"[resource {contents.uri}: {kind}, {_size(contents.blob)}; binary content not shown]"
    )


def user_content(block: mcp_types.ContentBlock) -> UserBlock:
    """One MCP content block as a tau block (text, image, or a note for what cannot be sent)."""
    match block:
        case mcp_types.TextContent():
            return TextContent(block.text)
        case mcp_types.ImageContent():
            return ImageContent(block.data, block.mime_type)
        case mcp_types.AudioContent():
            return TextContent(
                f"[audio: {block.mime_type}, {_size(block.data)}; audio is not passed to the model]"
            )
        case mcp_types.EmbeddedResource():
            return _resource(block.resource)
        case mcp_types.ResourceLink():
            about = f": {block.description}" if block.description else ""
            mime = f" ({block.mime_type})" if block.mime_type else ""
            return TextContent(f"[resource link {block.name} <{block.uri}>{mime}{about}]")
    raise TypeError(f"unknown MCP content block {type(block).__name__}")


def resource_contents(
    contents: Iterable[mcp_types.TextResourceContents | mcp_types.BlobResourceContents],
) -> list[UserBlock]:
    """A read resource's contents as tau blocks."""
    return [_resource(item) for item in contents]


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=repr)


def tool_result(result: mcp_types.CallToolResult) -> tuple[AgentToolResult, bool]:
    """The tau result of a ``tools/call`` and whether the server flagged it as an error."""
    content = [user_content(block) for block in result.content]
    structured = result.structured_content
    if structured is not None and not any(isinstance(b, TextContent) for b in content):
        content.append(TextContent(_json(structured)))
    return AgentToolResult(content, structured), result.is_error


def error_text(content: Sequence[UserBlock]) -> str:
    """What an ``isError`` result says, as one message."""
    text = "\n".join(b.text for b in content if isinstance(b, TextContent)).strip()
    return text or "the tool reported an error without a message"


def progress_result(progress: float, total: float | None, message: str | None) -> AgentToolResult:
    """A progress notification as a partial tool result (its numbers in ``details``)."""
    amount = f"{progress:g}/{total:g}" if total else f"{progress:g}"
    text = f"{message} ({amount})" if message else amount
    return AgentToolResult(
        [TextContent(text)], {"progress": progress, "total": total, "message": message}
    )
