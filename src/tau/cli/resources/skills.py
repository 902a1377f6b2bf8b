"""Skills (the Agent Skills standard, as pi reads it): a folder with a ``SKILL.md`` whose front
matter names the skill and says when to use it.

Discovery reads front matter only (:func:`~tau.cli.resources.frontmatter.read_head`): the body is
read by the model, with ``read``, when a task matches the description, or by ``/skill:name``.
A skill root holds ``SKILL.md`` folders at any depth (a folder with one is not searched further)
and plain ``.md`` files at its top. Problems (no description, a name against the standard's
rules) are collected, never raised: a broken skill must not stop a session.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import escape

from tau.cli.resources.frontmatter import (
    FrontMatterError,
    read_head,
    read_text,
    strip_front_matter,
)

NAME_RULE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
"""The standard's names: lowercase letters, digits, single hyphens inside."""
MAX_NAME = 64
MAX_DESCRIPTION = 1024
MAX_DEPTH = 5
"""How deep below a skill root a ``SKILL.md`` is looked for."""
MAX_ENTRIES = 5000
"""Directory entries looked at per root: a root that is someone's whole home stays cheap."""
_SKIPPED_DIRS = frozenset({"node_modules", "__pycache__", ".git", ".venv", "venv"})


@dataclass(frozen=True, slots=True)
class Problem:
    """A resource that was skipped or loaded with a warning, and why."""

    path: Path
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


@dataclass(frozen=True, slots=True)
class Skill:
    """One discovered skill: only what the system prompt shows (the body stays on disk)."""

    name: str
    description: str
    path: Path
    """The ``SKILL.md`` (or ``.md``) file."""
    source: str
    """Where it was found: ``project``, ``user``, ``pi``, a package name, ``path``."""
    hidden: bool = False
    """``disable-model-invocation: true``: left out of the system prompt, ``/skill:name`` only."""

    @property
    def base_dir(self) -> Path:
        """The folder the skill's relative paths start from."""
        return self.path.parent

    def body(self) -> str:
        """The skill's instructions (read now, on demand; at most :data:`MAX_BODY` bytes)."""
        return strip_front_matter(read_text(self.path)).strip()

    def expand(self, argument: str = "") -> str:
        """The message ``/skill:name ARGUMENT`` sends: the instructions in a ``<skill>`` block
        (pi's form, which pi recognises in a session file), then the argument."""
        block = (
            f'<skill name="{self.name}" location="{self.path}">\n'
            f"References are relative to {self.base_dir}.\n\n{self.body()}\n</skill>"
        )
        return f"{block}\n\n{argument}" if argument else block


def skill_files(root: Path) -> Iterator[Path]:
    """The skill files under ``root``: top-level ``.md`` files and ``SKILL.md`` at any depth."""
    seen = 0
    pending: list[tuple[Path, int]] = [(root, 0)]
    while pending:
        directory, depth = pending.pop(0)
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError:
            continue
        seen += len(entries)
        if seen > MAX_ENTRIES:
            return
        if depth > 0 and any(e.name == "SKILL.md" and _is_file(e) for e in entries):
            yield Path(directory) / "SKILL.md"
            continue
        for entry in entries:
            try:
                is_dir = entry.is_dir()
            except OSError:
                continue
            if is_dir:
                hidden = entry.name.startswith(".") or entry.name in _SKIPPED_DIRS
                if not hidden and depth < MAX_DEPTH:
                    pending.append((Path(entry.path), depth + 1))
            elif depth == 0 and entry.name.endswith(".md") and _is_file(entry):
                yield Path(entry.path)


def _is_file(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_file()
    except OSError:
        return False


def load_skill(path: Path, source: str) -> tuple[Skill | None, list[Problem]]:
    """The skill in ``path`` (None when it cannot be used) and what is wrong with it."""
    try:
        fields = read_head(path).fields
    except (OSError, FrontMatterError) as exc:
        return None, [Problem(path, f"skipped: {_reason(exc)}")]
    folder = path.parent.name if path.name == "SKILL.md" else path.stem
    name = fields.get("name", "").strip() or folder
    description = " ".join(fields.get("description", "").split())
    if not description:
        return None, [Problem(path, "skipped: the front matter has no description")]
    if any(c.isspace() for c in name) or "/" in name:
        return None, [Problem(path, f"skipped: the name {name!r} has a space or a slash")]
    problems = []
    if len(name) > MAX_NAME or not NAME_RULE.match(name):
        problems.append(
            Problem(path, f"the name {name!r} is not 1-64 lowercase letters, digits and hyphens")
        )
    if path.name == "SKILL.md" and name != folder:
        problems.append(Problem(path, f"the name {name!r} differs from its folder {folder!r}"))
    if len(description) > MAX_DESCRIPTION:
        problems.append(Problem(path, f"the description is over {MAX_DESCRIPTION} characters"))
    hidden = fields.get("disable-model-invocation", "").lower() == "true"
    return Skill(name, description, path, source, hidden), problems


def _reason(exc: Exception) -> str:
    return exc.strerror or str(exc) if isinstance(exc, OSError) else str(exc)


def skills_prompt(skills: list[Skill]) -> str:
    """The system prompt's list of skills (pi's wording and XML form): names, descriptions and
    locations only."""
    shown = [s for s in skills if not s.hidden]
    if not shown:
        return ""
    lines = [
        "The following skills provide specialized instructions for specific tasks.",
        "Use the read tool to load a skill's file when the task matches its description.",
        "When a skill file references a relative path, resolve it against the skill directory "
        "(the folder of its file) and use that absolute path in tool commands.",
        "",
        "<available_skills>",
    ]
    for skill in shown:
        lines += [
            "  <skill>",
            f"    <name>{escape(skill.name)}</name>",
            f"    <description>{escape(skill.description)}</description>",
            f"    <location>{escape(str(skill.path))}</location>",
            "  </skill>",
        ]
    lines.append("</available_skills>")
    return "\n".join(lines)
