"""``tau web``: the ``tau`` command's agent in a browser page (:func:`tau.ui.web_app`).

The same model, system prompt, tools and MCP servers as a run of ``tau`` (``-m``,
``--system``, ``--tools``, ``--thinking``, the config's ``mcpServers`` and ``--mcp FILE``,
wired by :func:`tau.cli.mcp.mcp_tools`), and ``--models`` the page's model picker also
offers; ``write``, ``edit``, ``bash`` and the tools of untrusted MCP servers ask for approval
in the page (Approve / Deny buttons) unless ``--yes``. Chats are the working directory's
``tau`` sessions (:class:`tau.cli.web_store.SessionChatStore`); ``--store sqlite`` keeps them
in ``$TAU_HOME/web-chats.sqlite`` instead. It binds 127.0.0.1 by default; any other host needs ``--token`` (or ``TAU_WEB_TOKEN``), which
every request then carries (open the page at ``/?token=...``).

Its flags are declared in :mod:`tau.cli.subcommands`; the work is imported once they are
parsed (``pip install 'tau[web]'``).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tau.cli.errors import EXIT_OK, UsageError

if TYPE_CHECKING:
    from tau.agent import Agent, AgentThinkingLevel
    from tau.ai import Model
    from tau.ai import Settings as ModelSettings
    from tau.cli.mcp import MCPTools
    from tau.cli.tools import Workspace

__all__ = ["LOOPBACK", "WebAgent", "web_command"]

LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})
"""Hosts ``tau web`` binds without a token."""


class WebAgent:
    """``make_agent`` of ``tau web``: the same agent for every request."""

    def __init__(
        self,
        model: Model,
        *,
        system: str,
        tools: list[str],
        workspace: Workspace,
        thinking: AgentThinkingLevel,
        settings: ModelSettings,
        ask: bool,
        mcp: MCPTools,
    ) -> None:
        self.model = model
        self.system = system
        self.tools = tools
        self.workspace = workspace
        self.thinking = thinking
        self.settings = settings
        self.ask = ask
        self.mcp = mcp
        """The MCP servers: one tool source shared by every request's agent (started once)."""

    def __call__(self) -> Agent:
        from tau.agent import Agent
        from tau.cli.compaction import convert_to_llm
        from tau.cli.models import custom_key
        from tau.cli.tools import MUTATING_TOOLS, build_tools

        tools = build_tools(self.tools, self.workspace)
        for tool in tools:
            if self.ask and tool.name in MUTATING_TOOLS:
                tool.requires_approval = True  # the page's Approve / Deny buttons
        return Agent(
            model=self.model,
            system_prompt=self.system,
            tools=tools,
            thinking_level=self.thinking,
            settings=self.settings,
            # A terminal session may hold a compaction's summary: sent as the terminal does.
            convert_to_llm=convert_to_llm,
            get_api_key=custom_key,
            tool_sources=[self.mcp] if self.mcp else (),
        )


def web_app_for(args: argparse.Namespace) -> Any:
    """The ASGI app ``tau web`` serves for ``args`` (the host is checked first)."""
    token = args.token or os.environ.get("TAU_WEB_TOKEN") or None
    if args.host not in LOOPBACK and not token:
        raise UsageError(
            f"--host {args.host} opens tau to the network: give a --token (or TAU_WEB_TOKEN) "
            "that every request must carry"
        )
    try:
        from starlette.applications import Starlette
        from starlette.routing import Mount

        from tau.ui import ChatStore, SQLiteChatStore, web_app
    except ImportError as exc:
        raise UsageError(f"{exc} (tau web needs: pip install 'tau[web]')") from None
    from tau.cli.config import tau_home
    from tau.cli.flags import DEFAULT_TOOL_NAMES, tool_names
    from tau.cli.mcp import mcp_tools
    from tau.cli.models import check_credentials, choose_model, model_spec
    from tau.cli.run_settings import model_settings
    from tau.cli.tools import Workspace
    from tau.cli.web_store import SessionChatStore

    model = choose_model(args.model)
    check_credentials(model)
    default_tools = () if model.provider == "local" else DEFAULT_TOOL_NAMES
    names = tool_names(args.tools, default_tools)
    cwd = Path.cwd().resolve()
    workspace = Workspace(cwd)
    mcp = mcp_tools(
        None if args.mcp is None else Path(args.mcp), workspace, names, yes=bool(args.yes)
    )
    agent = WebAgent(
        model,
        system=args.system or "",
        tools=names,
        workspace=workspace,
        thinking=args.thinking or "off",
        settings=model_settings(args, model),
        ask=not args.yes,
        mcp=mcp,
    )
    offered = {model_spec(model): model}
    for spec in (args.models or "").split(","):
        if spec.strip():
            extra = choose_model(spec.strip())
            offered[model_spec(extra)] = extra
    store: ChatStore = SessionChatStore(cwd)
    if args.store == "sqlite":
        home = tau_home()
        home.mkdir(parents=True, exist_ok=True)
        store = SQLiteChatStore(home / "web-chats.sqlite")

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        try:
            yield
        finally:
            await mcp.aclose()  # the servers' processes end with the page's

    page = web_app(agent, store=store, token=token, models=offered)
    return Starlette(routes=[Mount("/", app=page)], lifespan=lifespan), token


def web_command(args: argparse.Namespace) -> int:
    """``tau web``: serve the page until interrupted."""
    app, token = web_app_for(args)
    import uvicorn

    shown = f"[{args.host}]" if ":" in args.host else args.host
    query = "/?token=<your token>" if token else "/"
    print(f"tau web on http://{shown}:{args.port}{query} (Ctrl-C stops it)", file=sys.stderr)
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    return EXIT_OK
