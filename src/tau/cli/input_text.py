"""The text a run starts from: the typed prompt, piped stdin, and ``@file``/``--attach``.

Text from argv, a terminal or a pipe is cleaned of undecodable bytes once, here (U+FFFD, with
a note), so that the request, the output and the session file never meet a lone surrogate.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from tau.cli.errors import UsageError

if TYPE_CHECKING:
    from pathlib import Path

    from tau.cli.app import Settings
    from tau.cli.attach import Prompt

MAX_STDIN_BYTES = 16 * 1024 * 1024
"""Piped input beyond this is refused: more than any model's context window holds."""


def note(text: str) -> None:
    """``tau: note: text`` on stderr."""
    sys.stderr.write(f"tau: note: {text}\n")


def clean_text(text: str, what: str) -> str:
    """``text`` (from argv or a terminal) with undecodable bytes as U+FFFD, noting it once.

    Python hands over bytes that are not UTF-8 as lone surrogates; they cannot be encoded
    again, so each would break the request, the output and the session file later.
    """
    if text.isascii():
        return text
    try:
        raw = text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a surrogate that is no escaped byte
        raw = text.encode("utf-8", "replace")
    clean = raw.decode("utf-8", "replace")
    if clean != text:
        note(f"{what} is not valid UTF-8: undecodable bytes became \ufffd")
    return clean


def read_stdin() -> str:
    """The piped input, decoded (at most ``MAX_STDIN_BYTES``), without its trailing blank lines."""
    data = sys.stdin.buffer.read(MAX_STDIN_BYTES + 1)
    if len(data) > MAX_STDIN_BYTES:
        raise UsageError(f"piped input is over {MAX_STDIN_BYTES // (1024 * 1024)} MB: too long")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = data.decode("utf-8", "replace")
        note("stdin is not valid UTF-8: undecodable bytes became \ufffd")
    return text.strip("\r\n").rstrip()


def stdin_is_terminal() -> bool:
    """Whether stdin is a terminal (or absent): nothing is piped in."""
    return sys.stdin is None or sys.stdin.isatty()


def prompt_parts(words: list[str]) -> tuple[str, str] | None:
    """The typed prompt and the piped input of a one-shot run, or None for an interactive
    session.

    The run gets the words of the command line, then a blank line and the piped input if there
    is any (``cat f.py | tau "Explain"``); an empty result is refused.
    """
    given = clean_text(" ".join(words), "the prompt") if words else None
    if stdin_is_terminal():
        if given is not None and not given.strip():
            raise UsageError("the prompt is empty")
        return None if given is None else (given, "")
    piped = read_stdin()
    if not any(part and part.strip() for part in (given, piped)):
        empty = "the prompt is empty" if given is not None else "no prompt given (stdin is empty)"
        raise UsageError(empty)
    typed = given if given and given.strip() else ""
    return typed, piped if piped.strip() else ""


def one_shot_prompt(parts: tuple[str, str], files: list[str], settings: Settings) -> Prompt:
    """The prompt with the files it mentions (``@path``) and ``--attach`` attached."""
    from tau.cli.attach import AttachmentError, build_prompt

    typed, piped = parts
    try:
        prompt, notes = build_prompt(
            typed, settings.workspace, settings.model, extra=[piped], files=files
        )
    except AttachmentError as exc:
        raise UsageError(str(exc)) from None
    for line in [*notes, *unread_files(typed, settings.workspace.cwd, settings.tool_names)]:
        note(line)
    return prompt


_WORD_EDGES = "\"'`()[]{}<>,;:!?"


def unread_files(text: str, cwd: Path, tool_names: Sequence[str]) -> list[str]:
    """Notes for the files ``text`` names (``README.md``, not ``@README.md``) when the model
    has no ``read`` tool: it would guess at them instead of reading them."""
    if "read" in tool_names:
        return []
    notes: list[str] = []
    for word in text.split():
        name = word.strip(_WORD_EDGES).rstrip(".")
        if not name or name.startswith("@") or ("." not in name and "/" not in name):
            continue
        try:
            found = (cwd / name).is_file()
        except (OSError, ValueError):
            found = False
        if found and name not in [n.split(" ", 1)[0] for n in notes]:
            notes.append(
                f"{name} is a file here, but the model has no read tool: write @{name} to send "
                "it with the prompt (or give --tools read)"
            )
    return notes
