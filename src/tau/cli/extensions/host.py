"""Everything a session adds to ``tau`` beyond its built-ins: resources (skills, templates,
context files) and extensions, with the one slash-command registry they declare commands in.

The :class:`~tau.cli.app.App` holds one :class:`Customizations`; it gives the agent the
extensions' tools and hooks (``before_tool_call``, ``transform_context``, the event sink), and
a front end gives it its :class:`~tau.cli.extensions.api.ExtensionUI` and says when the session
starts and ends. ``/reload`` loads it all again.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tau.agent import (
    Agent,
    AgentEvent,
    AgentMessage,
    AgentTool,
    BeforeToolCallContext,
    BeforeToolCallResult,
)
from tau.ai import AbortSignal, Model
from tau.cli.custom_models import add_model, remove_model
from tau.cli.extensions.api import (
    Block,
    ContextEvent,
    ExtensionAPI,
    ExtensionUI,
    Handler,
    HeadlessUI,
    SessionEvent,
    ToolCallEvent,
)
from tau.cli.extensions.bus import DEFAULT_TIMEOUT, EventBus, describe_failure
from tau.cli.extensions.loader import ExtensionSource, discover, import_source
from tau.cli.registry import SLASH_COMMANDS, Command, Registry
from tau.cli.resources import (
    ResourceOptions,
    Resources,
    load_resources,
    report_line,
    report_problems,
)
from tau.cli.tools.paths import Workspace


@dataclass(frozen=True, slots=True)
class ExtensionOptions:
    """What the command line asks of extensions."""

    enabled: bool = True
    """False with ``--no-extensions`` (``--extension`` files still load)."""
    paths: tuple[str, ...] = ()
    """``--extension PATH``, in order."""
    entry_points: bool = True
    timeout: float = DEFAULT_TIMEOUT
    """Seconds a handler may run (``"extensionTimeout"`` in config.json)."""
    disabled: frozenset[str] = frozenset()
    """Extensions left out by name (``tau config disable extension:NAME``)."""
    flags: tuple[str, ...] = ()
    """The command line's ``--name`` and ``--name=VALUE`` that extensions declared."""


class Customizations:
    """The session's resources and extensions (see the module's note)."""

    def __init__(
        self,
        workspace: Workspace,
        resources: ResourceOptions,
        extensions: ExtensionOptions,
        session: Callable[[], Any] = lambda: None,
    ) -> None:
        self.workspace = workspace
        self.cwd = workspace.cwd
        self.resource_options = resources
        self.extension_options = extensions
        self.builtin_tools: set[str] = set()
        self.session = session
        self.commands: Registry[Any] = Registry("slash", "/", "/help lists them")
        """The session's own slash commands: templates, skills and extensions' commands."""
        self.reserved = set(SLASH_COMMANDS.names())
        self.resources = Resources()
        self.extensions: list[ExtensionAPI] = []
        self.tools: list[AgentTool] = []
        self.ui: ExtensionUI = HeadlessUI()
        self.bus = EventBus(self.report, self.disable)
        self.bus.timeout = extensions.timeout
        self._sender: Callable[[str], Any] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._resource_commands: list[str] = []
        self.flags: dict[str, tuple[str, Any]] = {}
        """Each flag the extensions declared: its help and default."""
        self.models: list[Model] = []
        """The models the extensions added (forgotten on ``/reload``)."""
        self.shortcuts: dict[str, tuple[str, ExtensionAPI, Callable[..., Any]]] = {}
        """Each key the extensions bound: its help, extension and handler."""
        self._agent: Agent | None = None
        self._unsubscribe: Callable[[], None] | None = None
        self.mode = "print"

    # ----------------------------------------------------------------------- loading

    def load(self, builtin_tools: Sequence[str] | None = None) -> list[AgentTool]:
        """Find resources and load extensions (again, on ``/reload``), then declare the
        commands they bring; returns the extensions' tools (``builtin_tools``: the names they
        may not take, kept from the first call)."""
        if builtin_tools is not None:
            self.builtin_tools = set(builtin_tools)
        self.resources = load_resources(self.cwd, self.resource_options)
        self.resources.open_to(self.workspace)
        report_problems(self.resources.problems)
        self.bus.clear()
        for model in self.models:
            remove_model(model)
        self.extensions, self.tools, self.flags, self.shortcuts = [], [], {}, {}
        self.models = []
        for command in list(self.commands):
            self.commands.remove(command.name)
        options = self.extension_options
        from tau.cli.config import tau_home

        sources = discover(
            self.cwd,
            tau_home(),
            options.paths,
            [root for root, _ in self.resource_options.extra_roots],
            found_ones=options.enabled,  # --no-extensions: the --extension files only
            entry_points=options.enabled and options.entry_points,
        )
        for source in sources:
            if source.name not in options.disabled:
                self._load_one(source)
        self._declare_resources()
        self._follow_agent()
        return list(self.tools)

    def attach(self, agent: Agent) -> None:
        """Pass ``agent``'s events to the handlers: only while some handler wants them, so a
        session without one pays nothing per event."""
        self._agent = agent
        self._follow_agent()

    def _follow_agent(self) -> None:
        wanted = self.bus.has_any(exclude=_OWN_EVENTS)
        if wanted and self._unsubscribe is None and self._agent is not None:
            self._unsubscribe = self._agent.subscribe(self.on_agent_event)
        elif not wanted and self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None

    def _declare_resources(self) -> None:
        for name in self._resource_commands:
            if name in self.commands:
                self.commands.remove(name)
        taken = self.reserved | set(self.commands.names())
        self._resource_commands = self.resources.fill(self.commands, taken)
        report_problems(self.resources.problems)

    def _load_one(self, source: ExtensionSource) -> None:
        extension = ExtensionAPI(source.name, source.path or Path(source.name), self)
        try:
            _, setup = import_source(source)
            self.extensions.append(extension)
            setup(extension)
        except (Exception, SystemExit) as exc:  # SyntaxError, sys.exit(): left out, not fatal
            if extension in self.extensions:
                self.disable(extension)
            self.report(describe_failure(exc, extension, "loading"))

    def reserve(self, names: Sequence[str]) -> None:
        """Names of a front end's own commands: a template of that name is left out."""
        self.reserved.update(names)
        self._declare_resources()

    def report(self, text: str) -> None:
        """A problem with an extension: one line on stderr (each line once)."""
        report_line(text)

    def disable(self, extension: ExtensionAPI) -> None:
        """Leave ``extension`` out from now on: its handlers, commands and tools."""
        if extension not in self.extensions:
            return
        self.extensions.remove(extension)
        self.bus.drop(extension)
        for name in extension.commands:
            if name in self.commands:
                self.commands.remove(name)
        self.tools = [t for t in self.tools if t not in extension.tools]
        self._follow_agent()
        self.report(f"extension {extension.name} is disabled; the session goes on")

    # ----------------------------------------------------------------------- ExtensionAPI's host

    def subscribe(self, extension: ExtensionAPI, event: str, handler: Handler) -> None:
        """See :meth:`ExtensionAPI.on`."""
        self.bus.subscribe(extension, event, handler)

    def asking(self) -> contextlib.AbstractContextManager[None]:
        """See :meth:`EventBus.asking`."""
        return self.bus.asking()

    def in_loop(self, action: Callable[[], None]) -> None:
        """Run ``action`` on the session's event loop (a plain handler runs in a thread)."""
        loop = self._loop
        if loop is None or threading.current_thread() is threading.main_thread():
            action()
            return
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(action)

    def add_tool(self, extension: ExtensionAPI, tool: AgentTool) -> None:
        """See :meth:`ExtensionAPI.register_tool`."""
        taken = self.builtin_tools | {t.name for t in self.tools}
        if tool.name in taken:
            raise ValueError(f"a tool named {tool.name!r} is already registered")
        self.tools.append(tool)

    def add_command(
        self, extension: ExtensionAPI, name: str, help: str, handler: Callable[..., Any]
    ) -> None:
        """See :meth:`ExtensionAPI.register_command`."""
        if name in self.reserved or name in self.commands:
            raise ValueError(f"/{name} is already a command")

        async def run(ctx: Any, argument: str) -> None:
            self._sender = getattr(ctx, "send", None)
            try:
                await self.bus.call(handler, extension, argument)
            except asyncio.CancelledError:
                raise
            except (Exception, SystemExit) as exc:
                self.report(describe_failure(exc, extension, f"/{name}"))
                self.disable(extension)
            finally:
                self._sender = None

        self.commands.add(Command(name, help, run))

    def add_flag(self, extension: ExtensionAPI, name: str, help: str, default: Any) -> None:
        """See :meth:`ExtensionAPI.register_flag`."""
        if not re.fullmatch(r"[a-z][a-z0-9-]*", name):
            raise ValueError(f"--{name}: a flag is lowercase letters, digits and hyphens")
        self.flags[name] = (help, default)

    def add_model(self, extension: ExtensionAPI, model: Model) -> None:
        """See :meth:`ExtensionAPI.register_model`."""
        add_model(model)
        self.models.append(model)

    def add_shortcut(
        self, extension: ExtensionAPI, keys: str, help: str, handler: Callable[..., Any]
    ) -> None:
        """See :meth:`ExtensionAPI.register_shortcut`."""
        normal = " ".join(keys.lower().split())
        if normal in RESERVED_KEYS or normal in self.shortcuts:
            raise ValueError(f"the key {keys!r} is taken")
        self.shortcuts[normal] = (help, extension, handler)

    async def run_shortcut(self, keys: str) -> None:
        """The handler bound to ``keys`` (a failure disables its extension)."""
        found = self.shortcuts.get(keys)
        if found is None or found[1] not in self.extensions:
            return
        _, extension, handler = found
        try:
            await self.bus.call(handler, extension)
        except asyncio.CancelledError:
            raise
        except (Exception, SystemExit) as exc:
            self.report(describe_failure(exc, extension, f"the {keys} key"))
            self.disable(extension)

    def flag_value(self, name: str) -> Any:
        """See :meth:`ExtensionAPI.flag`."""
        for raw in self.extension_options.flags:
            given, equals, value = raw.removeprefix("--").partition("=")
            if given == name:
                return value if equals else True
        return self.flags.get(name, ("", None))[1]

    async def send(self, text: str) -> None:
        """See :meth:`ExtensionAPI.send`."""
        if self._sender is None:
            raise RuntimeError("tau.send works only while a command of the extension runs")
        await self._sender(text)

    def append_entry(self, custom_type: str, data: Any) -> None:
        """See :meth:`ExtensionAPI.append_entry`."""
        session = self.session()
        if session is not None:
            session.record_custom(custom_type, data)

    def entries(self, custom_type: str) -> list[Any]:
        """See :meth:`ExtensionAPI.entries`."""
        session = self.session()
        custom = session.custom_entries if session is not None else []
        return [data for kind, data in custom if kind == custom_type]

    # ----------------------------------------------------------------------- the agent's hooks

    async def before_tool_call(
        self, context: BeforeToolCallContext, signal: AbortSignal
    ) -> BeforeToolCallResult | None:
        """The ``tool_call`` handlers' verdict: the first block stops the call."""
        if not self.bus.has("tool_call"):
            return None
        call = context.tool_call
        event = ToolCallEvent(call.name, call.id, context.args)
        for answer in await self.bus.emit("tool_call", event):
            reason = _block_reason(answer)
            if reason is not None:
                return BeforeToolCallResult(block=True, reason=reason)
        return None

    async def transform_context(
        self, messages: list[AgentMessage], signal: AbortSignal
    ) -> list[AgentMessage]:
        """The ``context`` handlers' messages for the next call (each sees the last one's)."""
        if not self.bus.has("context"):
            return messages
        event = ContextEvent(list(messages))
        for answer in await self.bus.emit("context", event):
            if isinstance(answer, list):
                event.messages = answer
        return event.messages

    def on_agent_event(self, event: AgentEvent) -> Any:
        """The agent's events, to the handlers of their ``type`` (nothing when none listens)."""
        if not self.bus.has(event.type):
            return None
        return self.bus.emit(event.type, event)

    # ----------------------------------------------------------------------- the front end's

    async def start(self, ui: ExtensionUI | None, mode: str, session_file: Path | None) -> None:
        """The session starts (``session_start``), answered through ``ui``."""
        self._loop = asyncio.get_running_loop()
        if ui is not None:
            self.ui = ui
        self.mode = mode
        if self.bus.has("session_start"):
            await self.bus.emit("session_start", SessionEvent("session_start", mode, session_file))

    async def shutdown(self, session_file: Path | None = None) -> None:
        """The session ends (``session_shutdown``)."""
        if self.bus.has("session_shutdown"):
            event = SessionEvent("session_shutdown", self.mode, session_file)
            await self.bus.emit("session_shutdown", event)

    def runs_command(self, text: str) -> bool:
        """Whether ``text`` names an extension's command (``/name …``)."""
        if not text.startswith("/"):
            return False
        name = text[1:].partition(" ")[0]
        return any(name in extension.commands for extension in self.extensions)

    async def dispatch(self, text: str, send: Callable[[str], Any]) -> None:
        """Run the extension command ``text`` names (print and RPC mode, where no registry
        dispatches typed commands); what it sends with ``tau.send`` goes to ``send``."""
        found, argument = self.commands.parse_line(text)
        assert found.handler is not None  # declared by add_command
        result = found.handler(_SendOnly(send), argument)
        if inspect.isawaitable(result):
            await result


RESERVED_KEYS = frozenset(
    {"enter", "c-j", "c-m", "escape enter", "c-c", "c-d", "c-p", "tab", "c-i"}
)
"""Keys the interactive session uses itself."""
_OWN_EVENTS = frozenset({"tool_call", "context", "session_start", "session_shutdown"})
"""Events the host raises itself: not the agent's."""


@dataclass(slots=True)
class _SendOnly:
    send: Callable[[str], Any]


def _block_reason(answer: Any) -> str | None:
    if isinstance(answer, Block):
        return answer.reason
    if isinstance(answer, dict) and answer.get("block"):
        return str(answer.get("reason") or "Blocked by an extension.")
    return None


_FLAG = re.compile(r"--[a-z][a-z0-9-]*(=.*)?", re.S)


def preload(paths: Sequence[str], enabled: bool = True) -> Customizations:
    """The extensions loaded (their ``setup`` run) before the run's own load, for what the
    command line needs from them first: the flags they declare, the models they add (which
    stay findable by ``provider/id``). No skills, templates or context files are read."""
    from tau.cli.tools.paths import Workspace

    custom = Customizations(
        Workspace(Path.cwd().resolve()),
        ResourceOptions(skills=False, templates=False, context_files=False),
        ExtensionOptions(enabled=enabled, paths=tuple(paths)),
    )
    custom.load()
    return custom


def declared_flags(given: Sequence[str], paths: Sequence[str], enabled: bool) -> dict[str, Any]:
    """The flags the extensions declare (name -> default), loading them (their ``setup``
    run) to find out; ``{}`` without loading when some of ``given`` (``tau``'s unknown
    arguments) is no flag at all, which no extension can make right."""
    if not given or not all(_FLAG.fullmatch(g) for g in given):
        return {}
    return {name: default for name, (_, default) in preload(paths, enabled).flags.items()}


def join_flag_values(
    argv: Sequence[str], given: Sequence[str], declared: Mapping[str, Any]
) -> list[str] | None:
    """``argv`` with each ``--name VALUE`` of a declared flag that takes a value (its default
    is a string) written ``--name=VALUE``; None when ``given`` has no such flag bare."""
    wanted = {g[2:] for g in given if "=" not in g and isinstance(declared.get(g[2:]), str)}
    if not wanted:
        return None
    joined: list[str] = []
    index = 0
    while index < len(argv):
        token = argv[index]
        if token == "--":
            joined += argv[index:]
            break
        following = argv[index + 1] if index + 1 < len(argv) else ""
        if token.startswith("--") and token[2:] in wanted and following[:1] not in ("", "-"):
            joined.append(f"{token}={following}")
            index += 2
            continue
        joined.append(token)
        index += 1
    return joined


def unknown_flags(given: Sequence[str], declared: Mapping[str, Any]) -> list[str]:
    """The arguments of ``given`` that are no declared flag (what ``tau`` refuses)."""
    return [g for g in given if not _FLAG.fullmatch(g) or g[2:].partition("=")[0] not in declared]
