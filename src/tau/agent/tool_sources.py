"""Tool sources: tools that can change while an agent runs, asked for again before every turn.

A :class:`ToolSource` is anything with an async ``tools()`` method, such as an MCP server
(:class:`tau.agent.mcp.MCPServer`) or one filtered view of it. Given to
``Agent(tool_sources=[...])`` or :class:`~tau.agent.AgentLoopConfig`, each source is asked
before every LLM call, so a tool added or removed on the other side is offered from the next
turn on. Its tools join the fixed ``tools`` of the run; two tools with one name are an error
(a model could not tell them apart), reported as that turn's error message.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from tau.agent.tools import AgentTool

__all__ = ["ToolNameClashError", "ToolSource", "gather_tools"]


@runtime_checkable
class ToolSource(Protocol):
    """Offers tools that may change between turns."""

    async def tools(self) -> Sequence[AgentTool]:
        """The tools on offer now."""
        ...


class ToolNameClashError(ValueError):
    """Two tools of one run have the same name."""


def _describe(source: object) -> str:
    name = getattr(source, "name", None)
    return f"{type(source).__name__} {name!r}" if isinstance(name, str) else repr(source)


async def gather_tools(
    fixed: Sequence[AgentTool], sources: Sequence[ToolSource]
) -> list[AgentTool]:
    """``fixed`` followed by every source's current tools (asked concurrently).

    Raises :class:`ToolNameClashError` naming both owners when a name is offered twice, and
    whatever a source raises.
    """
    listed = await asyncio.gather(*(source.tools() for source in sources))
    owners: dict[str, str] = {}
    tools: list[AgentTool] = []
    batches: list[tuple[str, Sequence[AgentTool]]] = [("the agent's own tools", fixed)]
    batches += [(_describe(source), batch) for source, batch in zip(sources, listed, strict=True)]
    for owner, batch in batches:
        for tool in batch:
            previous = owners.get(tool.name)
            if previous is not None:
                where = previous if previous == owner else f"{previous} and {owner}"
                raise ToolNameClashError(
                    f'two tools are named "{tool.name}" ({where}); give one source a prefix, '
                    'e.g. server.toolset(prefix="...")'
                )
            owners[tool.name] = owner
            tools.append(tool)
    return tools
