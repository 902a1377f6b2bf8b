"""``read``: a text file (or an image) with offset/limit and the 2,000-line / 50 KB limit."""

from __future__ import annotations

import base64
from typing import Any

from tau.agent.tools import AgentTool, AgentToolResult
from tau.ai.abort import AbortSignal
from tau.ai.types import ImageContent, TextContent
from tau.cli.tools.paths import Workspace
from tau.cli.tools.truncate import MAX_BYTES, format_size, truncate_head

_SCHEMA = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "Path to the file to read"},
        "offset": {"type": "integer", "description": "Line number to start from (1-based)"},
        "limit": {"type": "integer", "description": "Maximum number of lines to read"},
    },
    "required": ["path"],
}

_IMAGE_MAGIC = (
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)


def _image_type(head: bytes) -> str | None:
    for magic, mime in _IMAGE_MAGIC:
        if head.startswith(magic):
            return mime
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return None


def read_tool(workspace: Workspace) -> AgentTool:
    """The ``read`` tool for ``workspace``."""

    def execute(
        tool_call_id: str, params: dict[str, Any], signal: AbortSignal, on_update: Any
    ) -> AgentToolResult:
        signal.throw_if_aborted()
        raw_path = params["path"]
        path = workspace.resolve(raw_path)
        if not path.is_file():
            raise FileNotFoundError(f"File not found: {raw_path}")
        data = path.read_bytes()
        mime = _image_type(data[:4100])
        if mime is not None:
            image = ImageContent(base64.b64encode(data).decode("ascii"), mime)
            return AgentToolResult([TextContent(f"Read image file [{mime}]"), image])
        return AgentToolResult([TextContent(_read_text(data, raw_path, params))])

    return AgentTool("read", "Read file contents", _SCHEMA, execute=execute, label="Read")


def _read_text(data: bytes, raw_path: str, params: dict[str, Any]) -> str:
    lines = data.decode("utf-8", errors="replace").split("\n")
    total = len(lines)
    offset = params.get("offset")
    start = max(1, int(offset)) if offset is not None else 1
    if start > total:
        raise ValueError(f"Offset {start} is beyond end of file ({total} lines total)")
    limit = params.get("limit")
    end = min(total, start - 1 + int(limit)) if limit is not None else total
    selected = lines[start - 1 : end]
    first = selected[0] if selected else ""
    if len(first.encode("utf-8")) > MAX_BYTES:
        size = format_size(len(first.encode("utf-8")))
        return (
            f"[Line {start} is {size}, exceeds {format_size(MAX_BYTES)} limit. "
            f"Use bash: sed -n '{start}p' {raw_path} | head -c {MAX_BYTES}]"
        )
    cut = truncate_head("\n".join(selected))
    if cut.truncated:
        last = start + cut.last_line - 1
        limit_note = f" ({format_size(MAX_BYTES)} limit)" if cut.by == "bytes" else ""
        return (
            f"{cut.text}\n\n[Showing lines {start}-{last} of {total}{limit_note}. "
            f"Use offset={last + 1} to continue.]"
        )
    if end < total:
        return (
            f"{cut.text}\n\n[{total - end} more lines in file. Use offset={end + 1} to continue.]"
        )
    return cut.text
