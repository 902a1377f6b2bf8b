"""The ``tau`` command.

::

    tau "prompt"                 one agent run, the answer streamed to stdout
    cat file | tau "prompt"      the same, with the piped text after the prompt
    tau --json "prompt"          every agent event as one JSON line
    tau --output-schema S "p"    only the validated JSON output on stdout (S: file or module:Model)
    tau                          an interactive session
    tau -c / tau -r              continue this directory's last session / pick one
    tau --mode rpc               JSON commands on stdin, events and responses on stdout
    tau models [provider]        the catalog and models.json, and which providers have keys
    tau sessions [list|show|export|rm]   the saved sessions
    tau mcp list [FILE]          the configured MCP servers: status and tools
    tau batch IN.jsonl -o OUT    one agent over every item of a JSONL file (tau.cli.batch)
    tau help [COMMAND]           this help, or a command's

Every run is saved under ``$TAU_HOME/sessions/<directory>/`` unless ``--no-session``.

Exit status: 0 on success, 1 when the run fails (one line on stderr; a traceback only with
``--debug``), 2 for bad usage, 130 when interrupted, 141 when stdout is closed early.

The run's flags and every subcommand are declared once (:mod:`tau.cli.registry`,
:mod:`tau.cli.flags`, :mod:`tau.cli.subcommands`); this module parses with those declarations
and dispatches. Start-up matters (``tau --help`` runs often): only the standard library is
imported to parse flags; the agent, pydantic and the providers load once a run starts.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from tau import __version__
from tau.cli.errors import (
    EXIT_BROKEN_PIPE,
    EXIT_FAILURE,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    UsageError,
    error_line,
)
from tau.cli.flags import (
    DEBUG,
    FALLBACK,
    MAX_COST,
    MAX_TOKENS,
    MAX_TURNS,
    MCP_FILE,
    MODEL,
    OPTION,
    OUTPUT_SCHEMA,
    PI_FLAGS,
    RESOURCE_FLAGS,
    SESSION_FLAGS,
    SYSTEM,
    TEMPERATURE,
    THINKING,
    TIMEOUT,
    TOOLS,
    YES,
)
from tau.cli.input_text import prompt_parts, stdin_is_terminal
from tau.cli.registry import Arg, Command, build_parser
from tau.cli.subcommands import SUBCOMMANDS

CLI_EXTRA = ("prompt_toolkit", "rich")
"""What the ``[cli]`` extra installs: the interactive session needs both."""


class MissingExtraError(RuntimeError):
    """A feature needs an extra that is not installed."""


def _run(args: argparse.Namespace) -> int:
    """A run: one-shot with a prompt (or piped input), else the interactive session or RPC."""
    from tau.cli.sessions_cli import PickCancelled, check_can_pick

    mode = "json" if args.json else args.mode
    if mode == "rpc":
        if args.prompt or args.json:
            raise UsageError("--mode rpc takes its prompts on stdin, as JSON commands")
        from tau.cli.rpc import run_rpc
        from tau.cli.run_settings import settings_from_args

        return run_rpc(settings_from_args(args))
    if mode == "json" and not args.prompt and stdin_is_terminal():
        raise UsageError("--json needs a prompt")
    if args.resume:
        check_can_pick()  # before stdin is read as the prompt
    from tau.cli.pi_habits import apply_pi_flags

    first = apply_pi_flags(args)  # -i: the prompt is the session's first message
    parts = prompt_parts(args.prompt)
    if args.output_schema is not None and parts is None:
        raise UsageError("--output-schema needs a prompt")
    if args.attach and parts is None:
        raise UsageError("--attach needs a prompt (in a session, type @FILE in a message)")
    from tau.cli.run_settings import settings_from_args

    try:
        settings = settings_from_args(args)
    except PickCancelled:
        return EXIT_OK
    if parts is not None:
        import asyncio

        from tau.cli.input_text import one_shot_prompt
        from tau.cli.oneshot import run_once

        prompt = one_shot_prompt(parts, args.attach, settings)
        run = run_once(settings, prompt, json_mode=mode == "json", named_model=args.model)
        return asyncio.run(run)
    try:
        from tau.cli.interactive import run_interactive
    except ImportError as exc:
        if not any(name in (exc.name or str(exc)) for name in CLI_EXTRA):
            raise
        raise MissingExtraError(
            f"the interactive session needs {' and '.join(CLI_EXTRA)} (pip install 'tau[cli]')"
        ) from None
    return run_interactive(settings, first=first)


RUN = Command(
    "tau",
    "A small coding agent. With a prompt: one run (piped input is added after the prompt); "
    "without: an interactive session.",
    _run,
    args=(
        Arg("prompt", "what to ask (omit for an interactive session)", nargs="*"),
        Arg(
            "version",
            "print tau's version",
            flags=("--version",),
            action="version",
            default=f"tau {__version__}",
        ),
        MODEL,
        Arg(
            "base_url",
            "use the server at URL, e.g. http://localhost:11434/v1 (OpenAI chat-completions "
            "protocol for a bare id or none: the server's model; add servers to "
            "$TAU_HOME/models.json to keep them)",
            flags=("--base-url",),
            metavar="URL",
        ),
        THINKING,
        SYSTEM,
        *RESOURCE_FLAGS,
        *PI_FLAGS,
        Arg(
            "attach",
            "send FILE with the prompt (repeatable; text inline, images to models that take "
            "them); @FILE in the prompt does the same",
            flags=("-a", "--attach"),
            action="append",
            default=[],
            metavar="FILE",
        ),
        TOOLS,
        Arg(
            "allow_path",
            "let the tools reach DIR outside the working directory (repeatable)",
            flags=("--allow-path",),
            action="append",
            default=[],
            metavar="DIR",
        ),
        *SESSION_FLAGS,
        YES,
        Arg.switch("json", "print every event as one JSON line", "--json"),
        Arg(
            "mode",
            "json: as --json; rpc: read JSON commands from stdin, one per line, and write "
            "events and responses to stdout",
            flags=("--mode",),
            choices=("text", "json", "rpc"),
            default="text",
        ),
        OUTPUT_SCHEMA,
        MAX_TOKENS,
        TEMPERATURE,
        OPTION,
        TIMEOUT,
        MCP_FILE,
        MAX_TURNS,
        MAX_COST,
        FALLBACK,
        DEBUG,
    ),
    epilog="Exit status: 0 ok, 1 the run failed, 2 bad usage, 130 interrupted, 141 stdout "
    "closed early.",
)
"""``tau [flags] [prompt]``: a run, the command without a subcommand."""


def run_parser() -> argparse.ArgumentParser:
    """The parser of a run (``tau [flags] [prompt]``), its help listing the subcommands."""
    lines = "\n".join(SUBCOMMANDS.help_lines())
    command = Command(
        RUN.name,
        RUN.help,
        RUN.handler,
        RUN.args,
        epilog=f"commands (each has --help):\n{lines}\n\n{RUN.epilog}",
    )
    parser = build_parser(command, "tau", argparse.RawDescriptionHelpFormatter)
    parser.description = _wrap(RUN.help)
    return parser


def _wrap(text: str) -> str:
    import textwrap

    return textwrap.fill(text, 78)


def subcommand_parser(name: str) -> argparse.ArgumentParser:
    """The parser of the subcommand ``name`` (``tau batch``), from its declaration."""
    command = SUBCOMMANDS[name]
    return build_parser(command, f"tau {command.name}")


def _help(args: argparse.Namespace) -> int:
    if not args.topic:
        run_parser().print_help()
        return EXIT_OK
    topic = args.topic[0]
    if len(args.topic) > 1 or topic not in SUBCOMMANDS:
        words = " ".join(args.topic)
        raise UsageError(
            f"{SUBCOMMANDS.unknown(topic)} (commands: {', '.join(SUBCOMMANDS.names())}); "
            f'to ask the model, quote the prompt: tau "help {words}"'
        )
    subcommand_parser(topic).print_help()
    return EXIT_OK


HELP = SUBCOMMANDS.add(
    Command(
        "help",
        "this help, or a command's (`tau help batch` is `tau batch --help`)",
        _help,
        args=(Arg("topic", "a command", nargs="*", metavar="COMMAND"),),
    )
)


def _dispatch(argv: Sequence[str]) -> int:
    # A subcommand is a first word alone; any other first word starts a prompt.
    command = SUBCOMMANDS.get(argv[0]) if argv else None
    if command is None:
        parser = run_parser()
        args, extra = parser.parse_known_intermixed_args(argv)
        if extra:  # an extension's --flag, or a mistake
            from tau.cli.extensions import declared_flags, join_flag_values, unknown_flags

            declared = declared_flags(extra, args.extension, not args.no_extensions)
            # `--name VALUE` for an extension's flag that takes a value: argparse took VALUE
            # for the prompt; joined as `--name=VALUE`, the command line is parsed again.
            joined = join_flag_values(argv, extra, declared)
            if joined is not None:
                argv = joined
                args, extra = parser.parse_known_intermixed_args(argv)
            unknown = unknown_flags(extra, declared)
            if unknown:
                parser.error(f"unrecognized arguments: {' '.join(unknown)}")
        args.extension_flags = tuple(extra)
        return _run(args)
    args = subcommand_parser(command.name).parse_args(argv[1:])
    handler = args.handler
    if handler is None:  # a group whose child was not named (argparse requires one)
        raise UsageError(f"tau {command.name} needs a command (tau help {command.name})")
    status: int = handler(args)
    return status


def _detach_stdout() -> None:
    # Nothing more can reach the reader; pointing the descriptor at /dev/null keeps the
    # interpreter's final flush from reporting the broken pipe.
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``tau`` script."""
    args = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in args
    try:
        return _dispatch(args)
    except BrokenPipeError:
        _detach_stdout()
        return EXIT_BROKEN_PIPE
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except Exception as exc:
        if isinstance(exc, UsageError):
            print(f"tau: {exc}", file=sys.stderr)
            return EXIT_USAGE
        if debug:
            import traceback

            traceback.print_exc()
        text = str(exc).strip() or type(exc).__name__
        error_line(f"error: {text.splitlines()[0]}")
        return EXIT_FAILURE


if __name__ == "__main__":
    raise SystemExit(main())
