"""The slash commands every front end that takes typed commands shares.

Each is declared once in :data:`~tau.cli.registry.SLASH_COMMANDS` (name, help, argument, handler)
with ``@command``. A command acts on the :class:`~tau.cli.app.App` (the session: agent, model,
session file) and writes what it has to say through ``ctx.say``; it knows nothing of how input
is read or output drawn. The interactive session dispatches to :func:`run_command`, lists the
registry in ``/help`` and completes from it (names, and each argument's ``complete``). Commands
that only make sense in one front end (``/follow``, ``/exit``) are declared there, in a registry
of the same kind.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tau.cli.argtypes import THINKING_LEVELS
from tau.cli.registry import SLASH_COMMANDS, Arg

if TYPE_CHECKING:
    from tau.cli.app import App
    from tau.cli.render import Renderer


@dataclass(slots=True)
class CommandContext:
    """What a command may use: the session, the renderer's run statistics, an output, and (in
    a front end that sends typed messages) a way to send one, as ``/template`` does."""

    app: App
    renderer: Renderer
    say: Callable[[str], None]
    send: Callable[[str], Awaitable[None]] | None = None


async def run_command(ctx: CommandContext, line: str) -> None:
    """Run the command ``line`` names (raises :class:`~tau.cli.registry.UnknownCommandError`).

    A command that fails says why through ``ctx.say`` (``/model: unknown model …``): a typo
    must never end the session.
    """
    name = line.strip().removeprefix("/").partition(" ")[0]
    own = ctx.app.custom.commands  # the session's: templates, skills, extensions' commands
    registry = own if name not in SLASH_COMMANDS and name in own else SLASH_COMMANDS
    found, argument = registry.parse_line(line)
    assert found.handler is not None  # every slash command is declared with one
    try:
        result = found.handler(ctx, argument)
        if inspect.isawaitable(result):
            await result
    except Exception as exc:
        ctx.say(f"/{found.name}: {str(exc) or type(exc).__name__}")


command = SLASH_COMMANDS.command
"""Declare a slash command: ``@command(name, help, args=[Arg(...)])`` on its handler."""

_MOVED = {
    "COMMANDS": "SLASH_COMMANDS",
    "parse_command": "SLASH_COMMANDS.parse_line",
    "help_lines": "SLASH_COMMANDS.help_lines",
    "Command": "Command",
    "UnknownCommandError": "UnknownCommandError",
}


def __getattr__(name: str) -> Any:
    # The names this module had before the command registry: they keep working for one minor
    # version, from tau.cli.registry.
    if name not in _MOVED:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import warnings

    from tau.cli import registry

    new = _MOVED[name]
    warnings.warn(
        f"tau.cli.commands.{name} is deprecated: use tau.cli.registry.{new}",
        DeprecationWarning,
        stacklevel=2,
    )
    value: Any = registry
    for part in new.split("."):
        value = getattr(value, part)
    return value


@command("usage", "tokens, cost, time, turns, requests and tool calls: last run, session")
def _usage(ctx: CommandContext, argument: str) -> None:
    ctx.say(f"last run: {ctx.renderer.last.describe()}")
    ctx.say(f"session:  {ctx.renderer.total.describe()}")


@command("new", "start a new session (the current one stays saved)")
def _new(ctx: CommandContext, argument: str) -> None:
    session = ctx.app.new_session()
    ctx.say(f"new session: {session.path}" if session else "new session (not saved)")


@command("session", "the session: file, messages, context, tokens and cost")
def _session(ctx: CommandContext, argument: str) -> None:
    for line in ctx.app.session_info().lines():
        ctx.say(line)


@command("copy", "copy the last answer to the clipboard")
def _copy(ctx: CommandContext, argument: str) -> None:
    from tau.cli.clipboard import copy_to_clipboard

    text = ctx.app.last_answer()
    ctx.say("no answer to copy yet" if text is None else copy_to_clipboard(text))


@command(
    "export",
    "write the conversation to FILE (.md: Markdown, else HTML)",
    args=[Arg("file", metavar="FILE", nargs="?")],
)
def _export(ctx: CommandContext, argument: str) -> None:
    path = ctx.app.export(argument or None)
    ctx.say(f"exported to {path}")


def _complete_model(ctx: CommandContext, partial: str) -> list[str]:
    from tau.cli.models import complete_model

    return complete_model(partial)


@command(
    "model",
    "show the model, or switch to another (an id alone works when unambiguous)",
    args=[Arg("model", metavar="PROVIDER/ID", nargs="?", complete=_complete_model)],
)
def _model(ctx: CommandContext, argument: str) -> None:
    from tau.cli.models import model_spec

    if argument:
        ctx.app.switch_model(argument)
    model = ctx.app.model
    window = f"{model.context_window:,} tokens of context"
    ctx.say(f"model: {model_spec(model)} ({model.name}, {window})")


def _complete_thinking(ctx: CommandContext, partial: str) -> list[str]:
    return [level for level in THINKING_LEVELS if level.startswith(partial.strip().lower())]


@command(
    "thinking",
    "show or set the reasoning level",
    args=[Arg("level", choices=THINKING_LEVELS, nargs="?", complete=_complete_thinking)],
)
def _thinking(ctx: CommandContext, argument: str) -> None:
    if argument:
        ctx.app.set_thinking(argument.lower())
    level = ctx.app.agent.state.thinking_level
    note = "" if ctx.app.model.reasoning or level == "off" else " (this model does not reason)"
    ctx.say(f"thinking: {level}{note}")


@command(
    "compact",
    "summarise the older turns to free the context",
    args=[Arg("instructions", metavar="INSTRUCTIONS", nargs="?")],
)
async def _compact(ctx: CommandContext, argument: str) -> None:
    from tau.cli.app_events import describe_compaction

    ctx.say("compacting…")
    result = await ctx.app.compact(argument or None)
    ctx.say(f"compacted: {describe_compaction(result)}")


def _complete_login(ctx: CommandContext, partial: str) -> list[str]:
    from tau.ai.oauth import providers

    return [p for p in providers() if p.startswith(partial.strip())]


@command(
    "login",
    "log in to a subscription: PROVIDER [ENTERPRISE-DOMAIN] (keys: `tau login` in a shell)",
    args=[Arg("provider", metavar="PROVIDER", nargs="?", complete=_complete_login)],
)
async def _login(ctx: CommandContext, argument: str) -> None:
    import asyncio

    from tau.ai.oauth import LoginCallbacks, OAuthError, default_store, providers

    name, _, extra = argument.partition(" ")
    found = providers().get(name)
    if found is None:
        ctx.say(
            f"logins: {', '.join(providers())} (an API key: `tau login {name or 'PROVIDER'}` in a shell)"
        )
        return
    loop = asyncio.get_running_loop()

    def say(text: str) -> None:
        loop.call_soon_threadsafe(ctx.say, text)

    def on_auth(url: str, instructions: str | None) -> None:
        say(f"open {url}" + (f"\n{instructions}" if instructions else ""))

    def on_prompt(message: str, allow_empty: bool) -> str:
        # The session's input belongs to the session: only what the command line gave answers.
        if extra.strip() or allow_empty:
            return extra.strip()
        raise OAuthError(f"{found.name} needs a pasted code: run `tau login {found.id}` in a shell")

    callbacks = LoginCallbacks(on_auth, on_prompt, say)
    credentials = await asyncio.to_thread(found.login, callbacks)
    default_store().set_oauth(found.id, credentials)
    ctx.say(f"logged in to {found.name}; `/model {found.id}/…` uses it")


@command(
    "logout",
    "forget a stored login or key",
    args=[Arg("provider", metavar="PROVIDER", complete=_complete_login)],
)
def _logout(ctx: CommandContext, argument: str) -> None:
    from tau.ai.oauth import default_store

    if not argument:
        ctx.say(
            "/logout PROVIDER: stored: " + (", ".join(sorted(default_store().read_all())) or "none")
        )
        return
    ctx.say(
        f"logged out of {argument}"
        if default_store().remove(argument)
        else f"nothing stored for {argument}"
    )


@command("reload", "load extensions, skills, prompt templates and context files again")
def _reload(ctx: CommandContext, argument: str) -> None:
    custom = ctx.app.reload()
    found = custom.resources
    counts = (len(custom.extensions), len(found.skills), len(found.templates))
    ctx.say("reloaded: {} extensions, {} skills, {} prompt templates".format(*counts))
