"""``read``: a text file (or an image) with offset/limit and the 2,000-line / 50 KB limit.

Text is scanned in chunks, so memory stays bounded whatever the file's size: only the lines
that can be shown are kept, and the rest are only counted. A final newline ends the last line
(it does not start another). Bytes that are not UTF-8 are shown as U+FFFD, with a note.
Images are sniffed from their first bytes and kept within the size limits (see ``images``).
"""

from __future__ import annotations

import base64
import os
from dataclasses import dataclass
from typing import Any, BinaryIO

from tau.agent import AgentTool, AgentToolResult
from tau.ai import AbortSignal, ImageContent, TextContent
from tau.cli.tools.images import prepare_image
from tau.cli.tools.paths import Workspace, open_regular
from tau.cli.tools.truncate import MAX_BYTES, MAX_LINES, format_size, truncate_head

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
_CHUNK = 1024 * 1024
_NOT_UTF8 = "[The file is not valid UTF-8: undecodable bytes are shown as \ufffd]"


def image_type(head: bytes) -> str | None:
    """The MIME type of an image whose file starts with ``head``, or None when it is none."""
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
        with open_regular(workspace.resolve(raw_path), raw_path) as handle:
            mime = image_type(handle.read(4100))
            handle.seek(0)
            if mime is not None:
                image, note = read_image(handle, mime, raw_path)
                label = f"Read image file [{image.mime_type}]"
                if note:
                    label = f"{label}\n{note}"
                return AgentToolResult([TextContent(label), image])
            text = read_text(handle, raw_path, params.get("offset"), params.get("limit"))
            return AgentToolResult([TextContent("\n\n".join([text.text, *text.notes]))])

    return AgentTool("read", "Read file contents", _SCHEMA, execute=execute, label="Read")


class _Lines:
    """The lines of a file from ``start`` on, as many as could be shown, and the total count."""

    def __init__(self, start: int, end: int | None) -> None:
        self.start = start
        self.end = end
        self.kept: list[bytes] = []
        self.kept_size = 0
        self.first_length = 0  # of the first selected line, in bytes, however long
        self.total = 0
        self._line = bytearray()  # the selected line being read, up to the byte limit
        self._length = 0

    def _collecting(self) -> bool:
        # One line past either limit is enough to know that the output is cut.
        return self.kept_size <= MAX_BYTES and len(self.kept) <= MAX_LINES

    def _done(self) -> bool:
        past_end = self.end is not None and self.total >= self.end
        return past_end or (self.total >= self.start and not self._collecting())

    def feed(self, chunk: bytes) -> None:
        position = self._skip(chunk)
        while not self._done():
            newline = chunk.find(b"\n", position)
            stop = len(chunk) if newline < 0 else newline
            if self.total + 1 >= self.start and self._collecting():
                room = MAX_BYTES + 1 - len(self._line)
                self._line += chunk[position : min(stop, position + max(room, 0))]
            self._length += stop - position
            if newline < 0:
                return
            self._end_line()
            position = newline + 1
        # Nothing more to keep: only count the lines.
        self._count(chunk, position, chunk.count(b"\n", position))

    def _skip(self, chunk: bytes) -> int:
        """Count the lines before the selection in bulk; returns where the selection starts."""
        before = self.start - 1 - self.total
        if before <= 0:
            return 0
        count = chunk.count(b"\n")
        if count < before:
            self._count(chunk, 0, count)
            return len(chunk)
        position = 0
        for _ in range(before):
            position = chunk.index(b"\n", position) + 1
        self.total += before
        self._length = 0
        return position

    def _count(self, chunk: bytes, position: int, count: int) -> None:
        if count:
            self.total += count
            self._length = len(chunk) - chunk.rfind(b"\n") - 1
        else:
            self._length += len(chunk) - position

    def finish(self) -> None:
        if self._length:
            self._end_line()  # a last line without a final newline

    def _end_line(self) -> None:
        self.total += 1
        if self.total >= self.start and (self.end is None or self.total <= self.end):
            if self.total == self.start:
                self.first_length = self._length
            if self._collecting():
                self.kept.append(bytes(self._line))
                self.kept_size += len(self._line) + 1
        self._line.clear()
        self._length = 0


def _decode(lines: list[bytes]) -> tuple[list[str], bool]:
    texts: list[str] = []
    valid = True
    for line in lines:
        try:
            texts.append(line.decode("utf-8"))
        except UnicodeDecodeError:
            # A line cut at the byte limit may end inside a character: that is not a fault.
            if len(line) <= MAX_BYTES:
                valid = False
            texts.append(line.decode("utf-8", errors="replace"))
    return texts, valid


def read_image(handle: BinaryIO, mime: str, shown: str) -> tuple[ImageContent, str | None]:
    """The image in ``handle`` (sniffed as ``mime``) within the size limits, and a note when
    it had to be resized."""
    image = prepare_image(handle, os.fstat(handle.fileno()).st_size, mime, shown)
    encoded = base64.b64encode(image.data).decode("ascii")
    return ImageContent(encoded, image.mime_type), image.note


@dataclass(slots=True)
class TextRead:
    """What ``read`` shows of a text file, and its notes (a cut, bytes that are not UTF-8)."""

    text: str
    notes: list[str]


def read_text(handle: BinaryIO, raw_path: str, offset: Any = None, limit: Any = None) -> TextRead:
    """The lines of the text file in ``handle`` from ``offset`` (1-based), ``limit`` of them,
    within the 2,000-line / 50 KB limit, in bounded memory."""
    start = max(1, int(offset)) if offset is not None else 1
    lines = _Lines(start, start - 1 + max(0, int(limit)) if limit is not None else None)
    while chunk := handle.read(_CHUNK):
        lines.feed(chunk)
    lines.finish()
    total = lines.total
    if total == 0 and offset is None:
        return TextRead("(empty file)", [])
    if start > total:
        raise ValueError(f"Offset {start} is beyond end of file ({total} lines total)")
    end = min(total, lines.end) if lines.end is not None else total
    if lines.first_length > MAX_BYTES:
        return TextRead(
            f"[Line {start} is {format_size(lines.first_length)}, exceeds "
            f"{format_size(MAX_BYTES)} limit. Use bash: sed -n '{start}p' {raw_path} | "
            f"head -c {MAX_BYTES}]",
            [],
        )
    texts, valid = _decode(lines.kept)
    cut = truncate_head("\n".join(texts))
    notes = [] if valid else [_NOT_UTF8]
    if cut.truncated:
        last = start + cut.last_line - 1
        limit_note = f" ({format_size(MAX_BYTES)} limit)" if cut.by == "bytes" else ""
        notes.append(
            f"[Showing lines {start}-{last} of {total}{limit_note}. "
            f"Use offset={last + 1} to continue.]"
        )
    elif end < total:
        notes.append(f"[{total - end} more lines in file. Use offset={end + 1} to continue.]")
    return TextRead(cut.text, notes)
