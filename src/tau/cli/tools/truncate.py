"""Output limits shared by the built-in tools: 2,000 lines or 50 KB, whichever comes first."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

MAX_LINES = 2000
MAX_BYTES = 50 * 1024


def format_size(size: int) -> str:
    """``512B``, ``1.5KB``, ``2.0MB``."""
    if size < 1024:
        return f"{size}B"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f}KB"
    return f"{size / (1024 * 1024):.1f}MB"


@dataclass(slots=True)
class Truncation:
    """What survived a cut: the text, and which lines of how many (1-based, inclusive)."""

    text: str
    truncated: bool
    by: Literal["lines", "bytes"] | None
    first_line: int
    last_line: int
    total_lines: int


def _size(line: str) -> int:
    return len(line.encode("utf-8"))


def truncate_head(text: str, max_lines: int = MAX_LINES, max_bytes: int = MAX_BYTES) -> Truncation:
    """Keep whole lines from the start; an empty result means the first line alone is too big."""
    lines = text.split("\n")
    total = len(lines)
    kept = 0
    size = 0
    by: Literal["lines", "bytes"] | None = None
    for line in lines:
        if kept >= max_lines:
            by = "lines"
            break
        cost = _size(line) + (1 if kept else 0)
        if size + cost > max_bytes:
            by = "bytes"
            break
        size += cost
        kept += 1
    return Truncation("\n".join(lines[:kept]), by is not None, by, 1, kept, total)


def truncate_tail(text: str, max_lines: int = MAX_LINES, max_bytes: int = MAX_BYTES) -> Truncation:
    """Keep whole lines from the end (the last line is cut to its tail if it alone is too big)."""
    lines = text.split("\n")
    total = len(lines)
    kept: list[str] = []
    size = 0
    by: Literal["lines", "bytes"] | None = None
    for line in reversed(lines):
        if len(kept) >= max_lines:
            by = "lines"
            break
        cost = _size(line) + (1 if kept else 0)
        if size + cost > max_bytes:
            by = "bytes"
            if not kept:
                tail = line.encode("utf-8")[-max_bytes:].decode("utf-8", errors="ignore")
                kept.append(tail)
            break
        size += cost
        kept.append(line)
    kept.reverse()
    return Truncation("\n".join(kept), by is not None, by, total - len(kept) + 1, total, total)
