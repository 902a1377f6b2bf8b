"""Hostile skill and template files: discovery must finish, report, and never hang or read
without bound."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tau.cli.resources import ResourceError, load_resources
from tau.cli.resources.frontmatter import MAX_BODY, MAX_HEAD_BYTES


@pytest.fixture
def cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    work = tmp_path / "work"
    (work / ".git").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("TAU_HOME", str(tmp_path / "home" / "tau"))
    return work


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_fifos_named_like_resources_are_not_opened(cwd: Path) -> None:
    skills = cwd / ".tau" / "skills"
    (skills / "pipe").mkdir(parents=True)
    os.mkfifo(skills / "pipe" / "SKILL.md")
    os.mkfifo(skills / "top.md")
    (cwd / ".tau" / "prompts").mkdir()
    os.mkfifo(cwd / ".tau" / "prompts" / "fifo.md")
    found = load_resources(cwd)  # returns: nothing waits for a writer
    assert found.skills == [] and found.templates == []


def test_front_matter_that_never_closes_is_read_only_so_far(cwd: Path) -> None:
    folder = cwd / ".tau" / "skills" / "endless"
    folder.mkdir(parents=True)
    with (folder / "SKILL.md").open("w") as file:
        file.write("---\nname: endless\n")
        file.write(("description: x\n" * 1000) * 100)  # 1.5 MB, no closing ---
    one_line = cwd / ".tau" / "skills" / "wide"
    one_line.mkdir()
    (one_line / "SKILL.md").write_text("---\ndescription: " + "y" * (4 * MAX_HEAD_BYTES))
    found = load_resources(cwd)
    assert found.skills == []
    assert sorted(p.path.parent.name for p in found.problems) == ["endless", "wide"]


def test_binary_and_unreadable_files(cwd: Path) -> None:
    skills = cwd / ".tau" / "skills"
    (skills / "binary").mkdir(parents=True)
    (skills / "binary" / "SKILL.md").write_bytes(b"---\nname: \xff\xfe\x00\n---\n")
    found = load_resources(cwd)
    assert found.skills == []
    assert "not UTF-8" in str(found.problems[0])
    if sys.platform != "win32" and os.geteuid() != 0:
        (skills / "locked").mkdir()
        locked = skills / "locked" / "SKILL.md"
        locked.write_text("---\ndescription: d\n---\n")
        locked.chmod(0)
        found = load_resources(cwd)
        assert any("locked" in str(p) and "Permission denied" in str(p) for p in found.problems)


def test_link_loops_and_deep_trees_end(cwd: Path) -> None:
    skills = cwd / ".tau" / "skills"
    skills.mkdir(parents=True)
    (skills / "loop").symlink_to(skills, target_is_directory=True)
    deep = skills
    for level in range(40):
        deep = deep / f"d{level}"
    deep.mkdir(parents=True)
    (deep / "SKILL.md").write_text("---\nname: d39\ndescription: too deep\n---\n")
    found = load_resources(cwd)
    assert found.skills == []


def test_a_huge_template_is_sent_cut(cwd: Path) -> None:
    prompts = cwd / ".tau" / "prompts"
    prompts.mkdir(parents=True)
    (prompts / "huge.md").write_text("a" * (MAX_BODY * 3))
    found = load_resources(cwd)
    assert len(found.expand("/huge")) == MAX_BODY
    (prompts / "huge.md").unlink()
    with pytest.raises(ResourceError, match=r"^/huge: cannot read .*huge.md"):
        found.expand("/huge")
