"""Item 1: every read-only tool applies the working-directory policy to every file it opens,
files found by walking included; a symlink that resolves outside is skipped, not followed."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tau.cli.tools.paths import PathNotAllowedError

from .tool_calls import call, text_of, tool


def _layout(tmp_path: Path, *, git: bool) -> Path:
    ws = tmp_path / "ws"
    outside = tmp_path / "outside"
    ws.mkdir()
    outside.mkdir()
    (outside / "secret.txt").write_text("TOPSECRET api key\n")
    (outside / "nested").mkdir()
    (outside / "nested" / "deep.txt").write_text("TOPSECRET nested\n")
    (ws / "notes.txt").write_text("public TOPSECRET mention\n")
    (ws / "link").symlink_to("../outside/secret.txt")
    (ws / "abs-link").symlink_to(outside / "secret.txt")
    (ws / "dir-link").symlink_to("../outside/nested", target_is_directory=True)
    if git:
        subprocess.run(["git", "init", "-q", str(ws)], check=True, timeout=30)
    return ws


@pytest.mark.parametrize("git", [False, True], ids=["plain", "git"])
def test_grep_does_not_follow_symlinks_out_of_the_workspace(tmp_path: Path, git: bool) -> None:
    ws = _layout(tmp_path, git=git)
    out = text_of(call(tool("grep", ws), {"pattern": "TOPSECRET"}))
    assert "notes.txt:1: public TOPSECRET mention" in out
    assert "api key" not in out and "nested" not in out, out


@pytest.mark.parametrize("git", [False, True], ids=["plain", "git"])
def test_find_skips_symlinks_out_of_the_workspace(tmp_path: Path, git: bool) -> None:
    ws = _layout(tmp_path, git=git)
    out = text_of(call(tool("find", ws), {"pattern": "*"}))
    assert out.splitlines() == ["notes.txt"]


@pytest.mark.parametrize("name", ["read", "grep", "find", "ls"])
def test_naming_the_link_directly_is_refused(tmp_path: Path, name: str) -> None:
    ws = _layout(tmp_path, git=False)
    params = {"path": "link"} if name != "grep" else {"path": "link", "pattern": "x"}
    if name == "find":
        params = {"path": "dir-link", "pattern": "*"}
    if name == "ls":
        params = {"path": "dir-link"}
    with pytest.raises(PathNotAllowedError, match="outside the working directory"):
        call(tool(name, ws), params)


def test_links_into_an_allowed_root_are_followed(tmp_path: Path) -> None:
    ws = _layout(tmp_path, git=False)
    allowed = ((tmp_path / "outside").resolve(),)
    out = text_of(call(tool("grep", ws, allowed), {"pattern": "TOPSECRET"}))
    assert "link:1: TOPSECRET api key" in out
    assert "abs-link:1: TOPSECRET api key" in out
