"""MCP servers in the ``tau`` command: ``--mcp FILE``, the config's ``mcpServers``, ``tau mcp list``.

Servers are described as Claude Desktop, Cursor and pi's MCP extensions do::

    {"mcpServers": {
        "files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "."]},
        "search": {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer …"}},
        "notes": {"command": "python", "args": ["notes.py"], "env": {"NOTES_DIR": "~/notes"},
                  "trust": true}
    }}

``$TAU_HOME/config.json`` may hold the key, and ``--mcp FILE`` adds the servers of FILE (a
name in both: FILE wins). An entry may also give ``"type": "sse"`` (the older HTTP transport),
``"cwd"``, ``"timeout"`` (seconds per call) and ``"disabled": true``. MCP tools change things
tau cannot see, so each call asks first, like write/edit/bash, unless ``--yes`` or the server
is marked ``"trust": true``. A server that fails to start is reported in one line (with its
stderr's last line) and the run goes on without it.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tau.cli.config import config_path, load_config

if TYPE_CHECKING:
    from tau.agent import AgentTool
    from tau.agent.mcp import MCPServer, MCPTool
    from tau.cli.tools.paths import Workspace

__all__ = [
    "MCPConfigError",
    "MCPTools",
    "ServerEntry",
    "allow_results",
    "load_servers",
    "mcp_list",
    "mcp_tools",
]

Warn = Callable[[str], None]


def _warn_to_stderr(line: str) -> None:
    print(f"tau: warning: {line}", file=sys.stderr, flush=True)


def _quiet_sdk_logs() -> None:
    # The SDK logs a misbehaving server's output with tracebacks; tau reports it in one line.
    logging.getLogger("mcp").addHandler(logging.NullHandler())


class MCPConfigError(ValueError):
    """An MCP server file that cannot be used at all (unreadable, not JSON, no servers)."""


@dataclass(frozen=True, slots=True)
class ServerEntry:
    """One configured server."""

    name: str
    spec: Mapping[str, Any]
    trust: bool
    origin: str
    disabled: bool = False
    """Marked ``"disabled": true``: listed by ``tau mcp list``, never started."""

    def build(self) -> MCPServer:
        """The (not yet connected) server; raises ValueError for a malformed entry."""
        from tau.agent.mcp import MCPServer

        spec = self.spec
        timeout = spec.get("timeout", 300)
        if timeout is not None and (not isinstance(timeout, int | float) or timeout <= 0):
            raise ValueError('"timeout" must be a positive number of seconds')
        options: dict[str, Any] = {"name": self.name, "timeout": timeout}
        if "command" in spec:
            command = spec["command"]
            if not isinstance(command, str) or not command:
                raise ValueError('"command" must be a non-empty string')
            args = _strings(spec.get("args", []), "args")
            env = _string_map(spec.get("env", {}), "env")
            cwd = spec.get("cwd")
            if cwd is not None and not isinstance(cwd, str):
                raise ValueError('"cwd" must be a string')
            cwd = str(Path(cwd).expanduser()) if cwd else None
            return MCPServer.stdio(command, args, env or None, cwd, **options)
        if "url" in spec:
            url = spec["url"]
            if not isinstance(url, str) or not url.startswith(("http://", "https://")):
                raise ValueError('"url" must be an http:// or https:// URL')
            headers = _string_map(spec.get("headers", {}), "headers")
            kind = spec.get("type", spec.get("transport", "http"))
            if kind == "sse":
                return MCPServer.sse(url, headers, **options)
            if kind not in ("http", "streamable-http", "streamableHttp"):
                raise ValueError(f'unknown "type" {kind!r} (use "http" or "sse")')
            return MCPServer.http(url, headers, **options)
        raise ValueError('needs "command" (a local server) or "url" (a remote one)')


def _strings(value: object, key: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ValueError(f'"{key}" must be a list of strings')
    return list(value)


def _string_map(value: object, key: str) -> dict[str, str]:
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise ValueError(f'"{key}" must be an object of strings')
    return dict(value)


def _entries(servers: object, origin: str, warn: Warn) -> dict[str, ServerEntry]:
    if not isinstance(servers, dict):
        raise MCPConfigError(f'{origin}: "mcpServers" must be an object of servers')
    entries: dict[str, ServerEntry] = {}
    for name, spec in servers.items():
        if not isinstance(spec, dict):
            warn(f"MCP server {name!r} in {origin} is not an object; skipped")
            continue
        trust, disabled = spec.get("trust") is True, spec.get("disabled") is True
        entries[name] = ServerEntry(name, spec, trust, origin, disabled)
    return entries


def read_server_file(path: Path, warn: Warn = _warn_to_stderr) -> dict[str, ServerEntry]:
    """The servers of an MCP file: ``{"mcpServers": {...}}`` (or the bare servers object)."""
    try:
        data = json.loads(path.expanduser().read_text(encoding="utf-8"))
    except OSError as exc:
        raise MCPConfigError(f"cannot read MCP server file {str(path)!r}: {exc.strerror}") from None
    except ValueError as exc:
        raise MCPConfigError(f"MCP server file {str(path)!r} is not JSON: {exc}") from None
    except RecursionError:
        raise MCPConfigError(f"MCP server file {str(path)!r} is nested too deeply") from None
    servers = data.get("mcpServers", data) if isinstance(data, dict) else data
    return _entries(servers, str(path), warn)


def load_servers(
    path: Path | None, warn: Warn = _warn_to_stderr, *, disabled: bool = False
) -> list[ServerEntry]:
    """The servers of tau's config file, then those of ``path`` (which win on a shared name);
    those marked disabled only with ``disabled=True``."""
    entries: dict[str, ServerEntry] = {}
    configured = load_config().get("mcpServers")
    if configured is not None:
        entries.update(_entries(configured, str(config_path()), warn))
    if path is not None:
        entries.update(read_server_file(path, warn))
    return [entry for entry in entries.values() if disabled or not entry.disabled]


def allow_results(workspace: Workspace) -> None:
    """Let ``read`` open the files where MCP results over the cap are saved whole (the
    notice in such a result names one)."""
    from tau.agent.mcp import results_dir

    try:
        folder = results_dir()
    except OSError:
        return  # the notice then says the rest could not be saved
    if folder not in workspace.allowed:
        workspace.allowed = (*workspace.allowed, folder)


def mcp_tools(
    path: Path | None, workspace: Workspace, reserved: Collection[str], *, yes: bool
) -> MCPTools:
    """The MCP servers ``tau`` and ``tau web`` use (the config's, then those of ``path``) as
    one tool source: not started yet; tools named like one in ``reserved`` are renamed; an
    untrusted server's tools need approval unless ``yes``. ``read`` may open their saved
    results (:func:`allow_results`)."""
    servers = load_servers(path)
    if servers:
        allow_results(workspace)
    return MCPTools(servers, reserved=reserved, ask_first=not yes)


class MCPTools:
    """The MCP servers of one ``tau`` session, as one tool source.

    Servers start on the first turn (concurrently); a failure is one warning line and that
    server is left out. A tool whose name is taken (by a built-in tool or an earlier server)
    is offered as ``server_tool`` instead.
    """

    def __init__(
        self,
        entries: Sequence[ServerEntry],
        reserved: Collection[str] = (),
        warn: Warn = _warn_to_stderr,
        *,
        ask_first: bool = False,
    ) -> None:
        self.entries = list(entries)
        self.ask_first = ask_first
        """Whether the tools of servers not marked ``trust`` need approval (no ``--yes``)."""
        self.reserved = frozenset(reserved)
        self.warn = warn
        self.servers: dict[str, MCPServer] = {}
        self.trusted: set[str] = set()
        self._owners: dict[str, tuple[ServerEntry, MCPTool]] = {}
        self._left_out: set[tuple[str, str]] = set()
        self._reported: set[str] = set()
        self._started: asyncio.Task[None] | None = None

    def __bool__(self) -> bool:
        return bool(self.entries)

    @property
    def name(self) -> str:
        """For messages."""
        return "MCP servers"

    async def start(self) -> None:
        """Start every server (once); report the ones that fail."""
        if self._started is None:
            self._started = asyncio.ensure_future(self._start())
        await asyncio.shield(self._started)

    async def _start(self) -> None:
        _quiet_sdk_logs()
        built: list[tuple[ServerEntry, MCPServer]] = []
        for entry in self.entries:
            try:
                built.append((entry, entry.build()))
            except ValueError as exc:
                self.warn(f"MCP server {entry.name!r} in {entry.origin}: {exc}; skipped")
        failures = await asyncio.gather(
            *(server.connect() for _, server in built), return_exceptions=True
        )
        for (entry, server), failure in zip(built, failures, strict=True):
            if failure is None:
                self.servers[entry.name] = server
                if entry.trust:
                    self.trusted.add(entry.name)
            elif isinstance(failure, Exception):
                self.warn(f"{failure}; continuing without it")
            else:
                raise failure

    async def tools(self) -> list[AgentTool]:
        """Every started server's current tools, renamed where a name is taken."""
        await self.start()
        taken = set(self.reserved)
        owners: dict[str, tuple[ServerEntry, MCPTool]] = {}
        tools: list[AgentTool] = []
        entries = {entry.name: entry for entry in self.entries}
        for name, server in self.servers.items():
            for listed in await self._server_tools(server):
                tool = listed
                if tool.name in taken:
                    renamed = await self._renamed_tool(server, tool.mcp_name, taken)
                    if renamed is None:
                        continue
                    tool = renamed
                taken.add(tool.name)
                if self.ask_first and not entries[name].trust:
                    tool.requires_approval = True
                owners[tool.name] = (entries[name], tool)
                tools.append(tool)
        self._owners = owners
        return tools

    async def _server_tools(self, server: MCPServer) -> list[MCPTool]:
        from tau.agent.mcp import MCPServerError

        try:
            return await server.tools()
        except MCPServerError as exc:
            # Down and never listed: nothing to offer this turn; say so once per reason.
            if str(exc) not in self._reported:
                self._reported.add(str(exc))
                self.warn(str(exc))
            return []

    async def _renamed_tool(
        self, server: MCPServer, mcp_name: str, taken: set[str]
    ) -> MCPTool | None:
        (tool,) = await server.tools(prefix=server.name, include=[mcp_name])
        if tool.name not in taken:
            return tool
        key = (server.name, mcp_name)
        if key not in self._left_out:
            self._left_out.add(key)
            self.warn(f"MCP tool {mcp_name!r} of {server.name!r}: its name is taken; left out")
        return None

    def needs_confirmation(self, tool_name: str) -> bool:
        """Whether a call of ``tool_name`` must be confirmed (an MCP tool of an untrusted server)."""
        owner = self._owners.get(tool_name)
        return owner is not None and not owner[0].trust

    def describe_call(self, tool_name: str, args: object) -> str | None:
        """A confirmation question's subject for an MCP tool call (None for other tools)."""
        owner = self._owners.get(tool_name)
        if owner is None:
            return None
        entry, tool = owner
        shown = json.dumps(args, ensure_ascii=False, default=repr)
        if len(shown) > 200:
            shown = shown[:199] + "…"
        return f"MCP tool {tool.mcp_name!r} of server {entry.name!r} with {shown}"

    async def aclose(self) -> None:
        """Stop every server (bounded)."""
        started = self._started
        if started is not None and not started.done():
            started.cancel()
            await asyncio.wait([started])
        await asyncio.gather(*(server.close() for server in self.servers.values()))
        self.servers.clear()


# --------------------------------------------------------------------------- tau mcp list


async def _list(entries: Sequence[ServerEntry]) -> int:
    _quiet_sdk_logs()
    failed = 0
    for entry in entries:
        if entry.disabled:
            print(f'{entry.name}: disabled ("disabled": true in {entry.origin})')
            continue
        try:
            server = entry.build()
        except ValueError as exc:
            print(f"{entry.name}: invalid ({entry.origin}): {exc}")
            failed += 1
            continue
        try:
            await server.connect()
        except Exception as exc:
            print(f"{entry.name}: failed: {exc}")
            failed += 1
            continue
        try:
            tools = await server.tools()
            trust = "trusted" if entry.trust else "asks before each call"
            print(
                f"{entry.name}: connected ({server.transport.describe()}), "
                f"{len(tools)} tool{'s' * (len(tools) != 1)}, {trust}"
            )
            for tool in tools:
                summary = (tool.description or tool.label).strip().splitlines()
                print(f"  {tool.name}" + (f" — {summary[0]}" if summary else ""))
        except Exception as exc:
            print(f"{entry.name}: failed: {exc}")
            failed += 1
        finally:
            await server.close()
    return 1 if failed else 0


def mcp_list(path: Path | None) -> int:
    """``tau mcp list [FILE]``: each server's status and tools (exit 1 if one failed)."""
    entries = list(read_server_file(path).values()) if path else load_servers(None, disabled=True)
    if not entries:
        where = str(path) if path else f'"mcpServers" in {config_path()}'
        print(f"no MCP servers configured ({where})")
        return 0
    return asyncio.run(_list(entries))
