"""``ls``, ``find`` and ``grep``: look around the working directory (read-only).

``find`` and ``grep`` skip what git ignores and follow the workspace's path policy for every file
they walk into; ``grep`` opens regular files only and searches at most the first 16 MB of each.
Every listing stops at its ``limit`` with a notice that says how to get more, and at 50 KB of
output.
"""

from __future__ import annotations

import fnmatch
import re
from pathlib import Path
from typing import Any

from tau.agent import AgentTool
from tau.ai import AbortSignal
from tau.cli.tools.paths import Workspace, open_regular
from tau.cli.tools.truncate import MAX_BYTES, format_size, truncate_head

GREP_LINE_CHARS = 500
GREP_MAX_FILE_BYTES = 16 * 1024 * 1024


def _capped(lines: list[str], notices: list[str]) -> str:
    cut = truncate_head("\n".join(lines), max_lines=len(lines) + 1, max_bytes=MAX_BYTES)
    if cut.truncated:
        notices.append(f"[Output truncated at {format_size(MAX_BYTES)}]")
    text = cut.text
    if notices:
        text = f"{text}\n\n" + "\n".join(notices)
    return text


# --------------------------------------------------------------------------- ls

_LS_SCHEMA = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "Directory to list (default: current)"},
        "limit": {"type": "integer", "description": "Maximum number of entries (default 500)"},
    },
}


def ls_tool(workspace: Workspace) -> AgentTool:
    """The ``ls`` tool: a directory's entries, sorted, ``/`` after directories, dotfiles too."""

    def execute(
        tool_call_id: str, params: dict[str, Any], signal: AbortSignal, on_update: Any
    ) -> str:
        signal.throw_if_aborted()
        raw = params.get("path") or "."
        limit = int(params.get("limit") or 500)
        path = workspace.resolve(raw)
        if not path.exists():
            raise FileNotFoundError(f"Path not found: {raw}")
        if not path.is_dir():
            raise NotADirectoryError(f"Not a directory: {raw}")
        entries = sorted(path.iterdir(), key=lambda p: p.name.lower())
        if not entries:
            return "(empty directory)"
        lines = [e.name + ("/" if e.is_dir() else "") for e in entries[:limit]]
        notices = []
        if len(entries) > limit:
            notices.append(f"[{limit} entries limit reached. Use limit={limit * 2} for more]")
        return _capped(lines, notices)

    return AgentTool("ls", "List directory contents", _LS_SCHEMA, execute=execute, label="List")


# --------------------------------------------------------------------------- find

_FIND_SCHEMA = {
    "type": "object",
    "properties": {
        "pattern": {"type": "string", "description": "Glob pattern, e.g. '*.py' or 'src/**/*.ts'"},
        "path": {"type": "string", "description": "Directory to search (default: current)"},
        "limit": {"type": "integer", "description": "Maximum number of results (default 1000)"},
    },
    "required": ["pattern"],
}


def _glob_matches(pattern: str, relative: str) -> bool:
    if "/" not in pattern:
        return fnmatch.fnmatchcase(relative.rsplit("/", 1)[-1], pattern)
    # "**/" may match no directory at all.
    return fnmatch.fnmatchcase(relative, pattern) or fnmatch.fnmatchcase(
        relative, pattern.replace("**/", "")
    )


def find_tool(workspace: Workspace) -> AgentTool:
    """The ``find`` tool: files whose path matches a glob."""

    def execute(
        tool_call_id: str, params: dict[str, Any], signal: AbortSignal, on_update: Any
    ) -> str:
        pattern: str = params["pattern"]
        raw = params.get("path") or "."
        limit = int(params.get("limit") or 1000)
        root = workspace.resolve(raw)
        if not root.exists():
            raise FileNotFoundError(f"Path not found: {raw}")
        found: list[str] = []
        more = False
        for file in workspace.walk(root):
            signal.throw_if_aborted()
            relative = file.relative_to(root).as_posix() if file != root else file.name
            if _glob_matches(pattern, relative):
                if len(found) == limit:
                    more = True
                    break
                found.append(relative)
        if not found:
            return "No files found matching pattern"
        notices = []
        if more:
            notices.append(
                f"[{limit} results limit reached. Use limit={limit * 2} for more, or refine pattern]"
            )
        return _capped(found, notices)

    return AgentTool(
        "find", "Find files by glob pattern", _FIND_SCHEMA, execute=execute, label="Find"
    )


# --------------------------------------------------------------------------- grep

_GREP_SCHEMA = {
    "type": "object",
    "properties": {
        "pattern": {"type": "string", "description": "Regular expression (or text with literal)"},
        "path": {"type": "string", "description": "File or directory to search (default: current)"},
        "glob": {"type": "string", "description": "Only search files matching this glob"},
        "ignoreCase": {"type": "boolean", "description": "Case-insensitive search"},
        "literal": {"type": "boolean", "description": "Treat the pattern as plain text"},
        "context": {"type": "integer", "description": "Lines of context around each match"},
        "limit": {"type": "integer", "description": "Maximum number of matches (default 100)"},
    },
    "required": ["pattern"],
}


def _clip(line: str) -> str:
    if len(line) <= GREP_LINE_CHARS:
        return line
    return line[:GREP_LINE_CHARS] + "... [truncated]"


def grep_tool(workspace: Workspace) -> AgentTool:
    """The ``grep`` tool: lines matching a pattern, as ``path:line: text``."""

    def execute(
        tool_call_id: str, params: dict[str, Any], signal: AbortSignal, on_update: Any
    ) -> str:
        pattern: str = params["pattern"]
        raw = params.get("path") or "."
        limit = int(params.get("limit") or 100)
        context = max(0, int(params.get("context") or 0))
        flags = re.IGNORECASE if params.get("ignoreCase") else 0
        source = re.escape(pattern) if params.get("literal") else pattern
        try:
            regex = re.compile(source, flags)
        except re.error as exc:
            raise ValueError(f"Invalid regular expression {pattern!r}: {exc}") from None
        root = workspace.resolve(raw)
        if not root.exists():
            raise FileNotFoundError(f"Path not found: {raw}")
        glob = params.get("glob")
        out: list[str] = []
        matches = 0
        more = False
        notices: list[str] = []
        for file in workspace.walk(root):
            signal.throw_if_aborted()
            relative = workspace.display(file)
            if glob and not _glob_matches(glob, file.relative_to(root).as_posix() or file.name):
                continue
            try:
                lines, cut = _text_lines(file, raw if file == root else relative)
            except OSError:
                if file == root:
                    raise  # named by the model: say why it cannot be searched
                continue
            if cut:
                notices.append(
                    f"[{relative}: only the first {format_size(GREP_MAX_FILE_BYTES)} searched]"
                )
            shown = -1
            for number, line in enumerate(lines):
                if not regex.search(line):
                    continue
                if matches == limit:
                    more = True
                    break
                matches += 1
                for ctx in range(max(shown + 1, number - context), number):
                    out.append(f"{relative}-{ctx + 1}- {_clip(lines[ctx])}")
                out.append(f"{relative}:{number + 1}: {_clip(line)}")
                shown = number
                for ctx in range(number + 1, min(len(lines), number + 1 + context)):
                    if regex.search(lines[ctx]):
                        break
                    out.append(f"{relative}-{ctx + 1}- {_clip(lines[ctx])}")
                    shown = ctx
            if more:
                break
        if not out:
            return "\n\n".join(["No matches found", *notices])
        if more:
            notices.append(
                f"[{limit} matches limit reached. Use limit={limit * 2} for more, or refine pattern]"
            )
        return _capped(out, notices)

    return AgentTool(
        "grep", "Search file contents for a pattern", _GREP_SCHEMA, execute=execute, label="Grep"
    )


def _text_lines(file: Path, shown: str) -> tuple[list[str], bool]:
    """The lines of a text file (none for a binary one), and whether the size cap cut them."""
    with open_regular(file, shown) as handle:
        data = handle.read(GREP_MAX_FILE_BYTES + 1)
    if b"\0" in data[:8192]:
        return [], False  # binary
    cut = len(data) > GREP_MAX_FILE_BYTES
    if cut:
        # Search whole lines only: the one the cap split is left out (unless it is the only one).
        end = data.rfind(b"\n", 0, GREP_MAX_FILE_BYTES)
        data = data[: end + 1] if end >= 0 else data[:GREP_MAX_FILE_BYTES]
    return data.decode("utf-8", errors="replace").splitlines(), cut
