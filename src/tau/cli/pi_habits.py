"""pi's command-line and session habits: ``-p``, ``-i``, ``--provider``, ``--api-key``,
``--no-tools``, ``-m MODEL:THINKING``, ``--models A,B,C`` with Ctrl+P, ``!command`` and
``!!command``, ``/settings`` and ``/hotkeys``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
from pathlib import Path
from typing import TYPE_CHECKING

from tau.cli.argtypes import THINKING_LEVELS
from tau.cli.commands import CommandContext, command
from tau.cli.errors import UsageError
from tau.cli.input_text import stdin_is_terminal

if TYPE_CHECKING:
    from tau.ai import Model, UserMessage
    from tau.cli.app import App

SHELL_TIMEOUT = 120.0
"""Seconds a ``!command`` may run."""
MAX_SHELL_OUTPUT = 50_000
"""Characters of a ``!command``'s output kept (the end is kept: errors come last)."""
HOTKEYS = (
    ("Enter", "send the message"),
    ("Alt+Enter", "a new line"),
    ("Ctrl+C", "abort the run (twice: leave)"),
    ("Ctrl+D", "leave"),
    ("Ctrl+P", "the next model of --models"),
    ("Tab", "complete /commands, their arguments and @paths"),
    ("!command", "run a shell command; its output goes to the model with the next message"),
    ("!!command", "run a shell command; its output is only shown"),
)


def split_thinking(spec: str) -> tuple[str, str | None]:
    """``sonnet:high`` → ``("sonnet", "high")``; a suffix that is no thinking level stays
    (``llama3:8b``)."""
    model, colon, level = spec.rpartition(":")
    if colon and model and level.lower() in THINKING_LEVELS:
        return model, level.lower()
    return spec, None


def apply_pi_flags(args: argparse.Namespace) -> str | None:
    """Fold pi's flags into tau's (``args`` is changed); returns ``-i``'s first message."""
    if args.no_tools:
        if args.tools is not None:
            raise UsageError("--no-tools and --tools exclude each other")
        args.tools = "none"
    if args.model:
        args.model, level = split_thinking(args.model)
        if level is not None and args.thinking is None:
            args.thinking = level
    if args.provider:
        if args.model is None:
            from tau.cli.models import first_model

            model = first_model(args.provider)
            if model is None:
                raise UsageError(f"--provider {args.provider}: no model of that provider")
            args.model = f"{model.provider}/{model.id}"
        elif "/" not in args.model:
            args.model = f"{args.provider}/{args.model}"
    if args.print and args.interactive:
        raise UsageError("-p and -i exclude each other")
    if args.print and not args.prompt and stdin_is_terminal():
        raise UsageError("-p needs a prompt")
    if not args.interactive:
        return None
    if args.mode != "text" or args.json:
        raise UsageError("-i starts an interactive session: not with --json or --mode")
    first = " ".join(args.prompt).strip() or None
    args.prompt = []
    return first


def use_api_key(key: str | None, model: Model) -> None:
    """``--api-key``: the key of ``model``'s provider for this process (and so for the
    provider's own environment variable, which nothing writes to disk)."""
    if not key:
        return
    from tau.ai import key_variables

    names = key_variables(model.provider)
    if not names:
        raise UsageError(f"--api-key: {model.provider} takes no API key")
    os.environ[names[-1]] = key


def cycle_model(app: App) -> str:
    """Ctrl+P: switch to the next model of ``--models``; what to tell the user."""
    specs = app.settings.cycle_models
    if not specs:
        return "Ctrl+P cycles through models given with --models A,B,C"
    from tau.cli.models import model_spec

    current = model_spec(app.model)
    names = [split_thinking(s)[0] for s in specs]
    index = (names.index(current) + 1) % len(specs) if current in names else 0
    spec, level = split_thinking(specs[index])
    try:
        model = app.switch_model(spec)
        if level is not None:
            app.set_thinking(level)
    except Exception as exc:
        return f"model {spec}: {exc}"
    return f"model: {model_spec(model)} · thinking: {app.agent.state.thinking_level}"


async def run_shell(line: str, cwd: Path) -> tuple[str, str, bool]:
    """Run ``!command`` or ``!!command``: the command, its output (stdout and stderr, the end
    kept), and whether the model gets it."""
    share = not line.startswith("!!")
    command_text = line[2:] if not share else line[1:]
    command_text = command_text.strip()
    if not command_text:
        raise UsageError("give a command after ! (or !!)")
    process = await asyncio.create_subprocess_shell(
        command_text,
        cwd=cwd,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        data, _ = await asyncio.wait_for(process.communicate(), SHELL_TIMEOUT)
        status = f"exit {process.returncode}"
    except TimeoutError:
        process.kill()
        data, _ = await process.communicate()
        status = f"stopped after {SHELL_TIMEOUT:g} s"
    output = data.decode("utf-8", errors="replace")
    if len(output) > MAX_SHELL_OUTPUT:
        output = (
            f"[… {len(output) - MAX_SHELL_OUTPUT} characters cut]\n" + output[-MAX_SHELL_OUTPUT:]
        )
    return command_text, f"{output.rstrip()}\n[{status}]".lstrip(), share


def shell_message(command_text: str, output: str) -> UserMessage:
    """What the model reads of a ``!command``."""
    from tau.ai import UserMessage

    return UserMessage(f"I ran `{command_text}`:\n```\n{output}\n```")


async def bang(app: App, line: str, say: object) -> None:
    """``!command``/``!!command`` in the session: shown; with one ``!``, added to the context
    (and the session) for the next message."""
    from collections.abc import Callable

    assert callable(say)
    show: Callable[[str], None] = say
    if app.busy:
        show("wait for the agent to finish (or abort it) before running a command")
        return
    try:
        command_text, output, share = await run_shell(line, app.settings.workspace.cwd)
    except (UsageError, OSError) as exc:
        show(f"!: {exc}")
        return
    show(output)
    if share:
        message = shell_message(command_text, output)
        app.agent.replace_messages([*app.agent.state.messages, message])
        if app.session is not None:
            app.session.record_message(message)
        show("(the output goes to the model with your next message)")


@command("hotkeys", "the keys of the interactive session (and the extensions')")
def _hotkeys(ctx: CommandContext, argument: str) -> None:
    keys = [
        *HOTKEYS,
        *((k, f"{h} ({e.name})") for k, (h, e, _) in ctx.app.custom.shortcuts.items()),
    ]
    width = max(len(key) for key, _ in keys)
    for key, what in keys:
        ctx.say(f"  {key.ljust(width)}  {what}")


@command("settings", "this session's settings: model, tools, resources, extensions, files")
def _settings(ctx: CommandContext, argument: str) -> None:
    from tau.cli.config import config_path
    from tau.cli.models import model_spec

    app = ctx.app
    custom = app.custom
    resources = custom.resources
    rows = [
        ("model", f"{model_spec(app.model)} · thinking: {app.agent.state.thinking_level}"),
        ("cycle (Ctrl+P)", ", ".join(app.settings.cycle_models) or "-"),
        ("tools", ", ".join(t.name for t in app.tools) or "none"),
        ("skills", ", ".join(s.name for s in resources.skills) or "none"),
        ("prompt templates", ", ".join(t.name for t in resources.templates) or "none"),
        ("context files", ", ".join(str(p) for p in resources.context_files) or "none"),
        ("extensions", ", ".join(e.name for e in custom.extensions) or "none"),
        ("session", str(app.session.path) if app.session else "not saved"),
        ("settings file", str(config_path())),
    ]
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        ctx.say(f"  {name.ljust(width)}  {value}")
