"""The YAML front matter of a Markdown resource (``SKILL.md``, a prompt template), read without
reading the body.

Skills and templates only need their front matter at start-up (a name, a description), and a
project may hold hundreds of them: :func:`read_head` reads a file line by line up to the closing
``---`` (and, for templates, the first line of the body), never the rest. The parser takes the
subset of YAML that front matter uses: ``key: value`` lines, quoted values, ``>``/``|`` block
values and indented continuation lines; nested mappings (``metadata:``) are skipped. Only the
standard library is used: PyYAML would cost start-up more than all the files it would read.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

MAX_HEAD_BYTES = 64 * 1024
"""Front matter longer than this is not front matter (a file that opens with ``---`` and never
closes it): the file is reported, not read to its end."""


class FrontMatterError(ValueError):
    """Front matter that opens and never closes, or is not text."""


@dataclass(slots=True)
class Head:
    """What a resource file starts with: its front matter fields and the first body line."""

    fields: dict[str, str] = field(default_factory=dict)
    first_line: str = ""
    body_offset: int = 0
    """Where the body starts, in characters of the decoded text."""


def read_head(path: Path, *, first_line: bool = False) -> Head:
    """The front matter of ``path`` (and its first non-empty body line when ``first_line``).

    Raises :class:`OSError` for a file that cannot be read and :class:`FrontMatterError` for
    front matter that never closes or is not UTF-8.
    """
    head = Head()
    read = 0
    lines: list[str] = []
    try:
        with _open_regular(path) as file:
            opening = file.readline(MAX_HEAD_BYTES)
            read += len(opening)
            if opening.strip() == "---":
                while True:
                    line = file.readline(MAX_HEAD_BYTES)
                    read += len(line)
                    if not line:
                        raise FrontMatterError("the front matter opens with --- and never closes")
                    if line.strip() == "---":
                        break
                    if read > MAX_HEAD_BYTES:
                        raise FrontMatterError(
                            f"the front matter is longer than {MAX_HEAD_BYTES // 1024} KiB"
                        )
                    lines.append(line.rstrip("\r\n"))
                head.body_offset = read
                head.fields = parse_fields(lines)
                line = ""
            else:
                line = opening
            if first_line:
                while not line.strip() and read <= MAX_HEAD_BYTES:
                    line = file.readline(MAX_HEAD_BYTES)
                    read += len(line)
                    if not line:
                        break
                head.first_line = line.strip()
    except UnicodeDecodeError:
        raise FrontMatterError("the file is not UTF-8 text") from None
    return head


def _open_regular(path: Path) -> TextIO:
    """``path`` opened for reading as text, only if it is a regular file: a FIFO named
    ``SKILL.md`` must not block start-up waiting for a writer."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise FrontMatterError("not a regular file")
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return open(fd, encoding="utf-8", newline="", closefd=True)
    except BaseException:
        os.close(fd)
        raise


MAX_BODY = 1024 * 1024
"""A skill or template sent whole is cut here: a message larger than this is a mistake."""


def read_text(path: Path) -> str:
    """The text of a resource (a regular file only), at most :data:`MAX_BODY` bytes of it;
    bytes that are not UTF-8 become U+FFFD. Raises :class:`OSError` or
    :class:`FrontMatterError`."""
    try:
        with _open_regular(path) as file:
            return file.buffer.read(MAX_BODY).decode("utf-8", errors="replace")
    except FrontMatterError as exc:
        raise OSError(f"{path}: {exc}") from None


def strip_front_matter(text: str) -> str:
    """The body of a resource file's text (the text itself when it has no front matter)."""
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        return text
    for index, line in enumerate(lines[1:], start=1):
        if line.strip() == "---":
            return "".join(lines[index + 1 :])
    return text


def parse_fields(lines: list[str]) -> dict[str, str]:
    """The top-level ``key: value`` fields of front matter lines, values as text."""
    fields: dict[str, str] = {}
    index = 0
    while index < len(lines):
        line = lines[index]
        index += 1
        if not line.strip() or line.lstrip().startswith("#") or line[:1] in (" ", "\t"):
            continue
        key, colon, value = line.partition(":")
        if not colon:
            continue
        key, value = key.strip(), value.strip()
        block: list[str] = []
        while index < len(lines) and (not lines[index].strip() or lines[index][:1] in " \t"):
            block.append(lines[index].strip())
            index += 1
        while block and not block[-1]:
            block.pop()
        if value in ("|", "|-", "|+"):
            fields[key] = "\n".join(block)
        elif value in (">", ">-", ">+") or (not value and block and ":" not in block[0]):
            fields[key] = _fold(block)
        elif not value:
            continue  # a nested mapping or list: not a field tau reads
        else:
            fields[key] = _scalar(" ".join([value, *block]) if block else value)
    return fields


def _fold(lines: list[str]) -> str:
    paragraphs = "\n".join(lines).split("\n\n")
    return "\n".join(" ".join(p.split()) for p in paragraphs)


def _scalar(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] == '"':
        inner = value[1:-1]
        return inner.replace('\\"', '"').replace("\\n", "\n").replace("\\\\", "\\")
    if len(value) >= 2 and value[0] == value[-1] == "'":
        return value[1:-1].replace("''", "'")
    comment = value.find(" #")
    return value[:comment].rstrip() if comment >= 0 else value
