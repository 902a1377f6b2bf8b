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
    """Run the command ``line`` names (raises :class:`UnknownCommandError`)."""
    found, argument = parse_command(line)
    result = found.run(ctx, argument)
    if inspect.isawaitable(result):
        await result


def help_lines() -> list[str]:
    """One line per registered command: its usage and what it does."""
    width = max((len(c.usage) for c in COMMANDS.values()), default=0)
    return [f"  {c.usage.ljust(width)}  {c.help}" for c in COMMANDS.values()]


@command("usage", "/usage", "tokens, cost, time, turns, requests and tool calls: last run, session")
def _usage(ctx: CommandContext, argument: str) -> None:
    ctx.say(f"last run: {ctx.renderer.last.describe()}")
    ctx.say(f"session:  {ctx.renderer.total.describe()}")
