"""``ls``, ``find`` and ``grep``: look around the working directory (read-only).

``find`` and ``grep`` skip what git ignores and follow the workspace's path policy for every file
they walk into; ``grep`` opens regular files only and searches at most the first 16 MB of each.
Every listing stops at its ``limit`` with a notice that says how to get more, and at 50 KB of
output.

``grep`` runs the model's pattern with RE2 (``google-re2``, the ``[cli]`` extra), whose matching
time is linear in the text: a pattern such as ``(a+)+$`` cannot make it backtrack for ever. RE2's
syntax is Python's without look-around and backreferences (an error says so). One call stops
after :data:`GREP_TIME_LIMIT` seconds with what it found and a notice, and at once on abort.
"""

from __future__ import annotations

import fnmatch
import time
from pathlib import Path
from typing import Any, Protocol

from tau.agent import AgentTool
from tau.ai import AbortSignal
from tau.cli.tools.paths import Workspace, open_regular
from tau.cli.tools.truncate import MAX_BYTES, format_size, truncate_head

GREP_LINE_CHARS = 500
GREP_MAX_FILE_BYTES = 16 * 1024 * 1024
GREP_TIME_LIMIT = 60.0
"""Seconds one ``grep`` call may search; then it returns what it found, with a notice."""
_CHECK_EVERY = 4096
"""Lines searched between two checks of the abort signal and the time limit."""


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
        "pattern": {
            "type": "string",
            "description": "Regular expression in RE2 syntax (Python's, without look-around or "
            "backreferences), or plain text with literal",
        },
        "path": {"type": "string", "description": "File or directory to search (default: current)"},
        "glob": {"type": "string", "description": "Only search files matching this glob"},
        "ignoreCase": {"type": "boolean", "description": "Case-insensitive search"},
        "literal": {"type": "boolean", "description": "Treat the pattern as plain text"},
        "context": {"type": "integer", "description": "Lines of context around each match"},
        "limit": {"type": "integer", "description": "Maximum number of matches (default 100)"},
    },
    "required": ["pattern"],
}


def _clip(raw: bytes) -> str:
    line = raw.decode("utf-8", errors="replace")
    if len(line) <= GREP_LINE_CHARS:
        return line
    return line[:GREP_LINE_CHARS] + "... [truncated]"


class _Regex(Protocol):
    def search(self, text: bytes) -> object: ...


def _compile(pattern: str, ignore_case: bool, literal: bool) -> tuple[_Regex, _Regex | None]:
    """The pattern for one line, and the one that tells whether a whole file can match
    (None when the pattern's ``\\A``/``\\z`` mean something else in a whole file)."""
    try:
        import re2
    except ImportError:
        raise RuntimeError("grep needs the google-re2 package: pip install 'tau[cli]'") from None
    options = re2.Options()
    options.log_errors = False  # RE2 would print parse errors on stderr, over the screen
    options.case_sensitive = not ignore_case
    options.literal = literal
    source = pattern.encode("utf-8", "replace")
    try:
        line: _Regex = re2.compile(source, options)
        if literal:
            return line, line
        if b"\\A" in source or b"\\z" in source:
            return line, None
        return line, re2.compile(b"(?m)" + source, options)
    except re2.error as exc:
        reason = b" ".join(a for a in exc.args if isinstance(a, bytes)).decode("utf-8", "replace")
        raise ValueError(
            f"Invalid regular expression {pattern!r}: {reason or exc} (RE2 syntax: as Python's "
            "re without look-around or backreferences; literal=true searches plain text)"
        ) from None


def grep_tool(workspace: Workspace) -> AgentTool:
    """The ``grep`` tool: lines matching a pattern, as ``path:line: text``."""

    def execute(
        tool_call_id: str, params: dict[str, Any], signal: AbortSignal, on_update: Any
    ) -> str:
        pattern: str = params["pattern"]
        raw = params.get("path") or "."
        limit = int(params.get("limit") or 100)
        context = max(0, int(params.get("context") or 0))
        regex, whole = _compile(
            pattern, bool(params.get("ignoreCase")), bool(params.get("literal"))
        )
        deadline = time.monotonic() + GREP_TIME_LIMIT
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
            if time.monotonic() > deadline:
                more = True
                break
            relative = workspace.display(file)
            if glob and not _glob_matches(glob, file.relative_to(root).as_posix() or file.name):
                continue
            try:
                data, cut = _text(file, raw if file == root else relative)
            except OSError:
                if file == root:
                    raise  # named by the model: say why it cannot be searched
                continue
            if cut:
                notices.append(
                    f"[{relative}: only the first {format_size(GREP_MAX_FILE_BYTES)} searched]"
                )
            if not data or (whole is not None and not whole.search(data)):
                continue  # one linear pass over the file: most files have no match at all
            lines = data.split(b"\n")
            shown = -1
            for number, line in enumerate(lines):
                if number % _CHECK_EVERY == 0:
                    signal.throw_if_aborted()
                    if time.monotonic() > deadline:
                        more = True
                        break
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
        if matches == limit and more:
            notices.append(
                f"[{limit} matches limit reached. Use limit={limit * 2} for more, or refine pattern]"
            )
        elif more:
            notices.insert(
                0,
                f"[Search stopped after {GREP_TIME_LIMIT:g} s: narrow the path or glob for the rest]",
            )
        if not out:
            return "\n\n".join(["No matches found", *notices])
        return _capped(out, notices)

    return AgentTool(
        "grep", "Search file contents for a pattern", _GREP_SCHEMA, execute=execute, label="Grep"
    )


def _text(file: Path, shown: str) -> tuple[bytes, bool]:
    """The text of a file (empty for a binary one), its lines ended by ``\\n`` alone, and
    whether the size cap cut it."""
    with open_regular(file, shown) as handle:
        data = handle.read(GREP_MAX_FILE_BYTES + 1)
    if b"\0" in data[:8192]:
        return b"", False  # binary
    cut = len(data) > GREP_MAX_FILE_BYTES
    if cut:
        # Search whole lines only: the one the cap split is left out (unless it is the only one).
        end = data.rfind(b"\n", 0, GREP_MAX_FILE_BYTES)
        data = data[: end + 1] if end >= 0 else data[:GREP_MAX_FILE_BYTES]
    data = data.replace(b"\r\n", b"\n")
    return data.removesuffix(b"\n"), cut
