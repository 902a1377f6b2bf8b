"""The default system prompt of the ``tau`` command (after pi's coding-agent prompt, shortened)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from pathlib import Path

from tau.agent import AgentTool

_CONTEXT_FILES = ("AGENTS.md", "CLAUDE.md")


def _context_files(cwd: Path) -> list[Path]:
    """AGENTS.md (else CLAUDE.md) of each directory from the root down to ``cwd``."""
    found: list[Path] = []
    for directory in [*reversed(cwd.parents), cwd]:
        for name in _CONTEXT_FILES:
            candidate = directory / name
            if candidate.is_file():
                found.append(candidate)
                break
    return found


SMALL_MODEL_PROMPT = "You are a helpful assistant."


def build_system_prompt(
    tools: Sequence[AgentTool], cwd: Path, *, custom: str | None = None, small: bool = False
) -> str:
    """``custom`` (``--system``) or the default prompt, then project context, date and cwd.

    ``small`` (the local models) gets one line and nothing else: the embedded 135M model loses
    track of a question behind a long prompt (its provider lists the tools itself).
    """
    if small:
        return custom if custom is not None else SMALL_MODEL_PROMPT
    names = {t.name for t in tools}
    if custom is not None:
        parts = [custom]
    else:
        parts = ["You are tau, a helpful assistant that can use tools on the user's computer."]
        if tools:
            parts.append(
                "Available tools:\n" + "\n".join(f"- {t.name}: {t.description}" for t in tools)
            )
        guidelines = []
        if "edit" in names and "read" in names:
            guidelines.append("Read a file before editing it.")
        if "edit" in names:
            guidelines.append("edit replaces exact text: copy it exactly from the file.")
        if "write" in names:
            guidelines.append("Use write only for new files or complete rewrites.")
        guidelines += ["Be concise in your responses.", "Show file paths clearly."]
        parts.append("Guidelines:\n" + "\n".join(f"- {g}" for g in guidelines))
    for path in _context_files(cwd):
        try:
            text = path.read_text(encoding="utf-8")
        except OSError:
            continue
        parts.append(f"# Project Context\n\n## {path}\n\n{text.strip()}")
    parts.append(f"Current date: {date.today().isoformat()}\nCurrent working directory: {cwd}")
    return "\n\n".join(parts)
