"""Streamed Markdown cut into blocks: the finished ones can be rendered once and kept.

A block ends at a blank line outside a fenced code block, at the line that closes a fence, and
after a heading; a fence that opens ends the block before it. Everything after the last
finished block is the tail, which may still change: it is what a live view re-renders, so the
cost of showing an answer grows with its length, not with its length squared.
"""

from __future__ import annotations

import re

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_HEADING = re.compile(r"^ {0,3}#{1,6}(?:\s|$)")


class BlockSplitter:
    """Feed text as it streams; :meth:`feed` returns the blocks it finished."""

    __slots__ = ("_fence", "_lines", "_partial")

    def __init__(self) -> None:
        self._lines: list[str] = []  # complete lines of the unfinished block
        self._partial: list[str] = []  # pieces of the line being streamed
        self._fence: str | None = None  # the marker of the open fence

    @property
    def in_fence(self) -> str | None:
        """The opening line's marker (e.g. ``\u0060\u0060\u0060``) while inside a fenced block."""
        return self._fence

    def feed(self, delta: str) -> list[str]:
        """Add ``delta``; returns the blocks it finished (without trailing newlines)."""
        if "\n" not in delta:
            self._partial.append(delta)
            return []
        head, *middle, rest = delta.split("\n")
        self._partial.append(head)
        done: list[str] = []
        for line in ["".join(self._partial), *middle]:
            self._line(line, done)
        self._partial = [rest] if rest else []
        return done

    def _line(self, line: str, done: list[str]) -> None:
        fence = _FENCE.match(line)
        if self._fence is not None:
            self._lines.append(line)
            marker = self._fence
            if (
                fence is not None
                and fence.group(1)[0] == marker[0]
                and len(fence.group(1)) >= len(marker)
                and not line[fence.end() :].strip()
            ):
                self._fence = None
                self._finish(done)
            return
        if fence is not None:
            self._finish(done)
            self._fence = fence.group(1)
            self._lines.append(line)
        elif not line.strip():
            self._finish(done)
        elif _HEADING.match(line):
            self._finish(done)
            done.append(line)
        else:
            self._lines.append(line)

    def _finish(self, done: list[str]) -> None:
        if self._lines:
            done.append("\n".join(self._lines))
            self._lines = []

    def tail(self, max_lines: int | None = None) -> str:
        """The unfinished text; with ``max_lines``, only its last lines (a fence opener kept, so
        a long code block still shows as code)."""
        lines = self._lines
        partial = "".join(self._partial)
        if max_lines is not None and len(lines) + 1 > max_lines:
            keep = lines[len(lines) - max(0, max_lines - 1) :] if max_lines > 1 else []
            if self._fence is not None and lines:
                keep = [lines[0], *keep[1:]] if keep else [lines[0]]
            lines = keep
        return "\n".join([*lines, partial]) if lines else partial

    def flush(self) -> list[str]:
        """End of the text: the last block, if any (an open fence is left as it is)."""
        if self._partial:
            self._lines.append("".join(self._partial))
            self._partial = []
        done: list[str] = []
        self._finish(done)
        self._fence = None
        return [block for block in done if block.strip()]
