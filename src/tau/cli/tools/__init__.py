"""The tools of the ``tau`` command: the coding tools and two examples.

``read``, ``ls``, ``grep`` and ``find`` only look; ``write``, ``edit`` and ``bash`` change
things, so they are off unless ``--tools`` names them, and ask before each run unless ``--yes``.
``task`` hands work to a sub-agent with the read-only tools (:mod:`tau.cli.tools.task`): it
needs the session's model, so the session adds it (:func:`build_tools` leaves it out).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from tau.agent import AgentTool
from tau.cli.tools.bash import bash_tool
from tau.cli.tools.edit import edit_tool
from tau.cli.tools.examples import example_tools
from tau.cli.tools.paths import Workspace
from tau.cli.tools.read import read_tool
from tau.cli.tools.search import find_tool, grep_tool, ls_tool
from tau.cli.tools.task import TASK_TOOL
from tau.cli.tools.write import write_tool

__all__ = ["DEFAULT_TOOLS", "MUTATING_TOOLS", "Workspace", "build_tools", "tool_names"]

_BUILTIN: dict[str, Callable[[Workspace], AgentTool]] = {
    "read": read_tool,
    "write": write_tool,
    "edit": edit_tool,
    "bash": bash_tool,
    "ls": ls_tool,
    "grep": grep_tool,
    "find": find_tool,
}
DEFAULT_TOOLS = ("read", "ls", "grep", "find")
MUTATING_TOOLS = frozenset({"write", "edit", "bash"})


def tool_names() -> list[str]:
    """Every name ``--tools`` accepts."""
    return [*_BUILTIN, *example_tools(), TASK_TOOL]


class UnknownToolError(ValueError):
    """``--tools`` named a tool that does not exist."""


def build_tools(names: Iterable[str], workspace: Workspace) -> list[AgentTool]:
    """The tools called ``names``, in that order (duplicates dropped; ``task`` left out: see
    the module docstring)."""
    examples = example_tools()
    tools: list[AgentTool] = []
    seen: set[str] = set()
    for name in names:
        if name in seen:
            continue
        seen.add(name)
        if name == TASK_TOOL:
            continue
        if name in _BUILTIN:
            tools.append(_BUILTIN[name](workspace))
        elif name in examples:
            tools.append(examples[name])
        else:
            known = ", ".join(tool_names())
            raise UnknownToolError(f"unknown tool {name!r} (known: {known})")
    return tools
