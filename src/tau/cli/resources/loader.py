"""Where skills, prompt templates and context files are found, and the slash commands they add.

Skills: ``.tau/skills/`` and ``.agents/skills/`` in the working directory and each directory
above it up to the repository root (the nearest first), pi's ``.pi/skills/`` in the working
directory, then ``$TAU_HOME/skills/``, ``~/.agents/skills/`` and pi's ``~/.pi/agent/skills/``,
then installed packages' ``skills/``. Prompt templates: ``.tau/prompts/`` and ``.pi/prompts/`` in
the working directory, ``$TAU_HOME/prompts/``, ``~/.pi/agent/prompts/``, then packages'
``prompts/``. On a name found twice, the first wins and the other is reported. Context files:
``AGENTS.md`` (else ``CLAUDE.md``) of ``$TAU_HOME``, then of each directory from the root down
to the working directory.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tau.cli.registry import Command, Registry
from tau.cli.resources.skills import Problem, Skill, load_skill, skill_files, skills_prompt
from tau.cli.resources.templates import PromptTemplate, load_template, template_files
from tau.cli.tools.paths import Workspace

CONTEXT_FILES = ("AGENTS.md", "CLAUDE.md")
"""The context file names of a directory, in order: the first found is used."""

_reported: set[str] = set()


class ResourceError(RuntimeError):
    """A skill or template that cannot be read when it is used."""


@dataclass(frozen=True, slots=True)
class ResourceOptions:
    """What the command line asks of resources (``--no-skills``, ``--append-system-prompt``…)."""

    skills: bool = True
    templates: bool = True
    context_files: bool = True
    append_system: str | None = None
    """Text added after the system prompt (``--append-system-prompt``)."""
    extra_roots: tuple[tuple[Path, str], ...] = ()
    """More package roots (a folder with ``skills/`` or ``prompts/``) and their names."""
    disabled: frozenset[str] = frozenset()
    """``skill:NAME`` and ``template:NAME`` left out (``tau config disable``)."""


def _home() -> Path:
    from tau.cli.config import tau_home

    return tau_home()


def project_dirs(cwd: Path) -> list[Path]:
    """``cwd`` and the directories above it up to the repository root (the one holding
    ``.git``), or up to the filesystem root outside a repository; the nearest first."""
    dirs: list[Path] = []
    for directory in [cwd, *cwd.parents]:
        dirs.append(directory)
        if (directory / ".git").exists():
            return dirs
    return dirs


def skill_roots(cwd: Path, packages: Iterable[tuple[Path, str]] = ()) -> list[tuple[Path, str]]:
    """Each folder skills are looked for in, in precedence order, with its source's name."""
    user = Path.home()
    roots: list[tuple[Path, str]] = []
    for directory in project_dirs(cwd):
        roots += [(directory / ".tau" / "skills", "project")]
        roots += [(directory / ".agents" / "skills", "project")]
    roots += [(cwd / ".pi" / "skills", "project")]
    roots += [(_home() / "skills", "user"), (user / ".agents" / "skills", "user")]
    roots += [(user / ".pi" / "agent" / "skills", "pi")]
    roots += [(root / "skills", name) for root, name in packages]
    return roots


def template_roots(cwd: Path, packages: Iterable[tuple[Path, str]] = ()) -> list[tuple[Path, str]]:
    """Each folder prompt templates are looked for in, in precedence order."""
    roots = [(cwd / ".tau" / "prompts", "project"), (cwd / ".pi" / "prompts", "project")]
    roots += [(_home() / "prompts", "user")]
    roots += [(Path.home() / ".pi" / "agent" / "prompts", "pi")]
    roots += [(root / "prompts", name) for root, name in packages]
    return roots


def context_files(cwd: Path) -> list[Path]:
    """``$TAU_HOME``'s context file, then each directory's from the root down to ``cwd``."""
    found: list[Path] = []
    for directory in [_home(), *reversed(cwd.parents), cwd]:
        for name in CONTEXT_FILES:
            candidate = directory / name
            if candidate.is_file():
                if candidate not in found:
                    found.append(candidate)
                break
    return found


@dataclass
class Resources:
    """The skills, templates and context files of a session, and what was wrong with others."""

    skills: list[Skill] = field(default_factory=list)
    templates: list[PromptTemplate] = field(default_factory=list)
    context_files: list[Path] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    append_system: str | None = None

    def skill(self, name: str) -> Skill | None:
        """The skill called ``name``."""
        return next((s for s in self.skills if s.name == name), None)

    def template(self, name: str) -> PromptTemplate | None:
        """The template called ``name``."""
        return next((t for t in self.templates if t.name == name), None)

    def open_to(self, workspace: Workspace) -> None:
        """Let the tools reach each skill's folder (the model opens ``SKILL.md`` and what it
        refers to with ``read``), as ``--allow-path`` would."""
        # Lexically under the working directory needs no resolving (a link out is resolved).
        outside = [
            s.base_dir
            for s in self.skills
            if not (s.base_dir.is_relative_to(workspace.cwd) and not s.base_dir.is_symlink())
            and not workspace.contains(s.base_dir.resolve())
        ]
        added = [d for d in dict.fromkeys(outside) if d not in workspace.allowed]
        if added:
            workspace.allowed = (*workspace.allowed, *added)

    def skills_prompt(self) -> str:
        """The system prompt's part about skills (empty without any)."""
        return skills_prompt(self.skills)

    def expand(self, text: str) -> str:
        """A message with its ``/skill:name args`` or ``/template args`` expanded (any other
        text as it is: print and RPC modes send an unknown ``/word`` to the model)."""
        if not text.startswith("/"):
            return text
        name, _, argument = text[1:].partition(" ")
        name = name.strip()
        argument = argument.strip()
        found: Skill | PromptTemplate | None
        if name.startswith("skill:"):
            found = self.skill(name.removeprefix("skill:"))
        else:
            found = self.template(name)
        if found is None:
            return text
        try:
            return found.expand(argument)
        except OSError as exc:
            raise ResourceError(
                f"/{name}: cannot read {found.path}: {exc.strerror or exc}"
            ) from None

    def fill(self, registry: Registry[Any], reserved: Iterable[str] = ()) -> list[str]:
        """Declare a slash command for each template and skill in ``registry``; a template
        named like another command (``reserved``, or already in ``registry``) is reported and
        left out. Returns the names declared."""
        taken = set(reserved) | set(registry.names())
        declared: list[str] = []
        for template in self.templates:
            if template.name in taken:
                self.problems.append(
                    Problem(template.path, f"skipped: /{template.name} is already a command")
                )
                continue
            taken.add(template.name)
            registry.add(Command(template.name, template.description, _sender(template.expand)))
            declared.append(template.name)
        for skill in self.skills:
            name = f"skill:{skill.name}"
            if name not in taken:
                registry.add(Command(name, skill.description, _sender(skill.expand)))
                declared.append(name)
        return declared


def _sender(expand: Callable[[str], str]) -> Callable[[Any, str], Any]:
    async def send(ctx: Any, argument: str) -> None:
        send_text = getattr(ctx, "send", None)
        if send_text is None:
            raise RuntimeError("this front end cannot send messages from a command")
        await send_text(expand(argument))

    return send


def load_resources(cwd: Path, options: ResourceOptions | None = None) -> Resources:
    """Discover the session's resources (front matter only: no skill body is read)."""
    options = options or ResourceOptions()
    resources = Resources(append_system=options.append_system)
    if options.context_files:
        resources.context_files = context_files(cwd)
    seen: set[tuple[int, int]] = set()
    if options.skills:
        names: dict[str, Path] = {}
        for root, source in skill_roots(cwd, options.extra_roots):
            for path in skill_files(root):
                key = _file_key(path)
                if key in seen:
                    continue  # the same file through another root or a link
                seen.add(key)
                skill, problems = load_skill(path, source)
                resources.problems += problems
                if skill is None:
                    continue
                if f"skill:{skill.name}" in options.disabled:
                    continue
                if skill.name in names:
                    message = (
                        f"skipped: skill {skill.name!r} is already defined by {names[skill.name]}"
                    )
                    resources.problems.append(Problem(path, message))
                    continue
                names[skill.name] = path
                resources.skills.append(skill)
    if options.templates:
        by_name: dict[str, Path] = {}
        for root, source in template_roots(cwd, options.extra_roots):
            for path in template_files(root):
                key = _file_key(path)
                if key in seen:
                    continue
                seen.add(key)
                template, problems = load_template(path, source)
                resources.problems += problems
                if template is None or f"template:{template.name}" in options.disabled:
                    continue
                if template.name in by_name:
                    message = (
                        f"skipped: template /{template.name} is already defined by "
                        f"{by_name[template.name]}"
                    )
                    resources.problems.append(Problem(path, message))
                    continue
                by_name[template.name] = path
                resources.templates.append(template)
    return resources


def _file_key(path: Path) -> tuple[int, int]:
    """The file's identity (device, inode): one stat, where resolving a path takes one per
    component."""
    try:
        info = os.stat(path)
    except OSError:
        return (-1, hash(path))
    return (info.st_dev, info.st_ino)


def report_problems(
    problems: Iterable[Problem], write: Callable[[str], None] | None = None
) -> None:
    """Warn about each problem once per process (``/reload`` repeats none already shown)."""
    for problem in problems:
        report_line(str(problem), write)


def report_line(line: str, write: Callable[[str], None] | None = None) -> None:
    """``tau: warning: LINE`` on stderr (or to ``write``), unless it was said already."""
    if line in _reported:
        return
    _reported.add(line)
    if write is None:
        sys.stderr.write(f"tau: warning: {line}\n")
        sys.stderr.flush()
    else:
        write(f"tau: warning: {line}")
