"""MCP content as tau content: what a tool result, a resource or a prompt turns into.

A tool result reaches the model as text and images (what every provider accepts in a tool
result). Audio and binary resources cannot, so they become a short note saying what was
returned; ``structuredContent`` is kept as the result's ``details`` and, when the server sent
no text along with it, shown to the model as JSON.

A result's text is capped at :data:`MAX_RESULT_BYTES` (as ``read`` and ``bash`` cap theirs):
the model gets the start and a notice naming a file that holds the whole text
(:func:`results_dir`), which it can read in parts. ``structuredContent`` over the cap is not
kept in ``details`` as well: a result is written (to a session, a trace) once.
"""

from __future__ import annotations

import json
import os
import stat
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from mcp import types as mcp_types

from tau.agent.tools import AgentToolResult
from tau.ai import ImageContent, TextContent

__all__ = [
    "MAX_RESULT_BYTES",
    "error_text",
    "progress_result",
    "resource_contents",
    "results_dir",
    "tool_result",
    "user_content",
]

MAX_RESULT_BYTES = 50 * 1024
"""The text of one tool result the model gets at most; the rest is saved to a file."""

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
    if structured is not None and len(_json(structured)) > MAX_RESULT_BYTES:
        structured = None  # the text holds it: not kept (and written) a second time
    return AgentToolResult(_capped(content), structured), result.is_error


def results_dir() -> Path:
    """Where whole results over the cap are saved: a folder of this user's in the temporary
    directory (created private; refused if it is a link or someone else's)."""
    path = Path(tempfile.gettempdir()) / f"tau-mcp-results-{os.getuid()}"
    try:
        path.mkdir(mode=0o700)
    except FileExistsError:
        info = path.lstat()
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
            raise PermissionError(f"{path} is not a folder of this user's") from None
    return path


def _capped(content: list[UserBlock]) -> list[UserBlock]:
    texts = [b.text for b in content if isinstance(b, TextContent)]
    total = sum(len(t.encode("utf-8")) for t in texts)
    if total <= MAX_RESULT_BYTES:
        return content
    whole = "\n".join(texts)
    try:
        fd, name = tempfile.mkstemp(prefix="result-", suffix=".txt", dir=results_dir())
        with os.fdopen(fd, "w", encoding="utf-8", errors="replace") as out:
            out.write(whole)
        where = f"The whole result is in {name}: read it in parts (offset/limit) or search it."
    except OSError as exc:
        where = f"The rest could not be saved ({exc.strerror or exc})."
    budget = MAX_RESULT_BYTES
    kept: list[UserBlock] = []
    for block in content:
        if not isinstance(block, TextContent):
            kept.append(block)
        elif budget > 0:
            data = block.text.encode("utf-8")
            kept.append(TextContent(data[:budget].decode("utf-8", "ignore")))
            budget -= len(data)
    shown = _bytes(MAX_RESULT_BYTES)
    kept.append(TextContent(f"[Result cut to its first {shown} of {_bytes(total)}. {where}]"))
    return kept


def _bytes(size: int) -> str:
    return f"{size / 1024:.1f} KB" if size < 1024 * 1024 else f"{size / (1024 * 1024):.1f} MB"


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
