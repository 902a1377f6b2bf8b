"""The interactive completer: command names, any command's own argument completion, ``@``
paths within the allowed roots."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document

from tau.cli.commands import CommandContext
from tau.cli.completion import TauCompleter
from tau.cli.registry import SLASH_COMMANDS, Arg, Command, Registry
from tau.cli.tools import Workspace


def _complete(completer: TauCompleter, text: str) -> list[tuple[str, int]]:
    found = completer.get_completions(Document(text), CompleteEvent(completion_requested=True))
    return [(c.text, c.start_position) for c in found]


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    work = tmp_path / "work"
    (work / "src" / "pkg").mkdir(parents=True)
    (work / "src" / "main.py").write_text("")
    (work / "my notes.txt").write_text("")
    (work / ".env").write_text("")
    (tmp_path / "outside.txt").write_text("")
    return Workspace(work)


@pytest.fixture
def fake_command() -> Iterator[list[str]]:
    seen: list[str] = []

    def complete(ctx: CommandContext, partial: str) -> list[str]:
        seen.append(partial)
        return [name for name in ("alpha", "beta", "alphabet") if name.startswith(partial)]

    SLASH_COMMANDS.command(
        "fake-model",
        "switch the fake model\nsecond line",
        args=[Arg("name", metavar="NAME", complete=complete)],
    )(lambda ctx, argument: None)
    try:
        yield seen
    finally:
        SLASH_COMMANDS.remove("fake-model")


def _completer(workspace: Workspace) -> TauCompleter:
    context: Any = object()
    local: Registry[Any] = Registry("slash", "/")
    local.add(Command("follow", "queue a follow-up"))
    local.add(Command("exit", "x"))
    return TauCompleter(workspace, lambda: context, (SLASH_COMMANDS, local))


def test_command_names_from_the_registry_and_the_session(
    workspace: Workspace, fake_command: list[str]
) -> None:
    completer = _completer(workspace)
    assert _complete(completer, "/us") == [("/usage", -3)]
    assert _complete(completer, "/fol") == [("/follow", -4)]  # /fork starts "/fo" too
    assert _complete(completer, "/fake") == [("/fake-model", -5)]
    names = [text for text, _ in _complete(completer, "/")]
    assert {"/usage", "/follow", "/exit", "/fake-model"} <= set(names)


def test_a_commands_own_completion_is_used_for_its_argument(
    workspace: Workspace, fake_command: list[str]
) -> None:
    completer = _completer(workspace)
    assert _complete(completer, "/fake-model al") == [("alpha", -2), ("alphabet", -2)]
    assert fake_command == ["al"]
    assert _complete(completer, "/usage x") == []  # no completion of its own


def test_at_paths_one_level_at_a_time(workspace: Workspace) -> None:
    completer = _completer(workspace)
    assert _complete(completer, "read @sr") == [("@src/", -3)]
    assert _complete(completer, "read @src/") == [("@src/main.py", -5), ("@src/pkg/", -5)]
    # A name with a space is quoted; hidden files only when asked for.
    assert _complete(completer, "@my") == [('@"my notes.txt"', -3)]
    assert _complete(completer, "@.e") == [("@.env", -3)]
    assert all(".env" not in text for text, _ in _complete(completer, "@"))
    assert _complete(completer, 'see @"my no') == [('@"my notes.txt"', -7)]
    assert _complete(completer, "email me@sr") == []


def test_at_paths_stay_inside_the_allowed_roots(workspace: Workspace, tmp_path: Path) -> None:
    completer = _completer(workspace)
    assert _complete(completer, "@../out") == []
    assert _complete(completer, f"@{tmp_path}/out") == []
    allowed = _completer(Workspace(workspace.cwd, (tmp_path,)))
    assert _complete(allowed, "@../out") == [("@../outside.txt", -7)]
