"""Issue 24 item 11: MCP results and tool descriptions are bounded.

A 50 MB result went whole into the model's context, a 5 MB result made a 10 MB session file
(the text and ``structuredContent`` both written), and a 5 MB description reached the model
unchanged. Now a result's text is capped like ``read``'s and ``bash``'s (the whole text saved
to a file ``read`` can open), a description is cut, and each result is written once.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
import textwrap
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tau.agent.mcp import MAX_RESULT_BYTES
from tau.agent.mcp.tools import MAX_DESCRIPTION_CHARS
from tau.ai import Context, TextContent, ToolResultMessage
from tau.ai.providers.faux import FauxResponse, faux_calls, faux_model, text, tool_call
from tau.cli.app import App, Settings
from tau.cli.tools import Workspace

SERVER = textwrap.dedent(
    """
    from mcp.server.mcpserver import MCPServer

    app = MCPServer("big", log_level="WARNING")

    @app.tool(description="Returns a lot. " + "blah " * 1_000_000)
    def big() -> str:
        return "".join(f"line {n:07d} of the huge result\\n" for n in range(180_000))

    app.run()
    """
)


def _line_count(path: str) -> int:
    return Path(path).read_text().count("\n")


def _files_in(result: ToolResultMessage) -> list[str]:
    notice = result.content[-1]
    assert isinstance(notice, TextContent)
    return re.findall(r"The whole result is in (\S+):", notice.text)


async def test_a_huge_result_and_description_are_bounded_and_the_rest_readable(
    tmp_path: Path,
) -> None:
    (tmp_path / "big_server.py").write_text(SERVER)
    mcp_file = tmp_path / "mcp.json"
    server = {"command": sys.executable, "args": [str(tmp_path / "big_server.py")]}
    mcp_file.write_text(json.dumps({"mcpServers": {"big": server}}))

    def reply(context: Context, options: Mapping[str, Any]) -> FauxResponse:
        last = context.messages[-1]
        if not isinstance(last, ToolResultMessage):
            return FauxResponse([tool_call("big", {})])
        if last.tool_name == "big":
            (saved,) = _files_in(last)  # the model reads the rest where the notice says
            return FauxResponse([tool_call("read", {"path": saved, "offset": 179_999, "limit": 2})])
        return FauxResponse([text("done")])

    model = faux_model(reply)
    work = tmp_path / "work"
    work.mkdir()
    settings = Settings(
        model=model, tool_names=["read"], workspace=Workspace(work), yes=True,
        mcp_file=mcp_file, session_dir=tmp_path / "sessions",
    )  # fmt: skip
    app = App(settings, None)
    try:
        await asyncio.wait_for(app.run("go"), 120)
    finally:
        await app.aclose()

    first_context, _ = faux_calls(model)[0]
    (big,) = [t for t in first_context.tools or () if t.name == "big"]
    assert len(big.description) < MAX_DESCRIPTION_CHARS + 100
    assert big.description.startswith("Returns a lot.") and "more characters cut" in big.description

    results = [m for m in app.agent.state.messages if isinstance(m, ToolResultMessage)]
    shown = sum(len(b.text.encode()) for b in results[0].content if isinstance(b, TextContent))
    assert shown < MAX_RESULT_BYTES + 1000
    assert results[0].details is None  # the text is not kept a second time
    (saved,) = _files_in(results[0])
    assert _line_count(saved) == 180_000  # the whole result, once
    assert "line 0179999 of the huge result" in results[1].content[0].text  # type: ignore[union-attr]

    (session,) = (tmp_path / "sessions").rglob("*.jsonl")
    assert session.stat().st_size < 4 * MAX_RESULT_BYTES
