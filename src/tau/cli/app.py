"""One ``tau`` session: the agent with its model, tools, prompt, confirmation hook and session file.

Print, JSON and interactive mode all run through :class:`App`; they differ only in how events
are shown and where input comes from.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tau.agent import (
    Agent,
    AgentEvent,
    AgentThinkingLevel,
    BeforeToolCallContext,
    BeforeToolCallResult,
    RunResult,
    UsageLimits,
)
from tau.ai import LOCAL_PROVIDER, AbortSignal, Model, UserMessage
from tau.cli.config import save_config
from tau.cli.mcp import MCPTools, load_servers
from tau.cli.models import model_spec
from tau.cli.prompt import build_system_prompt
from tau.cli.session import Session
from tau.cli.tools import MUTATING_TOOLS, Workspace, build_tools

Confirm = Callable[[str], Awaitable[bool]]
"""Asks the user a yes/no question; True means go ahead."""


@dataclass
class Settings:
    """What the command line asked for."""

    model: Model
    tool_names: Sequence[str]
    workspace: Workspace
    thinking: AgentThinkingLevel = "off"
    system: str | None = None
    session_path: Path | None = None
    yes: bool = False
    extra_options: dict[str, Any] = field(default_factory=dict)
    mcp_file: Path | None = None
    usage_limits: UsageLimits | None = None
    fallback_models: Sequence[Model] = ()
    output_type: Any = None
    """What each run must end on (``--output-schema``): a JSON Schema dict or a pydantic model."""


def describe_call(name: str, args: Any) -> str:
    """A one-line description of a tool call for a confirmation question."""
    if name == "bash" and isinstance(args, dict):
        return f"run `{args.get('command')}`"
    if isinstance(args, dict) and "path" in args:
        return f"{name} {args['path']}"
    return name


class App:
    """The agent of one ``tau`` invocation, persisting to the session file if there is one."""

    def __init__(self, settings: Settings, confirm: Confirm | None) -> None:
        self.settings = settings
        self.confirm = confirm
        tools = build_tools(settings.tool_names, settings.workspace)
        # MCP servers (the config's and --mcp FILE's): one tool source, started on first use.
        self.mcp = MCPTools(load_servers(settings.mcp_file), reserved=[t.name for t in tools])
        self.session = Session.open(settings.session_path) if settings.session_path else None
        self.agent = Agent(
            model=settings.model,
            system_prompt=build_system_prompt(
                tools,
                settings.workspace.cwd,
                custom=settings.system,
                small=settings.model.provider == LOCAL_PROVIDER,
            ),
            thinking_level=settings.thinking,
            tools=tools,
            messages=self.session.messages if self.session else (),
            before_tool_call=self._before_tool_call,
            session_id=self.session.id if self.session else None,
            stream_options=settings.extra_options,
            tool_sources=[self.mcp] if self.mcp else (),
            usage_limits=settings.usage_limits,
            fallback_models=settings.fallback_models,
            output_type=settings.output_type,
        )
        if self.session is not None:
            # Resumed messages now live in the agent; the session records new ones from here.
            self.session.messages = list(self.agent.state.messages)
            self.session.record_model(settings.model.provider, settings.model.id)
            self.agent.subscribe(self._persist)

    def _persist(self, event: AgentEvent) -> None:
        if event.type == "message_end" and self.session is not None:
            self.session.record_message(event.message)

    async def _before_tool_call(
        self, context: BeforeToolCallContext, signal: AbortSignal
    ) -> BeforeToolCallResult | None:
        name = context.tool_call.name
        if self.settings.yes or not (name in MUTATING_TOOLS or self.mcp.needs_confirmation(name)):
            return None
        if self.confirm is None:
            return BeforeToolCallResult(
                block=True,
                reason=f"The user has not allowed {name} to run (tau needs --yes without a terminal).",
            )
        subject = self.mcp.describe_call(name, context.args) or describe_call(name, context.args)
        allowed = await _unless_aborted(self.confirm(f"Allow {subject}?"), signal)
        if allowed:
            return None
        if allowed is None:
            return BeforeToolCallResult(block=True, reason=f"The user aborted before {name} ran.")
        return BeforeToolCallResult(block=True, reason=f"The user declined to run {name}.")

    async def run(self, text: str | UserMessage) -> RunResult:
        """One prompt (text, or a message with attachments), until the agent is idle."""
        result = await self.agent.prompt(text)
        save_config({"model": model_spec(self.settings.model)})
        return result

    async def aclose(self) -> None:
        """Stop what the session started (MCP servers)."""
        await self.mcp.aclose()


async def _unless_aborted(question: Awaitable[bool], signal: AbortSignal) -> bool | None:
    """The answer to ``question``, or None as soon as ``signal`` fires (the question is then
    cancelled: Ctrl-C at a prompt must not wait for Enter)."""
    loop = asyncio.get_running_loop()
    asking = asyncio.ensure_future(question)
    aborted: asyncio.Future[None] = loop.create_future()

    def on_abort() -> None:
        if not aborted.done():
            aborted.set_result(None)

    def on_abort_threadsafe() -> None:
        loop.call_soon_threadsafe(on_abort)

    remove = signal.add_callback(on_abort_threadsafe)
    try:
        await asyncio.wait((asking, aborted), return_when=asyncio.FIRST_COMPLETED)
    finally:
        remove()
        aborted.cancel()
        if not asking.done():
            asking.cancel()
            await asyncio.gather(asking, return_exceptions=True)
    return None if asking.cancelled() else asking.result()
