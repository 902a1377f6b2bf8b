"""``write``: create or overwrite a file (parent directories included).

Only a regular file is ever written: a FIFO or a device at the path is refused at once, since
opening one for writing could block forever or write somewhere that is not a file.
"""

from __future__ import annotations

from typing import Any

from tau.agent import AgentTool
from tau.ai import AbortSignal
from tau.cli.tools.paths import Workspace, open_regular_for_writing

_SCHEMA = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "Path to the file to write"},
        "content": {"type": "string", "description": "Content to write to the file"},
    },
    "required": ["path", "content"],
}


def write_tool(workspace: Workspace) -> AgentTool:
    """The ``write`` tool for ``workspace``."""

    def execute(
        tool_call_id: str, params: dict[str, Any], signal: AbortSignal, on_update: Any
    ) -> str:
        signal.throw_if_aborted()
        raw_path: str = params["path"]
        content: str = params["content"]
        path = workspace.resolve(raw_path)
        data = content.encode("utf-8")
        path.parent.mkdir(parents=True, exist_ok=True)
        with open_regular_for_writing(
            path, raw_path, linked_ok=workspace.may_change_linked(path)
        ) as out:
            out.write(data)
        return f"Successfully wrote {len(content)} bytes to {raw_path}"

    return AgentTool("write", "Create or overwrite a file", _SCHEMA, execute=execute, label="Write")
