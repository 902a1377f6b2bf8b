"""Completion in the interactive session: slash commands, their arguments, and ``@`` paths.

Command names come from the registries the session dispatches to (the shared
:data:`~tau.cli.registry.SLASH_COMMANDS` and the session's own); a command's argument is
completed by its declared argument's ``complete``, whatever the command is. ``@`` completes paths the tools may reach (the working directory and ``--allow-path``
roots), one directory level at a time; a name with a space is written ``@"…"``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document

from tau.cli.commands import CommandContext
from tau.cli.registry import Registry
from tau.cli.tools.paths import Workspace

MAX_PATH_COMPLETIONS = 200
"""A directory with more matching entries shows only the first ones (in name order)."""


class TauCompleter(Completer):
    """Completes ``/command``, ``/command argument`` and ``@path``."""

    def __init__(
        self,
        workspace: Workspace,
        context: Callable[[], CommandContext],
        registries: Sequence[Registry[Any]],
    ) -> None:
        self.workspace = workspace
        self.context = context
        self.registries = registries

    def get_completions(
        self, document: Document, complete_event: CompleteEvent
    ) -> Iterator[Completion]:
        """The completions for the text before the cursor."""
        before = document.text_before_cursor
        if before.startswith("/") and "\n" not in before:
            yield from self._command(before)
            return
        word = _last_word(before)
        if word.startswith("@"):
            yield from self._paths(word)

    def _command(self, before: str) -> Iterable[Completion]:
        name, space, argument = before[1:].partition(" ")
        if not space:
            for registry in self.registries:
                for candidate, help in registry.complete_names(name):
                    yield Completion(f"/{candidate}", -len(before), display_meta=_first_line(help))
            return
        found = next((r.get(name) for r in self.registries if name in r), None)
        complete = next((a.complete for a in found.args if a.complete), None) if found else None
        if complete is None:
            return
        partial = argument.lstrip()
        try:
            candidates = list(complete(self.context(), partial))
        except Exception:  # a command's completion must never break typing
            return
        for candidate in candidates:
            yield Completion(candidate, -len(partial))

    def _paths(self, word: str) -> Iterable[Completion]:
        quoted = word.startswith('@"')
        typed = word[2:] if quoted else word[1:]
        head, _, prefix = typed.rpartition("/")
        directory = (head + "/") if head or typed.startswith("/") else ""
        base = Path(os.path.expanduser(directory or ".")) if directory else self.workspace.cwd
        if not base.is_absolute():
            base = self.workspace.cwd / base
        try:
            resolved = base.resolve()
            if not self.workspace.contains(resolved):
                return
            entries = sorted(
                (e for e in os.scandir(resolved) if _visible(e.name, prefix)),
                key=lambda e: e.name,
            )[:MAX_PATH_COMPLETIONS]
        except (OSError, RuntimeError, ValueError):
            return
        for entry in entries:
            try:
                is_dir = entry.is_dir()
            except OSError:
                continue
            path = f"{directory}{entry.name}" + ("/" if is_dir else "")
            # A name with a space is quoted; the quote stays open in a directory, to go on.
            quote = quoted or " " in path
            text = f'@"{path}' + ("" if is_dir else '"') if quote else f"@{path}"
            yield Completion(text, -len(word), display=entry.name + ("/" if is_dir else ""))


def _visible(name: str, prefix: str) -> bool:
    return name.startswith(prefix) and (prefix.startswith(".") or not name.startswith("."))


def _last_word(text: str) -> str:
    """The word the cursor is in: from the last whitespace, or from ``@"`` when one is open."""
    line = text.rsplit("\n", 1)[-1]
    quote = line.rfind('@"')
    if quote >= 0 and line.count('"', quote) == 1 and (quote == 0 or line[quote - 1].isspace()):
        return line[quote:]
    parts = line.split()
    return parts[-1] if parts and not line[-1:].isspace() else ""


def _first_line(text: str) -> str:
    return text.split("\n", 1)[0]
