"""An MCP server's tools as :class:`~tau.agent.AgentTool` objects, and filtered views of them.

The name, description and input schema are passed through; the label is the tool's ``title``
(or its annotations' title). Names that providers would refuse (they accept 1-64 letters,
digits, ``_`` and ``-``) are made acceptable: other characters become ``_`` and a name too
long is cut and given a short hash of the original. Two tools whose names become the same
(``a.b`` and ``a_b``), and a tool named like tau's own typed-output tool (``final_result``),
are renamed deterministically: the tool whose name needed no change keeps it, the others get
``_`` and a short hash of their own name, and their description says so. The server is always
called with the tool's own name.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from typing import Any, Protocol

from mcp import types as mcp_types

from tau.agent.tools import AgentTool, AgentToolResult, ToolUpdateCallback
from tau.ai import AbortSignal
from tau.ai.adapters import short_hash
from tau.ai.structured import OUTPUT_TOOL_NAME

__all__ = ["MCPTool", "MCPToolset", "ToolServer", "model_tool_name", "model_tool_names"]


class ToolServer(Protocol):
    """What the tools of an MCP server use of it (:class:`~tau.agent.mcp.MCPServer` is one).

    Declared here so that this module needs nothing of the server's: the server module
    imports this one, never the other way round.
    """

    @property
    def name(self) -> str:
        """The server's name, for messages."""
        ...

    async def list_tool_specs(self) -> Sequence[mcp_types.Tool]:
        """The server's tools as it lists them (the same object while unchanged)."""
        ...

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        signal: AbortSignal | None = None,
        on_update: ToolUpdateCallback | None = None,
    ) -> AgentToolResult:
        """Call tool ``name`` (its name on the server); its result as tau content."""
        ...


_NAME_LIMIT = 64
_BAD_CHARS = re.compile(r"[^A-Za-z0-9_-]")


def model_tool_name(name: str, prefix: str | None = None) -> str:
    """The name the model sees for MCP tool ``name``: ``prefix_name``, made acceptable."""
    full = f"{prefix}_{name}" if prefix else name
    clean = _BAD_CHARS.sub("_", full) or "_"
    if len(clean) > _NAME_LIMIT:
        digest = short_hash(full)[:8]
        clean = f"{clean[: _NAME_LIMIT - len(digest) - 1]}_{digest}"
    return clean


MAX_DESCRIPTION_CHARS = 4000
"""A server's tool description is cut to this many characters before the model sees it."""
_RESERVED = frozenset({OUTPUT_TOOL_NAME})
"""Names tau's agent gives its own tools: an MCP tool never takes them."""


def _hashed(clean: str, full: str) -> str:
    digest = short_hash(full)[:8]
    return f"{clean[: _NAME_LIMIT - len(digest) - 1]}_{digest}"


def model_tool_names(names: Sequence[str], prefix: str | None = None) -> list[str]:
    """:func:`model_tool_name` for each of one server's tools, all different and none of tau's
    reserved names: of the tools a name would fall to, the one it needed no change for keeps
    it (else the first in sorted order); the others are given a hash of their own name."""
    wanted = [model_tool_name(name, prefix) for name in names]
    claims: dict[str, list[str]] = {}
    for name, clean in zip(names, wanted, strict=True):
        claims.setdefault(clean, []).append(f"{prefix}_{name}" if prefix else name)
    keepers: dict[str, str] = {}
    for clean, fulls in claims.items():
        if clean not in _RESERVED:
            keepers[clean] = clean if clean in fulls else min(fulls)
    out = []
    for name, clean in zip(names, wanted, strict=True):
        full = f"{prefix}_{name}" if prefix else name
        out.append(clean if keepers.get(clean) == full else _hashed(clean, full))
    return out


class MCPTool(AgentTool):
    """A tool of an MCP server; running it calls the server (see
    :meth:`~tau.agent.mcp.MCPServer.call_tool`)."""

    __slots__ = ("mcp_name", "server", "spec")

    def __init__(
        self, server: ToolServer, spec: mcp_types.Tool, name: str, *, renamed: bool = False
    ) -> None:
        annotations = spec.annotations
        label = spec.title or (annotations.title if annotations is not None else None)
        description = spec.description or ""
        if len(description) > MAX_DESCRIPTION_CHARS:
            cut = len(description) - MAX_DESCRIPTION_CHARS
            description = f"{description[:MAX_DESCRIPTION_CHARS]}… [{cut:,} more characters cut]"
        if renamed:
            # Renamed for a clash: the model (and whoever reads the transcript) learns why.
            note = f"(The MCP server names this tool {spec.name!r}; renamed to {name!r} here.)"
            description = f"{description}\n\n{note}" if description else note
        super().__init__(name, description, spec.input_schema, label=label or spec.name)
        self.server = server
        """The server the tool belongs to."""
        self.mcp_name = spec.name
        """The tool's name on its server."""
        self.spec = spec
        """The tool as the server listed it (annotations, output schema, icons…)."""

    async def execute(
        self,
        tool_call_id: str,
        params: Any,
        signal: AbortSignal,
        on_update: ToolUpdateCallback,
    ) -> Any:
        return await self.server.call_tool(
            self.mcp_name, params, signal=signal, on_update=on_update
        )


class MCPToolset:
    """A view of one server's tools: a name prefix, and which tools to include or exclude.

    A :class:`~tau.agent.ToolSource`: give it to ``Agent(tool_sources=[...])`` and the server's
    current tools are offered on every turn. ``include`` and ``exclude`` hold the tools' names
    on the server.
    """

    def __init__(
        self,
        server: ToolServer,
        prefix: str | None = None,
        include: Collection[str] | None = None,
        exclude: Collection[str] | None = None,
    ) -> None:
        self.server = server
        self.prefix = prefix
        self.include = frozenset(include) if include is not None else None
        self.exclude = frozenset(exclude or ())
        self._built_from: Sequence[mcp_types.Tool] | None = None
        self._tools: list[MCPTool] = []

    @property
    def name(self) -> str:
        """The server's name (and the prefix), for messages."""
        return f"{self.server.name} (prefix {self.prefix!r})" if self.prefix else self.server.name

    def _wanted(self, spec: mcp_types.Tool) -> bool:
        if self.include is not None and spec.name not in self.include:
            return False
        return spec.name not in self.exclude

    async def tools(self) -> list[MCPTool]:
        """The server's tools now, filtered and named (objects are reused while unchanged)."""
        listing = await self.server.list_tool_specs()
        if listing is not self._built_from:
            specs = [spec for spec in listing if self._wanted(spec)]
            names = model_tool_names([spec.name for spec in specs], self.prefix)
            self._tools = [
                MCPTool(
                    self.server,
                    spec,
                    name,
                    renamed=name != model_tool_name(spec.name, self.prefix),
                )
                for spec, name in zip(specs, names, strict=True)
            ]
            self._built_from = listing
        return list(self._tools)

    def __repr__(self) -> str:
        return f"MCPToolset({self.name!r})"
