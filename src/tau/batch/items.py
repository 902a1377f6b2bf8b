"""A batch's input: items ``{"id", "prompt"}`` or ``{"id", "context"}``, from dicts or a JSONL file.

Everything is read and checked before anything runs, so a mistake costs nothing: every
malformed item is reported at once (a JSONL file's by line number, an iterable's by position),
and so is every duplicate id. A JSONL file must be a regular file of UTF-8 lines (a leading
byte-order mark is allowed), each at most :data:`MAX_LINE_BYTES`; blank lines are skipped. An
id is a non-empty string (a whole number is taken as its decimal string); keys other than
``id``, ``prompt`` and ``context`` are ignored, so a dataset's own fields (an expected answer)
may stay in the file. The whole input is held in memory while the batch runs.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tau.ai import Context, SerializationError, ToolResultMessage, UserMessage, load_context

__all__ = ["MAX_LINE_BYTES", "BatchInputError", "BatchItem", "load_items"]

MAX_LINE_BYTES = 64 * 1024 * 1024
"""The longest input line read (a context with images inline can be large)."""
MAX_REPORTED = 20
"""Problems listed in a :class:`BatchInputError` (the rest are counted)."""
_READ_CHUNK = 1 << 20
_BOM = b"\xef\xbb\xbf"


class BatchInputError(ValueError):
    """The input cannot run as given: each problem, with its line or position, in the text.

    ``problems`` lists them all as ``(where, what)`` pairs (``where`` is ``"line 7"`` or
    ``"item 7"``).
    """

    def __init__(self, source: str, problems: list[tuple[str, str]]) -> None:
        self.source = source
        self.problems = problems
        shown = [f"  {where}: {what}" for where, what in problems[:MAX_REPORTED]]
        if len(problems) > MAX_REPORTED:
            shown.append(f"  … and {len(problems) - MAX_REPORTED} more")
        count = f"{len(problems)} problem{'s' if len(problems) != 1 else ''}"
        super().__init__(f"{source}: {count}, nothing was run:\n" + "\n".join(shown))


@dataclass(frozen=True, slots=True)
class BatchItem:
    """One input: an id, and either a prompt or a whole context to continue from."""

    id: str
    prompt: str | None = None
    """Text sent as one user message."""
    context: Context | None = None
    """A conversation ending in a user message or tool result; its system prompt, if any,
    replaces the agent's (the agent's own tools are what runs: a context's tool schemas are
    not used)."""

    def __post_init__(self) -> None:
        if (self.prompt is None) == (self.context is None):
            raise ValueError(f"item {self.id!r}: give exactly one of prompt and context")


def load_items(
    inputs: str | os.PathLike[str] | Iterable[Mapping[str, Any] | BatchItem],
) -> tuple[list[BatchItem], str]:
    """The items of ``inputs`` (a JSONL path, or an iterable of dicts or :class:`BatchItem`), and
    a name for the source; raises :class:`BatchInputError` naming every problem."""
    if isinstance(inputs, str | os.PathLike):
        path = Path(inputs)
        return _check_ids(_read_jsonl(path), str(path), "line"), str(path)
    if isinstance(inputs, Mapping | bytes):
        raise TypeError("inputs must be a JSONL path or an iterable of items, not one mapping")
    numbered: list[tuple[int, BatchItem | str]] = []
    for number, raw in enumerate(inputs, 1):
        numbered.append((number, raw if isinstance(raw, BatchItem) else _item(raw)))
    return _check_ids(numbered, "inputs", "item"), "inputs"


def _check_ids(
    numbered: list[tuple[int, BatchItem | str]], source: str, unit: str
) -> list[BatchItem]:
    problems: list[tuple[str, str]] = []
    items: list[BatchItem] = []
    first_seen: dict[str, int] = {}
    for number, parsed in numbered:
        if isinstance(parsed, str):
            problems.append((f"{unit} {number}", parsed))
            continue
        earlier = first_seen.setdefault(parsed.id, number)
        if earlier != number:
            problems.append(
                (f"{unit} {number}", f"duplicate id {parsed.id!r} (first at {unit} {earlier})")
            )
            continue
        items.append(parsed)
    if problems:
        raise BatchInputError(source, problems)
    return items


def _item(raw: object) -> BatchItem | str:
    """The item, or what is wrong with it."""
    if not isinstance(raw, Mapping):
        return f"an item must be a JSON object, not {_kind(raw)}"
    ident = raw.get("id")
    if isinstance(ident, int) and not isinstance(ident, bool):
        ident = str(ident)
    if not isinstance(ident, str) or not ident:
        return '"id" must be a non-empty string' if "id" in raw else 'no "id"'
    prompt, context = raw.get("prompt"), raw.get("context")
    if (prompt is None) == (context is None):
        return f'item {ident!r}: give exactly one of "prompt" and "context"'
    if prompt is not None:
        if not isinstance(prompt, str):
            return f'item {ident!r}: "prompt" must be a string, not {_kind(prompt)}'
        if not prompt.strip():
            # A provider refuses an empty turn: one failed (and paid-for) request per item.
            return f'item {ident!r}: "prompt" is empty'
        return BatchItem(ident, prompt=prompt)
    if not isinstance(context, Context):
        try:
            context = load_context(context)
        except (SerializationError, TypeError, ValueError) as exc:
            return f"item {ident!r}: {exc}"
    if not context.messages or not isinstance(
        context.messages[-1], UserMessage | ToolResultMessage
    ):
        return f"item {ident!r}: the context must end with a user message or a tool result"
    return BatchItem(ident, context=context)


def _kind(value: object) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}.get(
        type(value), "null" if value is None else "a number"
    )


def _read_jsonl(path: Path) -> list[tuple[int, BatchItem | str]]:
    problems: list[tuple[str, str]] = []
    try:
        # O_NONBLOCK: opening a FIFO with no writer would otherwise wait forever.
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise BatchInputError(str(path), [("file", _os_error(exc))]) from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            what = (
                "a FIFO"
                if stat.S_ISFIFO(mode)
                else "a directory"
                if stat.S_ISDIR(mode)
                else "not a regular file"
            )
            raise BatchInputError(
                str(path),
                [("file", f"{what}: the input is read whole before anything runs, so give a file")],
            )
        os.set_blocking(fd, True)
        with os.fdopen(fd, "rb", closefd=False) as file:
            return list(_parse_lines(file))
    except OSError as exc:
        problems.append(("file", _os_error(exc)))
        raise BatchInputError(str(path), problems) from None
    finally:
        os.close(fd)


def _parse_lines(file: Any) -> Iterator[tuple[int, BatchItem | str]]:
    number = 0
    while True:
        line = file.readline(MAX_LINE_BYTES + 1)
        if not line:
            return
        number += 1
        if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):
            _skip_rest_of_line(file)
            yield number, f"longer than the limit of {MAX_LINE_BYTES:,} bytes"
            continue
        if number == 1 and line.startswith(_BOM):
            line = line[len(_BOM) :]
        if not line.strip():
            continue
        line = line.rstrip(b"\r\n")
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError as exc:
            yield (
                number,
                f"not valid UTF-8 (byte 0x{line[exc.start]:02x} at column {exc.start + 1})",
            )
            continue
        try:
            raw = json.loads(text)
        except json.JSONDecodeError as exc:
            # A line is one line: its column says where, the decoder's "line 1" would not.
            yield number, f"not valid JSON: {exc.msg} at column {exc.colno}"
            continue
        except RecursionError:
            yield number, "not valid JSON: nested too deeply"
            continue
        yield number, _item(raw)


def _skip_rest_of_line(file: Any) -> None:
    while True:
        chunk = file.readline(_READ_CHUNK)
        if not chunk or chunk.endswith(b"\n"):
            return


def _os_error(exc: OSError) -> str:
    return f"cannot read it: {exc.strerror or exc}"
