"""Issue 24 item 6: ``edit``/``write`` through a hard link change no file outside the workspace.

A hard link already in the workspace (``ws/alias.txt``, the same file as ``outside/secret.txt``)
let ``write`` and ``edit`` change the outside file. A regular file with more than one link is
now refused (the error says why) unless it is inside an ``--allow-path`` root.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from .tool_calls import call, text_of, tool

SECRET = "outside the project: never changed by a tool\n"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text(SECRET)
    root = tmp_path / "ws"
    root.mkdir()
    os.link(outside / "secret.txt", root / "alias.txt")
    return root


def test_write_refuses_a_hard_linked_file(ws: Path) -> None:
    with pytest.raises(PermissionError, match=r"alias\.txt: it has 2 hard links"):
        call(tool("write", ws), {"path": "alias.txt", "content": "overwritten\n"})
    assert (ws.parent / "outside" / "secret.txt").read_text() == SECRET


def test_edit_refuses_a_hard_linked_file(ws: Path) -> None:
    params = {"path": "alias.txt", "oldText": "never changed", "newText": "CHANGED"}
    with pytest.raises(PermissionError, match=r"--allow-path"):
        call(tool("edit", ws), params)
    assert (ws.parent / "outside" / "secret.txt").read_text() == SECRET


def test_an_allowed_root_may_hold_hard_linked_files(ws: Path, tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    os.link(tmp_path / "outside" / "secret.txt", shared / "linked.txt")
    out = text_of(call(tool("write", ws, (shared,)), {"path": str(shared / "linked.txt"),
                                                       "content": "vouched for\n"}))  # fmt: skip
    assert "Successfully wrote" in out
    assert (shared / "linked.txt").read_text() == "vouched for\n"
    # A plain file in the workspace is written as before.
    out = text_of(call(tool("write", ws), {"path": "new.txt", "content": "fine\n"}))
    assert (ws / "new.txt").read_text() == "fine\n"
