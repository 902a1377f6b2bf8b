"""``edit``: replace one exact, unique piece of text in a file.

Matching is exact first; failing that, both sides are compared in a normalised form (NFKC,
trailing spaces dropped, smart quotes, Unicode dashes and exotic spaces made ASCII), and a
match there rewrites the file in that form. Line endings and a BOM are kept as they were.
"""

from __future__ import annotations

import difflib
import os
import re
import unicodedata
from typing import Any

from tau.agent import AgentTool, AgentToolResult
from tau.ai import AbortSignal, TextContent
from tau.cli.tools.paths import Workspace, open_regular, open_regular_for_writing

_SCHEMA = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "Path to the file to edit"},
        "oldText": {"type": "string", "description": "Exact text to find and replace"},
        "newText": {"type": "string", "description": "Text to replace it with"},
    },
    "required": ["path", "oldText", "newText"],
}

_BOM = "\ufeff"
_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})
_DASHES = re.compile("[\u2010-\u2015\u2212]")
_SPACES = re.compile("[\u00a0\u2000-\u200a\u202f\u205f\u3000]")


def _normalise(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).translate(_QUOTES)
    text = _SPACES.sub(" ", _DASHES.sub("-", text))
    return "\n".join(line.rstrip() for line in text.split("\n"))


def _diff(old: str, new: str) -> tuple[str, int]:
    """A line-numbered unified diff (4 lines of context) and the first changed line."""
    old_lines, new_lines = old.split("\n"), new.split("\n")
    out: list[str] = []
    first_changed = 0
    matcher = difflib.SequenceMatcher(a=old_lines, b=new_lines, autojunk=False)
    for group in matcher.get_grouped_opcodes(4):
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                out.extend(f" {j + 1:>4} {new_lines[j]}" for j in range(j1, j2))
                continue
            if not first_changed:
                first_changed = j1 + 1
            out.extend(f"-{i + 1:>4} {old_lines[i]}" for i in range(i1, i2))
            out.extend(f"+{j + 1:>4} {new_lines[j]}" for j in range(j1, j2))
        out.append("...")
    return "\n".join(out[:-1]), first_changed


def edit_tool(workspace: Workspace) -> AgentTool:
    """The ``edit`` tool for ``workspace``."""

    def execute(
        tool_call_id: str, params: dict[str, Any], signal: AbortSignal, on_update: Any
    ) -> AgentToolResult:
        signal.throw_if_aborted()
        raw_path: str = params["path"]
        path = workspace.resolve(raw_path)
        with open_regular(path, raw_path) as handle:
            if not os.access(path, os.R_OK | os.W_OK):
                raise FileNotFoundError(f"File not found: {raw_path}")
            data = handle.read()
        try:
            raw = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ValueError(
                f"Cannot edit {raw_path}: it is not UTF-8 text (byte {exc.start}); "
                "use bash to change it"
            ) from None
        bom = raw.startswith(_BOM)
        raw = raw.removeprefix(_BOM)
        crlf_at, lf_at = raw.find("\r\n"), raw.find("\n")
        crlf = crlf_at != -1 and crlf_at <= lf_at
        content = raw.replace("\r\n", "\n")
        old = params["oldText"].replace("\r\n", "\n")
        new = params["newText"].replace("\r\n", "\n")
        if not old:
            raise ValueError("oldText must not be empty")
        base = content
        count = content.count(old)
        if count == 0:
            base, old, new = _normalise(content), _normalise(old), _normalise(new)
            count = base.count(old)
        if count == 0:
            raise ValueError(
                f"Could not find the exact text in {raw_path}. The old text must match "
                "exactly including all whitespace and newlines."
            )
        if count > 1:
            raise ValueError(
                f"Found {count} occurrences of the text in {raw_path}. The text must be "
                "unique. Please provide more context to make it unique."
            )
        updated = base.replace(old, new, 1)
        if updated == content:
            raise ValueError(
                f"No changes made to {raw_path}. The replacement produced identical content."
            )
        text = updated.replace("\n", "\r\n") if crlf else updated
        with open_regular_for_writing(
            path, raw_path, linked_ok=workspace.may_change_linked(path)
        ) as out:
            out.write(((_BOM if bom else "") + text).encode("utf-8"))
        diff, first_changed = _diff(content, updated)
        return AgentToolResult(
            [TextContent(f"Successfully replaced text in {raw_path}.")],
            {"diff": diff, "firstChangedLine": first_changed},
        )

    return AgentTool(
        "edit",
        "Replace an exact, unique piece of text in a file",
        _SCHEMA,
        execute=execute,
        label="Edit",
    )
