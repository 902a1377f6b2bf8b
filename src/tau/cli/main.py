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

Every run is saved under ``$TAU_HOME/sessions/<directory>/`` unless ``--no-session``.

Exit status: 0 on success, 1 when the run fails (one line on stderr; a traceback only with
``--debug``), 2 for bad usage, 130 when interrupted, 141 when stdout is closed early.

Start-up matters (``tau --help`` runs often): this module imports only the standard library
it needs to parse flags; the agent, pydantic and the providers load once a run starts.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from tau import __version__
from tau.cli.argtypes import THINKING_LEVELS, positive_int, positive_number
from tau.cli.errors import (
    EXIT_BROKEN_PIPE,
    EXIT_FAILURE,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    UsageError,
)
from tau.cli.run_control import add_arguments, fallback_models, usage_limits
from tau.cli.sessions_cli import PickCancelled, check_can_pick
from tau.cli.sessions_cli import add_arguments as add_session_arguments

if TYPE_CHECKING:
    from tau.agent import RunResult
    from tau.ai import Model
    from tau.cli.app import AppEvent, Settings
    from tau.cli.attach import Prompt
    from tau.cli.display import TerminalSurface

# Named here so that `tau --help` imports no tool; a test keeps them equal to tau.cli.tools'.
KNOWN_TOOL_NAMES = ("read", "write", "edit", "bash", "ls", "grep", "find", "weather", "calculator")
DEFAULT_TOOL_NAMES = ("read", "ls", "grep", "find")
MAX_STDIN_BYTES = 16 * 1024 * 1024
"""Piped input beyond this is refused: more than any model's context window holds."""
INTERRUPTED = "Interrupted"
CLI_EXTRA = ("prompt_toolkit", "rich")
"""What the ``[cli]`` extra installs: the interactive session needs both."""


class MissingExtraError(RuntimeError):
    """A feature needs an extra that is not installed."""


def _seconds(text: str) -> float:
    return positive_number(text, "a number of seconds")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tau",
        description="A small coding agent. With a prompt: one run (piped input is added after "
        "the prompt); without: an interactive session.",
        epilog="`tau models [provider]` lists the models, `tau sessions` the saved sessions, "
        "`tau mcp list [FILE]` the MCP servers, `tau batch IN.jsonl -o OUT.jsonl` runs the agent "
        "over a dataset (each has --help). Exit status: 0 ok, 1 the run failed, 2 bad usage, "
        "130 interrupted, 141 stdout closed early.",
    )
    parser.add_argument("prompt", nargs="*", help="what to ask (omit for an interactive session)")
    parser.add_argument("--version", action="version", version=f"tau {__version__}")
    parser.add_argument(
        "-m",
        "--model",
        help="provider/id, or an id alone when one provider has it (see `tau models`); "
        "local/<file.gguf> runs a GGUF",
    )
    parser.add_argument(
        "--base-url",
        metavar="URL",
        help="use the server at URL, e.g. http://localhost:11434/v1 (OpenAI chat-completions "
        "protocol for a bare id or none: the server's model; add servers to "
        "$TAU_HOME/models.json to keep them)",
    )
    parser.add_argument(
        "--thinking",
        choices=THINKING_LEVELS,
        default=None,
        help="reasoning level (default: the resumed session's, else off)",
    )
    parser.add_argument("--system", help="system prompt (replaces the default)")
    parser.add_argument(
        "-a",
        "--attach",
        action="append",
        default=[],
        metavar="FILE",
        help="send FILE with the prompt (repeatable; text inline, images to models that take "
        "them); @FILE in the prompt does the same",
    )
    parser.add_argument(
        "--tools",
        help=f"comma-separated tools, or 'none' (default: {','.join(DEFAULT_TOOL_NAMES)}, none "
        f"for local models; known: {','.join(KNOWN_TOOL_NAMES)})",
    )
    parser.add_argument(
        "--allow-path",
        action="append",
        default=[],
        metavar="DIR",
        help="let the tools reach DIR outside the working directory (repeatable)",
    )
    add_session_arguments(parser)  # --session, -c, -r, --no-session
    parser.add_argument(
        "-y", "--yes", action="store_true", help="run write/edit/bash and MCP tools without asking"
    )
    parser.add_argument("--json", action="store_true", help="print every event as one JSON line")
    parser.add_argument(
        "--mode",
        choices=("text", "json", "rpc"),
        default="text",
        help="json: as --json; rpc: read JSON commands from stdin, one per line, and write "
        "events and responses to stdout",
    )
    parser.add_argument(
        "--output-schema",
        metavar="SCHEMA",
        help="end the run on a value valid under SCHEMA (a JSON Schema file, or module:Model "
        "naming a pydantic model) and print only that JSON on stdout (with --json: on the "
        "agent_end event)",
    )
    parser.add_argument(
        "--max-tokens", type=positive_int, metavar="N", help="cap on output tokens per response"
    )
    parser.add_argument(
        "--timeout",
        type=_seconds,
        metavar="SECONDS",
        help="how long to wait for the provider to connect, to start answering, and between two "
        "pieces of its answer (default: 10 s to connect, 120 s for each of the others)",
    )
    parser.add_argument(
        "--mcp",
        metavar="FILE",
        help='MCP servers to use, {"mcpServers": {...}} as in Claude Desktop (see `tau mcp list`)',
    )
    add_arguments(parser)  # --max-turns, --max-cost, --fallback
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
    return parser


def _models_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tau models",
        description="List the model catalog, the providers with an API key in the environment, "
        "and whether the embedded local model is installed.",
    )
    parser.add_argument("provider", nargs="?", help="only this provider's models")
    return parser


def _mcp_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tau mcp", description="The MCP servers tau uses (the config's mcpServers)."
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    listing = commands.add_parser(
        "list",
        help="each server's status and tools",
        description="Start each configured MCP server and list its status and tools (exit 1 if "
        "one fails).",
    )
    listing.add_argument("file", nargs="?", metavar="FILE", help="servers from FILE instead")
    return parser


# --------------------------------------------------------------------------- input text


def _note(text: str) -> None:
    sys.stderr.write(f"tau: note: {text}\n")


def clean_text(text: str, what: str) -> str:
    """``text`` (from argv or a terminal) with undecodable bytes as U+FFFD, noting it once.

    Python hands over bytes that are not UTF-8 as lone surrogates; they cannot be encoded
    again, so each would break the request, the output and the session file later.
    """
    if text.isascii():
        return text
    try:
        raw = text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a surrogate that is no escaped byte
        raw = text.encode("utf-8", "replace")
    clean = raw.decode("utf-8", "replace")
    if clean != text:
        _note(f"{what} is not valid UTF-8: undecodable bytes became \ufffd")
    return clean


def _read_stdin() -> str:
    data = sys.stdin.buffer.read(MAX_STDIN_BYTES + 1)
    if len(data) > MAX_STDIN_BYTES:
        raise UsageError(f"piped input is over {MAX_STDIN_BYTES // (1024 * 1024)} MB: too long")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = data.decode("utf-8", "replace")
        _note("stdin is not valid UTF-8: undecodable bytes became \ufffd")
    return text.strip("\r\n").rstrip()


def _stdin_is_terminal() -> bool:
    return sys.stdin is None or sys.stdin.isatty()


def _prompt_parts(words: list[str]) -> tuple[str, str] | None:
    """The typed prompt and the piped input of a one-shot run, or None for an interactive
    session.

    The run gets the words of the command line, then a blank line and the piped input if there
    is any (``cat f.py | tau "Explain"``); an empty result is refused.
    """
    given = clean_text(" ".join(words), "the prompt") if words else None
    if _stdin_is_terminal():
        if given is not None and not given.strip():
            raise UsageError("the prompt is empty")
        return None if given is None else (given, "")
    piped = _read_stdin()
    if not any(part and part.strip() for part in (given, piped)):
        empty = "the prompt is empty" if given is not None else "no prompt given (stdin is empty)"
        raise UsageError(empty)
    typed = given if given and given.strip() else ""
    return typed, piped if piped.strip() else ""


def _one_shot_prompt(parts: tuple[str, str], files: list[str], settings: Settings) -> Prompt:
    """The prompt with the files it mentions (``@path``) and ``--attach`` attached."""
    from tau.cli.attach import AttachmentError, build_prompt

    typed, piped = parts
    try:
        prompt, notes = build_prompt(
            typed, settings.workspace, settings.model, extra=[piped], files=files
        )
    except AttachmentError as exc:
        raise UsageError(str(exc)) from None
    for note in notes:
        _note(note)
    return prompt


# --------------------------------------------------------------------------- runs


def _warn(text: str) -> None:
    sys.stderr.write(f"tau: warning: {text}\n")


def _session_model(entry: dict[str, Any] | None) -> Model | None:
    """The resumed session's model, if it can still be used here (else a warning)."""
    from tau.cli.models import ModelChoiceError, check_credentials, model_from_entry

    if entry is None:
        return None
    try:
        model = model_from_entry(entry)
        check_credentials(model)
    except (UsageError, ModelChoiceError) as exc:
        name = f"{entry.get('provider')}/{entry.get('modelId')}"
        _warn(f"the session's model {name} cannot be used here ({exc}); using the default")
        return None
    return model


def _settings(args: argparse.Namespace) -> Settings:
    from pathlib import Path

    from tau.ai import LOCAL_PROVIDER
    from tau.cli.app import Settings
    from tau.cli.compaction import load_settings
    from tau.cli.config import load_config
    from tau.cli.models import check_credentials, choose_model
    from tau.cli.session import Session
    from tau.cli.sessions_cli import session_choice
    from tau.cli.tools import Workspace

    output_type = None
    if args.output_schema is not None:
        from tau.cli.output_schema import load_output_type

        output_type = load_output_type(args.output_schema)
    cwd = Path.cwd().resolve()
    session_path, session_dir = session_choice(args, cwd)
    session = Session.open(session_path) if session_path is not None else None
    model = None
    if args.model is None and args.base_url is None and session is not None:
        model = _session_model(session.model_entry)
    if model is None:
        model = choose_model(args.model, base_url=args.base_url)
        check_credentials(model)
    thinking = args.thinking
    if thinking is None and session is not None and session.thinking_level in THINKING_LEVELS:
        thinking = session.thinking_level
    if args.tools is None:
        # A local model gets no tools it was not given: the embedded 135M one would call the
        # coding tools at random instead of answering.
        names = [] if model.provider == LOCAL_PROVIDER else list(DEFAULT_TOOL_NAMES)
    else:
        names = [n.strip() for n in args.tools.split(",") if n.strip()]
        names = [] if names == ["none"] else names
    unknown = [n for n in names if n not in KNOWN_TOOL_NAMES]
    if unknown:
        raise UsageError(f"unknown tool {unknown[0]!r} (known: {', '.join(KNOWN_TOOL_NAMES)})")
    workspace = Workspace(cwd, tuple(Path(p).expanduser().resolve() for p in args.allow_path))
    options: dict[str, Any] = {}
    if args.max_tokens is not None:
        options["max_tokens"] = args.max_tokens
    if args.timeout is not None:
        options["timeout"] = args.timeout
    return Settings(
        model=model,
        tool_names=names,
        workspace=workspace,
        thinking=thinking or "off",
        system=None if args.system is None else clean_text(args.system, "--system"),
        session=session,
        session_dir=session_dir,
        yes=args.yes,
        extra_options=options,
        mcp_file=None if args.mcp is None else Path(args.mcp),
        usage_limits=usage_limits(args),
        fallback_models=fallback_models(args, model),
        compaction=load_settings(load_config().get("compaction"), _warn),
        output_type=output_type,
    )


def _dim(text: str) -> str:
    return f"\033[2m{text}\033[0m" if sys.stderr.isatty() else text


async def _ask_on_terminal(question: str) -> bool:
    """Ask on stderr and read the answer from the terminal without a thread, so that an abort
    (Ctrl-C) can cancel the question at once."""
    import asyncio

    sys.stderr.write(f"{question} [y/N] ")
    sys.stderr.flush()
    loop = asyncio.get_running_loop()
    answer: asyncio.Future[bytes] = loop.create_future()
    fd = sys.stdin.fileno()

    def readable() -> None:
        if not answer.done():
            answer.set_result(os.read(fd, 4096))

    loop.add_reader(fd, readable)
    try:
        line = await answer
    except BaseException:
        sys.stderr.write("\n")
        raise
    finally:
        loop.remove_reader(fd)
    return line.decode("utf-8", "replace").strip().lower() in ("y", "yes")


def _json_printer() -> Callable[[Any], None]:
    from tau.agent import event_to_json

    def print_json(event: Any) -> None:
        print(event_to_json(event), flush=True)

    return print_json


def _print_app_event_json(event: AppEvent) -> None:
    import json

    from tau.cli.app import dump_app_event

    print(json.dumps(dump_app_event(event)), flush=True)


class _Output:
    """The event sink of one-shot mode; a closed stdout aborts the run instead of failing it."""

    def __init__(self, show: Callable[[Any], None], abort: Callable[[str], object]) -> None:
        self.show = show
        self.abort = abort
        self.closed = False

    def __call__(self, event: Any) -> None:
        if self.closed:
            return
        try:
            self.show(event)
        except BrokenPipeError:
            self.closed = True
            self.abort("stdout was closed")


async def run_once(
    settings: Settings, prompt: Prompt, *, json_mode: bool, named_model: str | None = None
) -> int:
    """Print (or JSON) mode: one prompt, then exit.

    In print mode the answering model is named on stderr when the command line did not name
    it exactly (``named_model``), and a resumed session says what it loaded.
    """
    import asyncio
    import signal

    from tau.cli.app import App
    from tau.cli.models import model_spec
    from tau.cli.render import Renderer

    # Questions need a terminal to answer on; without one, mutating tools need --yes.
    terminal = sys.stdin is not None and sys.stdin.isatty() and not json_mode
    typed = settings.output_type is not None
    surface = None if json_mode or typed else _terminal_surface()
    ask = _ask_on_terminal if surface is None else surface.asking(_ask_on_terminal)
    app = App(
        settings,
        ask if terminal else None,
        on_event=_print_app_event_json if json_mode else None,
    )
    notice = app.resume_notice()
    if notice is None and not json_mode and named_model != model_spec(app.model):
        notice = f"model: {model_spec(app.model)}"
    if notice is not None:
        print(_dim(notice), file=sys.stderr, flush=True)
    if json_mode:
        show: Callable[[Any], None] = _json_printer()
    elif typed:
        show = _activity_printer()
    elif surface is not None:
        from tau.cli.app import describe_app_event
        from tau.cli.display import TerminalRenderer, console_for

        renderer = TerminalRenderer(console_for(sys.stdout), surface, lambda: app.model)
        surface.renderer = renderer
        # A compaction notice goes above the live region, not through it on stderr.
        app.on_event = lambda event: renderer.notice(describe_app_event(event))
        show = renderer
    else:
        from tau.cli.render import Spinner

        show = Renderer(spinner=Spinner(sys.stderr))
    output = _Output(show, app.abort)
    app.agent.subscribe(output)
    loop = asyncio.get_running_loop()
    interrupted = 0

    def on_interrupt() -> None:
        nonlocal interrupted
        interrupted += 1
        if interrupted > 1:
            raise SystemExit(EXIT_INTERRUPTED)
        app.abort(INTERRUPTED)

    loop.add_signal_handler(signal.SIGINT, on_interrupt)
    try:
        result = await app.run(prompt)
    finally:
        loop.remove_signal_handler(signal.SIGINT)
        if surface is not None:
            surface.finish()
        await app.aclose()
    if output.closed:
        raise BrokenPipeError
    status = _report(result)
    if typed and not json_mode and status == EXIT_OK:
        from tau.cli.output_schema import dump_output

        print(dump_output(result.output), flush=True)
    return status


def _activity_printer() -> Callable[[Any], None]:
    """What a run with ``--output-schema`` shows: tool activity and notices on stderr, not the
    answer (stdout carries only the validated JSON, once the run is over)."""
    from tau.cli.render import Renderer, Spinner

    renderer = Renderer(out=sys.stderr, spinner=Spinner(sys.stderr))

    def show(event: Any) -> None:
        if event.type != "message_update":
            renderer(event)

    return show


def _terminal_surface() -> TerminalSurface | None:
    """Where a one-shot run is drawn when stdout is a terminal that can show more than text
    (None: plain text, as in a pipe)."""
    from tau.cli.render import is_fancy_terminal

    if not is_fancy_terminal(sys.stdout):
        return None
    try:
        from tau.cli.display import TerminalSurface
    except ImportError:
        _note("rich is not installed: plain output (pip install 'tau[cli]' for rendered output)")
        return None
    return TerminalSurface(sys.stdout)


def _report(result: RunResult) -> int:
    if result.aborted:
        _error_line(f"aborted: {result.error or INTERRUPTED}")
        return EXIT_INTERRUPTED
    if result.stop_reason == "error":
        _error_line(f"error: {result.error or 'no answer'}")
        return EXIT_FAILURE
    return EXIT_OK


def _error_line(text: str) -> None:
    # The library's advice names its option; on the command line it is a flag.
    text = text.replace("the `timeout` option", "--timeout")
    print(f"tau: {text}", file=sys.stderr)


# --------------------------------------------------------------------------- dispatch


def _dispatch(argv: Sequence[str]) -> int:
    if argv and argv[0] == "mcp":
        listing = _mcp_parser().parse_args(argv[1:])
        from tau.cli.mcp import mcp_command

        return mcp_command([listing.command, *([listing.file] if listing.file else [])])
    if argv and argv[0] == "batch":
        from tau.cli.batch import batch_command

        return batch_command(argv[1:])
    if argv and argv[0] == "models":
        from tau.cli.models import list_models

        return list_models(_models_parser().parse_args(argv[1:]).provider)
    if argv and argv[0] == "sessions":
        from pathlib import Path

        from tau.cli.sessions_cli import sessions_command

        return sessions_command(list(argv[1:]), Path.cwd().resolve())
    args = _parser().parse_args(argv)
    mode = "json" if args.json else args.mode
    if mode == "rpc":
        if args.prompt or args.json:
            raise UsageError("--mode rpc takes its prompts on stdin, as JSON commands")
        from tau.cli.rpc import run_rpc

        return run_rpc(_settings(args))
    if mode == "json" and not args.prompt and _stdin_is_terminal():
        raise UsageError("--json needs a prompt")
    if args.resume:
        check_can_pick()  # before stdin is read as the prompt
    parts = _prompt_parts(args.prompt)
    if args.output_schema is not None and parts is None:
        raise UsageError("--output-schema needs a prompt")
    if args.attach and parts is None:
        raise UsageError("--attach needs a prompt (in a session, type @FILE in a message)")
    try:
        settings = _settings(args)
    except PickCancelled:
        return EXIT_OK
    if parts is not None:
        import asyncio

        prompt = _one_shot_prompt(parts, args.attach, settings)
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
    return run_interactive(settings)


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
        _error_line(f"error: {text.splitlines()[0]}")
        return EXIT_FAILURE


if __name__ == "__main__":
    raise SystemExit(main())
