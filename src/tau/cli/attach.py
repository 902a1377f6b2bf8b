"""Attachments: ``@path`` in a prompt, and ``-a/--attach FILE``, sent along with the prompt.

A mention is ``@`` at the start of the prompt or after whitespace, followed by a path up to the
next whitespace (or ``@"a path with spaces"``). It attaches the file when the file exists or
the word looks like a path (it has a ``/``, starts with ``~`` or ``.``, or ends in an
extension); other words (``@alice``, ``@property``) stay text, and so does everything inside
backticks or a fenced code block. Sentence punctuation after a path (``see @a.py.``) is not
part of it unless a file is named so.

Text files go inline after the prompt, each between ``<file path="…">`` and ``</file>``, within
the ``read`` tool's limits (2,000 lines or 50 KB, with its notice). Images go as images when the
model takes them (resized like ``read`` does), else as a note. Everything goes through the
tools' path policy: only the working directory and ``--allow-path`` roots, regular files only.
A missing file, a binary file, a FIFO or a path outside is an :class:`AttachmentError`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tau.ai import Model, TextContent, UserContent, UserMessage
from tau.cli.tools.paths import Workspace, open_regular
from tau.cli.tools.read import image_type, read_image, read_text

MAX_ATTACHMENTS = 64
"""More files than this in one prompt is refused (each is bounded, so the whole is too)."""
_SNIFF = 8192
_MENTION = re.compile(r'(?<!\S)@(?:"([^"\n]+)"|([^\s"`]+))')
_CODE = re.compile(
    r"^ {0,3}(`{3,}|~{3,}).*?(?:^ {0,3}\1[`~]*[ \t]*$|\Z)|(`+)[^\n]*?\2", re.S | re.M
)
_TRAILING = ".,;:!?)]}'\""
_EXTENSION = re.compile(r"\.[A-Za-z0-9]{1,8}$")

Prompt = str | UserMessage
"""What a run is given: plain text, or a user message with attachments."""


class AttachmentError(ValueError):
    """A file named in a prompt cannot be attached; the message says which and why."""


@dataclass(slots=True)
class Attached:
    """The content blocks of a prompt's attachments and notes for the user."""

    blocks: list[UserContent] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _candidates(text: str) -> list[tuple[str, bool]]:
    code = [(m.start(), m.end()) for m in _CODE.finditer(text)]
    found: list[tuple[str, bool]] = []
    for match in _MENTION.finditer(text):
        if any(start <= match.start() < end for start, end in code):
            continue
        quoted = match.group(1)
        found.append((quoted if quoted is not None else match.group(2), quoted is not None))
    return found


def find_mentions(text: str, exists: Callable[[str], bool]) -> list[str]:
    """The files ``text`` mentions: each word that names an existing path, or looks like one.

    ``exists`` tells whether a path (as written) exists; a word that does not may still name a
    file once trailing punctuation is dropped.
    """
    paths: list[str] = []
    for word, quoted in _candidates(text):
        if quoted or exists(word):
            paths.append(word)
            continue
        trimmed = word.rstrip(_TRAILING)
        if trimmed and (exists(trimmed) or _looks_like_path(trimmed)):
            paths.append(trimmed)
    return paths


def _looks_like_path(word: str) -> bool:
    return "/" in word or word.startswith(("~", ".")) or bool(_EXTENSION.search(word))


def _file_block(shown: str, body: str) -> TextContent:
    return TextContent(f'<file path="{shown}">\n{body}\n</file>')


def _attach_one(workspace: Workspace, raw: str, model: Model, into: Attached) -> int:
    """Append the blocks of one file to ``into``; returns their size in bytes."""
    try:
        path = workspace.resolve(raw)
        shown = workspace.display(path)
        with open_regular(path, raw) as handle:
            head = handle.read(_SNIFF)
            handle.seek(0)
            mime = image_type(head)
            if mime is not None:
                if "image" not in model.input:
                    into.blocks.append(
                        TextContent(f"[image {shown} not attached: this model takes no images]")
                    )
                    into.notes.append(
                        f"{shown} is an image and {model.provider}/{model.id} takes no images: "
                        "it is not attached"
                    )
                    return 0
                image, note = read_image(handle, mime, raw)
                label = f"[image: {shown}]" + (f"\n{note}" if note else "")
                into.blocks += [TextContent(label), image]
                if note:
                    into.notes.append(f"{shown}: {note.strip('[]')}")
                return len(image.data)
            if b"\0" in head:
                raise AttachmentError(f"cannot attach {raw}: a binary file (not text or an image)")
            read = read_text(handle, raw)
    except AttachmentError:
        raise
    except FileNotFoundError:
        raise AttachmentError(f"cannot attach {raw}: no such file") from None
    except IsADirectoryError:
        raise AttachmentError(f"cannot attach {raw}: a directory (attach its files)") from None
    except OSError as exc:
        reason = exc.strerror if exc.strerror and exc.filename else str(exc)
        raise AttachmentError(f"cannot attach {raw}: {reason}") from None
    except ValueError as exc:  # a damaged or oversized image
        raise AttachmentError(f"cannot attach {raw}: {exc}") from None
    into.blocks.append(_file_block(shown, "\n\n".join([read.text, *read.notes])))
    into.notes += [f"{shown}: {note.strip('[]')}" for note in read.notes]
    return len(read.text)


def attach(workspace: Workspace, paths: Iterable[str], model: Model) -> Attached:
    """The content of the files ``paths`` for ``model`` (each file once, in order)."""
    unique = list(dict.fromkeys(paths))
    if len(unique) > MAX_ATTACHMENTS:
        raise AttachmentError(
            f"{len(unique)} files attached: at most {MAX_ATTACHMENTS} in one prompt"
        )
    attached = Attached()
    for raw in unique:
        _attach_one(workspace, raw, model, attached)
    return attached


def _exists_in(workspace: Workspace) -> Callable[[str], bool]:
    def exists(raw: str) -> bool:
        try:
            path = Path(raw).expanduser()
            return (path if path.is_absolute() else workspace.cwd / path).exists()
        except (OSError, ValueError):  # a name too long, a NUL byte, a loop of links
            return False

    return exists


def build_prompt(
    text: str,
    workspace: Workspace,
    model: Model,
    *,
    extra: Sequence[str] = (),
    files: Sequence[str] = (),
) -> tuple[Prompt, list[str]]:
    """The prompt for ``text`` with the files it mentions and ``files`` (``--attach``)
    attached, and notes for the user.

    ``extra`` is text sent after ``text`` that is not searched for mentions (piped input).
    Without attachments the prompt stays plain text.
    """
    full = "\n\n".join(part for part in (text, *extra) if part)
    paths = [*find_mentions(text, _exists_in(workspace)), *files]
    if not paths:
        return full, []
    attached = attach(workspace, paths, model)
    content: list[UserContent] = [TextContent(full), *attached.blocks]
    return UserMessage(content), attached.notes


def prompt_text(prompt: Prompt) -> str:
    """The text of ``prompt`` without its attachments (what the user typed)."""
    if isinstance(prompt, str):
        return prompt
    content = prompt.content
    if isinstance(content, str):
        return content
    first = content[0] if content else None
    return first.text if isinstance(first, TextContent) else ""
