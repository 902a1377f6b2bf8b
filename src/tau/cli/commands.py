"""Slash commands: one registry shared by every front end that takes typed commands.

A command acts on the :class:`~tau.cli.app.App` (the session: agent, model, session file) and
writes what it has to say through ``ctx.say``; it knows nothing of how input is read or output
drawn. The interactive session dispatches to :func:`run_command` and offers :data:`COMMANDS`
(names, usage and each command's ``complete``) for completion; other front ends may dispatch
here too. Commands that only make sense in one front end (``/follow``, ``/exit``) stay there.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tau.cli.argtypes import THINKING_LEVELS

if TYPE_CHECKING:
    from tau.cli.app import App
    from tau.cli.render import Renderer


@dataclass(slots=True)
class CommandContext:
    """What a command may use: the session, the renderer's run statistics, and an output."""

    app: App
    renderer: Renderer
    say: Callable[[str], None]


CommandRun = Callable[[CommandContext, str], "Awaitable[None] | None"]
"""``(ctx, argument) -> None``: the argument is the text after the command name, stripped."""
CommandComplete = Callable[[CommandContext, str], Iterable[str]]
"""``(ctx, partial argument) -> candidates`` for the argument."""


@dataclass(frozen=True, slots=True)
class Command:
    """One slash command."""

    name: str
    usage: str
    help: str
    run: CommandRun
    complete: CommandComplete | None = None


COMMANDS: dict[str, Command] = {}
"""Every registered command by name (without the slash), in registration order."""


def command(
    name: str, usage: str, help: str, *, complete: CommandComplete | None = None
) -> Callable[[CommandRun], CommandRun]:
    """Register the decorated function as ``/name``."""

    def register(run: CommandRun) -> CommandRun:
        COMMANDS[name] = Command(name, usage, help, run, complete)
        return run

    return register


class UnknownCommandError(LookupError):
    """A line starting with ``/`` that names no command."""


def parse_command(line: str) -> tuple[Command, str]:
    """The command a line names and its argument; raises :class:`UnknownCommandError`."""
    name, _, argument = line.strip().removeprefix("/").partition(" ")
    found = COMMANDS.get(name)
    if found is None:
        raise UnknownCommandError(f"unknown command /{name} (/help lists them)")
    return found, argument.strip()


async def run_command(ctx: CommandContext, line: str) -> None:
    """Run the command ``line`` names (raises :class:`UnknownCommandError`).

    A command that fails says why through ``ctx.say`` (``/model: unknown model …``): a typo
    must never end the session.
    """
    found, argument = parse_command(line)
    try:
        result = found.run(ctx, argument)
        if inspect.isawaitable(result):
            await result
    except Exception as exc:
        ctx.say(f"/{found.name}: {str(exc) or type(exc).__name__}")


def help_lines() -> list[str]:
    """One line per registered command: its usage and what it does."""
    width = max((len(c.usage) for c in COMMANDS.values()), default=0)
    return [f"  {c.usage.ljust(width)}  {c.help}" for c in COMMANDS.values()]


@command("usage", "/usage", "tokens, cost, time, turns, requests and tool calls: last run, session")
def _usage(ctx: CommandContext, argument: str) -> None:
    ctx.say(f"last run: {ctx.renderer.last.describe()}")
    ctx.say(f"session:  {ctx.renderer.total.describe()}")


@command("new", "/new", "start a new session (the current one stays saved)")
def _new(ctx: CommandContext, argument: str) -> None:
    session = ctx.app.new_session()
    ctx.say(f"new session: {session.path}" if session else "new session (not saved)")


@command("session", "/session", "the session: file, messages, context, tokens and cost")
def _session(ctx: CommandContext, argument: str) -> None:
    for line in ctx.app.session_info().lines():
        ctx.say(line)


@command("copy", "/copy", "copy the last answer to the clipboard")
def _copy(ctx: CommandContext, argument: str) -> None:
    from tau.cli.clipboard import copy_to_clipboard

    text = ctx.app.last_answer()
    ctx.say("no answer to copy yet" if text is None else copy_to_clipboard(text))


@command("export", "/export [FILE]", "write the conversation to FILE (.md: Markdown, else HTML)")
def _export(ctx: CommandContext, argument: str) -> None:
    path = ctx.app.export(argument or None)
    ctx.say(f"exported to {path}")


def _complete_model(ctx: CommandContext, partial: str) -> list[str]:
    from tau.cli.models import complete_model

    return complete_model(partial)


@command(
    "model",
    "/model [PROVIDER/ID]",
    "show the model, or switch to another (an id alone works when unambiguous)",
    complete=_complete_model,
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
    f"/thinking [{'|'.join(THINKING_LEVELS)}]",
    "show or set the reasoning level",
    complete=_complete_thinking,
)
def _thinking(ctx: CommandContext, argument: str) -> None:
    if argument:
        ctx.app.set_thinking(argument.lower())
    level = ctx.app.agent.state.thinking_level
    note = "" if ctx.app.model.reasoning or level == "off" else " (this model does not reason)"
    ctx.say(f"thinking: {level}{note}")


@command("compact", "/compact [INSTRUCTIONS]", "summarise the older turns to free the context")
async def _compact(ctx: CommandContext, argument: str) -> None:
    from tau.cli.app import describe_compaction

    ctx.say("compacting…")
    result = await ctx.app.compact(argument or None)
    ctx.say(f"compacted: {describe_compaction(result)}")
