"""The default system prompt of the ``tau`` command (after pi's coding-agent prompt, shortened)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from pathlib import Path

from tau.agent import AgentTool
from tau.cli.resources import Resources, context_files

SMALL_MODEL_PROMPT = "You are a helpful assistant."


def build_system_prompt(
    tools: Sequence[AgentTool],
    cwd: Path,
    *,
    custom: str | None = None,
    small: bool = False,
    resources: Resources | None = None,
) -> str:
    """``custom`` (``--system-prompt``) or the default prompt, ``--append-system-prompt``'s
    text, the context files (``AGENTS.md``/``CLAUDE.md``), the skills (names, descriptions and
    paths, when the model has ``read`` to open them), then the date and cwd.

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
    if resources is None:
        resources = Resources(context_files=context_files(cwd))
    if resources.append_system:
        parts.append(resources.append_system)
    for path in resources.context_files:
        try:
            text = path.read_text(encoding="utf-8")
        except OSError:
            continue
        parts.append(f"# Project Context\n\n## {path}\n\n{text.strip()}")
    if "read" in names and resources.skills:
        parts.append(resources.skills_prompt())
    parts.append(f"Current date: {date.today().isoformat()}\nCurrent working directory: {cwd}")
    return "\n\n".join(parts)
