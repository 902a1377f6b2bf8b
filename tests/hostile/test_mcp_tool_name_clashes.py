"""Issue 24 item 14: one MCP server's clashing tool names never break a run.

A server with tools ``a.b`` and ``a_b`` gave two tools named ``a_b`` and every turn failed with
"two tools are named a_b"; a server tool named ``final_result`` broke ``output_type`` runs. The
library now renames deterministically (the tool whose name needed no change keeps it) and
says so in the renamed tool's description.
"""

from __future__ import annotations

import asyncio
import sys
import textwrap
from pathlib import Path

from pydantic import BaseModel

from tau.agent import Agent
from tau.agent.mcp import MCPServer
from tau.ai import ToolResultMessage
from tau.ai.providers.faux import FauxResponse, faux_model, tool_call
from tau.ai.structured import OUTPUT_TOOL_NAME

SERVER = textwrap.dedent(
    """
    from mcp.server.mcpserver import MCPServer

    app = MCPServer("clash", log_level="WARNING")

    @app.tool(name="a.b", description="The dotted one.")
    def dotted() -> str:
        return "dotted"

    @app.tool(name="a_b", description="The underscored one.")
    def underscored() -> str:
        return "underscored"

    @app.tool(name="final_result", description="The server's own final result.")
    def final() -> str:
        return "server final"

    app.run()
    """
)


class Answer(BaseModel):
    value: int


def _server(tmp_path: Path) -> MCPServer:
    path = tmp_path / "clash_server.py"
    path.write_text(SERVER)
    return MCPServer.stdio(sys.executable, [str(path)], name="clash")


async def test_clashing_and_reserved_names_are_renamed_and_the_run_works(tmp_path: Path) -> None:
    async with _server(tmp_path) as server:
        tools = await server.tools()
        names = [t.name for t in tools]
        assert len(set(names)) == 3 and OUTPUT_TOOL_NAME not in names
        by_mcp = {t.mcp_name: t for t in tools}
        assert by_mcp["a_b"].name == "a_b"  # needed no change: keeps its name
        dotted, final = by_mcp["a.b"], by_mcp["final_result"]
        assert dotted.name.startswith("a_b_") and final.name.startswith("final_result_")
        assert "names this tool 'a.b'" in dotted.description
        assert "names this tool 'final_result'" in final.description
        assert by_mcp["a_b"].description == "The underscored one."
        assert [t.name for t in await server.tools()] == names  # the same every time

        script = [
            FauxResponse(
                [tool_call("a_b", {}), tool_call(dotted.name, {}), tool_call(final.name, {})]
            ),
            FauxResponse([tool_call(OUTPUT_TOOL_NAME, {"value": 42})]),
        ]
        agent = Agent(model=faux_model(script), tool_sources=[server], output_type=Answer,
                      output_mode="tool")  # fmt: skip
        result = await asyncio.wait_for(agent.prompt("go"), 30)
        assert result.error is None, result.error
        assert result.output == Answer(value=42)
        results = [m for m in agent.state.messages if isinstance(m, ToolResultMessage)]
        texts = [b.text for m in results[:3] for b in m.content if hasattr(b, "text")]
        assert texts == ["underscored", "dotted", "server final"]
