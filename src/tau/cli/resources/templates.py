"""Prompt templates (pi's format): ``NAME.md`` files whose text ``/NAME args`` sends.

The front matter's ``description`` (else the first line of the text) is what ``/`` completion
shows; the body is read when the template is used. Arguments are split like a shell's words
(``"two words"`` is one) and substituted in one pass, so an argument that itself contains
``$1`` is sent as typed: ``$1``, ``$2``… one argument (empty when missing), ``$@`` and
``$ARGUMENTS`` all of them, ``${@:N}`` those from the Nth on, ``${@:N:L}`` L of them from the
Nth.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from tau.cli.resources.frontmatter import (
    FrontMatterError,
    read_head,
    read_text,
    strip_front_matter,
)
from tau.cli.resources.skills import Problem

MAX_DESCRIPTION = 80
"""A description taken from the first line is cut to this many characters."""
_NAME = re.compile(r"^[\w][\w.-]*$")
_PLACEHOLDER = re.compile(r"\$\{@:(\d+)(?::(\d+))?\}|\$(\d+)|\$ARGUMENTS|\$@")


@dataclass(frozen=True, slots=True)
class PromptTemplate:
    """One template: its command name, description and file (the text stays on disk)."""

    name: str
    description: str
    path: Path
    source: str

    def expand(self, argument: str = "") -> str:
        """The message ``/NAME ARGUMENT`` sends."""
        body = strip_front_matter(read_text(self.path))
        return substitute(body.strip(), split_args(argument))


def split_args(text: str) -> list[str]:
    """The words of ``text``: split at spaces and tabs, ``"…"`` or ``'…'`` keeping spaces (an
    unclosed quote runs to the end)."""
    words: list[str] = []
    current: list[str] = []
    quote = ""
    started = False
    for char in text:
        if quote:
            if char == quote:
                quote = ""
            else:
                current.append(char)
        elif char in "\"'":
            quote, started = char, True
        elif char in " \t\n":
            if started:
                words.append("".join(current))
                current, started = [], False
        else:
            current.append(char)
            started = True
    if started:
        words.append("".join(current))
    return words


def substitute(text: str, args: list[str]) -> str:
    """``text`` with its placeholders replaced by ``args`` (one pass: no argument is itself
    substituted)."""

    def replace(match: re.Match[str]) -> str:
        start, length, number = match.group(1), match.group(2), match.group(3)
        if number is not None:
            index = int(number) - 1
            return args[index] if 0 <= index < len(args) else ""
        if start is not None:
            first = max(int(start) - 1, 0)
            chosen = args[first:] if length is None else args[first : first + int(length)]
            return " ".join(chosen)
        return " ".join(args)

    return _PLACEHOLDER.sub(replace, text)


def template_files(directory: Path) -> list[Path]:
    """The ``.md`` files directly in ``directory`` (templates are not searched for deeper)."""
    try:
        entries = sorted(os.scandir(directory), key=lambda e: e.name)
    except OSError:
        return []
    return [Path(e.path) for e in entries if e.name.endswith(".md") and _is_file(e)]


def _is_file(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_file()
    except OSError:
        return False


def load_template(path: Path, source: str) -> tuple[PromptTemplate | None, list[Problem]]:
    """The template in ``path`` (None when it cannot be used) and what is wrong with it."""
    name = path.stem
    if not _NAME.match(name):
        return None, [Problem(path, f"skipped: {name!r} cannot be typed as /{name}")]
    try:
        head = read_head(path, first_line=True)
    except (OSError, FrontMatterError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        return None, [Problem(path, f"skipped: {reason}")]
    description = " ".join(head.fields.get("description", "").split())
    if not description:
        description = head.first_line
        if len(description) > MAX_DESCRIPTION:
            description = description[: MAX_DESCRIPTION - 1] + "…"
    return PromptTemplate(name, description, path, source), []
