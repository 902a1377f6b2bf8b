"""MCP (Model Context Protocol) servers as agent tools: ``pip install 'tau[mcp]'``.

::

    from tau.agent import Agent
    from tau.agent.mcp import MCPServer

    async with (
        MCPServer.stdio("python", ["files_server.py"]) as files,
        MCPServer.http("http://127.0.0.1:8000/mcp", headers={"Authorization": "…"}) as web,
    ):
        agent = Agent(model=model, tool_sources=[files, web.toolset(prefix="web")])
        await agent.prompt("Summarise notes.txt")

* :class:`MCPServer` — one server over stdio, streamable HTTP or SSE; an async context manager.
  ``await server.tools(prefix=, include=, exclude=)`` gives its tools as
  :class:`~tau.agent.AgentTool` objects (:class:`MCPTool`); the server itself and
  ``server.toolset(...)`` are tool sources, re-listed every turn. Resources and prompts:
  ``list_resources``, ``read_resource``, ``list_prompts``, ``get_prompt``.
* A tool result's text and images reach the model; audio and binary resources become a note;
  ``structuredContent`` is the result's ``details``. ``isError`` fails the call (the model sees
  the server's message), progress notifications become ``tool_execution_update`` events, an
  abort sends the server a cancellation, and every request has a timeout.

Importing this module imports the MCP SDK; ``tau.agent`` itself never does.
"""

try:
    import mcp  # noqa: F401  (checked first: the message below beats a bare ImportError)
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError("tau.agent.mcp needs the MCP SDK: pip install 'tau[mcp]'") from exc

from tau.agent.mcp.content import MAX_RESULT_BYTES, results_dir
from tau.agent.mcp.server import MCPServer, MCPServerError, MCPStatus, MCPToolError
from tau.agent.mcp.tools import MCPTool, MCPToolset, model_tool_name, model_tool_names

__all__ = [
    "MAX_RESULT_BYTES",
    "MCPServer",
    "MCPServerError",
    "MCPStatus",
    "MCPTool",
    "MCPToolError",
    "MCPToolset",
    "model_tool_name",
    "model_tool_names",
    "results_dir",
]
