"""What an extension sees: :class:`ExtensionAPI` (given to its ``setup(tau)``), the events it
can subscribe to, and the user interface it can talk through.

An extension is a Python module with ``def setup(tau: ExtensionAPI) -> None``. In ``setup`` it
registers what it adds (tools, slash commands, event handlers); later, its handlers and
commands talk to the user through ``tau.notify``/``tau.confirm``/``tau.select``/
``tau.set_status``, which each front end answers its own way (the terminal, RPC requests to
the client, or defaults in print mode), and keep state in the session with
``tau.append_entry``.

Events (``tau.on(name, handler)``; a handler may be a plain or an ``async`` function):

* ``tool_call`` (:class:`ToolCallEvent`): before a tool runs. Return :class:`Block` (or
  ``{"block": True, "reason": …}``) to stop it; change ``event.input`` in place to change its
  arguments.
* ``context`` (:class:`ContextEvent`): before each model call. Return a list of messages to
  send instead of ``event.messages`` (the session keeps its own).
* ``session_start`` and ``session_shutdown`` (:class:`SessionEvent`).
* the agent's events by their ``type`` (``agent_start``, ``turn_end``, ``message_end``,
  ``tool_execution_end``…): the :class:`tau.agent.AgentEvent` itself, to watch.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from tau.agent import AgentMessage, AgentTool
from tau.ai import Model

Level = Literal["info", "warning", "error"]
Handler = Callable[[Any], Any]
"""An event handler: the event in; for ``tool_call`` a :class:`Block`, for ``context`` a list of
messages, else nothing (or an awaitable of it)."""


@dataclass(slots=True)
class Block:
    """A ``tool_call`` handler's answer that stops the call; ``reason`` is what the model reads."""

    reason: str = "Blocked by an extension."


@dataclass(slots=True)
class ToolCallEvent:
    """A tool call about to run: change ``input`` in place to change its arguments."""

    tool_name: str
    tool_call_id: str
    input: Any
    type: str = "tool_call"


@dataclass(slots=True)
class ContextEvent:
    """The messages of the next model call (a copy of the list: the session keeps its own)."""

    messages: list[AgentMessage]
    type: str = "context"


@dataclass(slots=True)
class SessionEvent:
    """``session_start`` or ``session_shutdown``; ``mode`` is ``interactive``, ``print``,
    ``json`` or ``rpc``."""

    type: str
    mode: str
    session_file: Path | None = None


class ExtensionUI(Protocol):
    """How a front end shows an extension's messages and asks its questions."""

    has_ui: bool

    def notify(self, text: str, level: Level) -> None:
        """Show a one-line message."""

    def confirm(self, title: str, message: str, default: bool) -> Awaitable[bool]:
        """Ask a yes/no question."""

    def select(
        self, title: str, options: Sequence[str], default: str | None
    ) -> Awaitable[str | None]:
        """Ask for one of ``options`` (None: cancelled)."""

    def set_status(self, key: str, text: str | None) -> None:
        """Show ``text`` in the status line under ``key`` (None clears it)."""


class Host(Protocol):
    """What an :class:`ExtensionAPI` calls on the session (:class:`~tau.cli.extensions.host.
    Customizations` is the one there is)."""

    cwd: Path
    ui: ExtensionUI

    def subscribe(self, extension: ExtensionAPI, event: str, handler: Handler) -> None: ...
    def asking(self) -> AbstractContextManager[None]: ...
    def in_loop(self, action: Callable[[], None]) -> None: ...
    def add_tool(self, extension: ExtensionAPI, tool: AgentTool) -> None: ...
    def add_command(
        self, extension: ExtensionAPI, name: str, help: str, handler: Callable[..., Any]
    ) -> None: ...
    async def send(self, text: str) -> None: ...
    def add_flag(self, extension: ExtensionAPI, name: str, help: str, default: Any) -> None: ...
    def add_model(self, extension: ExtensionAPI, model: Model) -> None: ...
    def add_shortcut(
        self, extension: ExtensionAPI, keys: str, help: str, handler: Callable[..., Any]
    ) -> None: ...
    def flag_value(self, name: str) -> Any: ...
    def append_entry(self, custom_type: str, data: Any) -> None: ...
    def entries(self, custom_type: str) -> list[Any]: ...


class HeadlessUI:
    """Print and JSON mode: nobody to ask, so questions get their defaults and messages go to
    stderr (stdout holds the answer)."""

    has_ui = False

    def __init__(self, write: Callable[[str], None] | None = None) -> None:
        import sys

        self.write = write or (lambda text: print(text, file=sys.stderr, flush=True))
        self.statuses: dict[str, str] = {}

    def notify(self, text: str, level: Level) -> None:
        """Written to stderr (``tau: warning: …`` for a warning)."""
        prefix = "" if level == "info" else f"{level}: "
        self.write(f"tau: {prefix}{text}")

    async def confirm(self, title: str, message: str, default: bool) -> bool:
        """The default."""
        return default

    async def select(self, title: str, options: Sequence[str], default: str | None) -> str | None:
        """The default."""
        return default

    def set_status(self, key: str, text: str | None) -> None:
        """Kept (nothing draws it)."""
        if text is None:
            self.statuses.pop(key, None)
        else:
            self.statuses[key] = text


@dataclass
class ExtensionAPI:
    """What ``setup(tau)`` receives: one per extension, for registering and for talking."""

    name: str
    """The extension's name (its file's or entry point's)."""
    path: Path
    """Its file (problems are reported with a line in it)."""
    host: Host = field(repr=False)
    handlers: dict[str, list[Handler]] = field(default_factory=dict, repr=False)
    tools: list[AgentTool] = field(default_factory=list, repr=False)
    commands: list[str] = field(default_factory=list, repr=False)

    @property
    def cwd(self) -> Path:
        """The session's working directory."""
        return self.host.cwd

    @property
    def has_ui(self) -> bool:
        """Whether someone answers questions (interactive and RPC mode; not print mode)."""
        return self.host.ui.has_ui

    # ----------------------------------------------------------------------- registering

    def on(self, event: str, handler: Handler | None = None) -> Any:
        """Call ``handler`` on ``event`` (also a decorator: ``@tau.on("tool_call")``)."""

        def register(function: Handler) -> Handler:
            self.handlers.setdefault(event, []).append(function)
            self.host.subscribe(self, event, function)
            return function

        return register if handler is None else register(handler)

    def register_tool(self, tool: AgentTool) -> None:
        """Give the model ``tool`` (an :class:`tau.agent.AgentTool`, e.g. from
        :func:`tau.agent.tool_from_function`); a name already taken is refused."""
        self.host.add_tool(self, tool)
        self.tools.append(tool)

    def register_command(
        self, name: str, help: str, handler: Callable[[ExtensionAPI, str], Any]
    ) -> None:
        """Declare ``/name`` (in the session's command registry, beside the built-in ones):
        ``handler(tau, argument)`` runs when it is typed."""
        self.host.add_command(self, name, help, handler)
        self.commands.append(name)

    def register_shortcut(
        self, keys: str, help: str, handler: Callable[[ExtensionAPI], Any]
    ) -> None:
        """In the interactive session, ``keys`` (prompt_toolkit's names: ``c-t``, ``f5``,
        ``escape t``) run ``handler(tau)``; tau's own keys cannot be taken."""
        self.host.add_shortcut(self, keys, help, handler)

    def register_model(self, model: Model) -> None:
        """Make ``model`` (a :class:`tau.ai.Model`, its API served by a built-in adapter or one
        given to :meth:`register_provider`) usable as ``-m provider/id``, ``/model provider/id``
        and in ``--models``, and when a session that used it is resumed."""
        self.host.add_model(self, model)

    def register_provider(self, record: Any) -> None:
        """Serve a new API (a :class:`tau.ai.adapters.Provider`): see
        :func:`tau.ai.adapters.register_provider`."""
        from tau.ai.adapters import register_provider

        register_provider(record)

    def register_flag(self, name: str, help: str, *, default: Any = None) -> None:
        """Accept ``--name`` on ``tau``'s command line; read it with :meth:`flag`.

        A flag whose ``default`` is a string takes a value (``--name VALUE`` or
        ``--name=VALUE``); any other is a switch (``--name`` gives True, ``--name=VALUE``
        still gives the text)."""
        self.host.add_flag(self, name, help, default)

    def flag(self, name: str) -> Any:
        """The value of ``--name`` (its ``default`` when not given)."""
        return self.host.flag_value(name)

    # ----------------------------------------------------------------------- talking

    def notify(self, text: str, level: Level = "info") -> None:
        """Show a one-line message."""
        self.host.in_loop(lambda: self.host.ui.notify(text, level))

    async def confirm(self, title: str, message: str = "", *, default: bool = False) -> bool:
        """Ask a yes/no question (print mode: ``default``)."""
        with self.host.asking():
            return await self.host.ui.confirm(title, message, default)

    async def select(
        self, title: str, options: Sequence[str], *, default: str | None = None
    ) -> str | None:
        """Ask for one of ``options`` (None when cancelled; print mode: ``default``)."""
        with self.host.asking():
            return await self.host.ui.select(title, list(options), default)

    def set_status(self, key: str, text: str | None) -> None:
        """Show ``text`` in the status line under ``key`` (None clears it)."""
        self.host.in_loop(lambda: self.host.ui.set_status(key, text))

    async def send(self, text: str) -> None:
        """Send ``text`` as the user's message (from a command)."""
        await self.host.send(text)

    # ----------------------------------------------------------------------- state

    def append_entry(self, custom_type: str, data: Any = None) -> None:
        """Keep ``data`` (JSON) in the session file as a ``custom`` entry the model never
        sees; :meth:`entries` reads them back when the session is resumed."""
        self.host.append_entry(custom_type, data)

    def entries(self, custom_type: str) -> list[Any]:
        """The data of this session's ``custom`` entries of ``custom_type``, oldest first."""
        return self.host.entries(custom_type)
