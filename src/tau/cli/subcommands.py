"""The built-in subcommands of ``tau``: ``models``, ``sessions``, ``mcp``, ``tools``, ``batch``
and ``web``.

Each is one :class:`~tau.cli.registry.Command` (its arguments, help and handler) added to
:data:`~tau.cli.registry.SUBCOMMANDS`; ``tau --help``, ``tau help COMMAND`` and the parser read
it from there. A handler imports the work it does when it runs: this module imports only the
standard library, so that ``tau --help`` stays fast.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

from tau.cli.argtypes import positive_int, positive_number
from tau.cli.flags import (
    DEBUG,
    MAX_TOKENS,
    MAX_TURNS,
    MCP_FILE,
    MODEL,
    OPTION,
    OUTPUT_SCHEMA,
    SYSTEM,
    TEMPERATURE,
    THINKING,
    TIMEOUT,
    TOOLS,
    YES,
    dollars,
    seconds,
)
from tau.cli.packages_cli import PACKAGE_COMMANDS
from tau.cli.registry import SUBCOMMANDS, Arg, Command, SubcommandHandler

__all__ = ["BUILTIN", "SUBCOMMANDS"]


def _models(args: argparse.Namespace) -> int:
    from tau.cli.models import list_models

    return list_models(args.search, as_json=args.json)


MODELS: Command[SubcommandHandler] = Command(
    "models",
    "the models: catalog and models.json, searchable, and which providers have keys",
    _models,
    args=(
        Arg(
            "search",
            "a provider (its models), or text to find in a model's provider, id or name",
            nargs="?",
            metavar="SEARCH",
        ),
        Arg.switch(
            "json",
            "the models as one JSON list (context, prices, reasoning, input kinds, key)",
            "--json",
        ),
    ),
    description="List the models (provider/id, name, context window, price per million input/"
    "output tokens, whether it reasons and takes images, and where its key comes from), the "
    "providers with an API key (in the environment or from tau login), and whether the embedded "
    "local model is installed.",
)


def _sessions(args: argparse.Namespace) -> int:
    from pathlib import Path

    from tau.cli.sessions_cli import sessions_command

    return sessions_command(args, Path.cwd().resolve())


_SESSION_ID = Arg("id", metavar="ID", required=True)
SESSIONS: Command[SubcommandHandler] = Command(
    "sessions",
    "the saved sessions: list, show, export, rm",
    description="The saved sessions ($TAU_HOME/sessions, one folder per working directory). "
    "ID is a session file or the first characters of a session's id. "
    "With no COMMAND: list (`tau sessions --all` lists every directory's).",
    children=(
        Command(
            "list",
            "recent sessions (the default)",
            _sessions,
            args=(
                Arg.switch("all", "of every directory, not only this", "--all"),
                Arg("n", "at most N (default 30)", flags=("-n",), type=positive_int, default=30),
                Arg(
                    "search",
                    "only sessions whose messages contain TEXT (case ignored)",
                    flags=("--search",),
                    metavar="TEXT",
                ),
            ),
            description="List the recent sessions.",
        ),
        Command(
            "show",
            "print a session as Markdown, or its tree (default: this directory's latest)",
            _sessions,
            args=(
                Arg("id", metavar="ID", nargs="?"),
                Arg.switch(
                    "tree", "draw the session's tree: every branch, one line an entry", "--tree"
                ),
            ),
        ),
        Command(
            "export",
            "write a session as HTML or Markdown",
            _sessions,
            args=(
                _SESSION_ID,
                Arg.switch("html", "HTML (the default)", "--html", group="kind"),
                Arg.switch("md", "Markdown", "--md", group="kind"),
                Arg(
                    "output",
                    "write to FILE (default: stdout)",
                    flags=("-o", "--output"),
                    metavar="FILE",
                ),
            ),
            description="Write a session as a self-contained HTML page (or Markdown).",
        ),
        Command("rm", "delete a session file", _sessions, args=(_SESSION_ID,)),
    ),
    default_child="list",
)


def _mcp_list(args: argparse.Namespace) -> int:
    from pathlib import Path

    from tau.cli.mcp import mcp_list

    return mcp_list(None if args.file is None else Path(args.file))


MCP: Command[SubcommandHandler] = Command(
    "mcp",
    "the configured MCP servers: status and tools",
    description="The MCP servers tau uses (the config's mcpServers).",
    children=(
        Command(
            "list",
            "each server's status and tools",
            _mcp_list,
            args=(Arg("file", "servers from FILE instead", nargs="?", metavar="FILE"),),
            description="Start each configured MCP server and list its status and tools (exit 1 "
            "if one fails).",
        ),
    ),
)


def _tools(args: argparse.Namespace) -> int:
    from pathlib import Path

    from tau.cli.tools import DEFAULT_TOOLS, MUTATING_TOOLS, Workspace, build_tools, tool_names
    from tau.cli.tools.task import TASK_DESCRIPTION, TASK_TOOL

    names = [n for n in tool_names() if n != TASK_TOOL]
    tools = build_tools(names, Workspace(Path.cwd().resolve()))
    rows = [
        (name, tool.name, tool.description or tool.label)
        for name, tool in zip(names, tools, strict=True)
    ]
    rows.append((TASK_TOOL, TASK_TOOL, TASK_DESCRIPTION))
    print(f"{'--tools':<12}{'the model calls it':<20}{'when':<24}what it does")
    for name, called, description in rows:
        when = "default" if name in DEFAULT_TOOLS else "when named"
        if name in MUTATING_TOOLS:
            when += ", asks first"
        summary = description.strip().splitlines()
        print(f"{name:<12}{called:<20}{when:<24}{summary[0] if summary else ''}")
    return 0


TOOLS_COMMAND: Command[SubcommandHandler] = Command(
    "tools",
    "the tools --tools takes, and the name the model calls each by",
    _tools,
    description="List the tools: the name --tools takes, the name the model calls it by, "
    "whether it is on by default (not for local models) and whether it asks before it runs "
    "(unless --yes).",
)


def _batch(args: argparse.Namespace) -> int:
    from tau.cli.batch import batch_command

    return batch_command(args)


BATCH: Command[SubcommandHandler] = Command(
    "batch",
    "one agent over every item of a JSONL file (IN.jsonl -o OUT.jsonl)",
    _batch,
    args=(
        Arg("input", "the items, one JSON object a line", metavar="INPUT.jsonl"),
        Arg(
            "output",
            "the results file (resumed)",
            flags=("-o", "--output"),
            required=True,
            metavar="OUT.jsonl",
        ),
        MODEL.but(help="provider/id (see `tau models`)"),
        SYSTEM.but(help="the system prompt (default: none)"),
        TOOLS.but(
            help="comma-separated tools for the agent (default: none); write, edit and bash "
            "need --yes",
        ),
        YES.but(help="let write/edit/bash run without asking"),
        THINKING.but(default="off", help="reasoning level"),
        MAX_TOKENS,
        TEMPERATURE,
        OPTION.but(flags=("--option",)),  # -o is the output file here
        TIMEOUT,
        Arg(
            "concurrency",
            "items in flight at once (with --ray: in each worker; default 16)",
            flags=("--concurrency",),
            type=positive_int,
            default=16,
            metavar="N",
        ),
        Arg(
            "rpm",
            "requests per minute to the provider",
            flags=("--rpm",),
            type=positive_number,
            metavar="N",
        ),
        Arg(
            "tpm",
            "tokens per minute to the provider",
            flags=("--tpm",),
            type=positive_number,
            metavar="N",
        ),
        OUTPUT_SCHEMA.but(
            help="typed output: a JSON Schema file, or module:Model for a pydantic model",
        ),
        Arg(
            "max_cost_per_item",
            "stop an item once it has cost this much (its status is then 'limited')",
            flags=("--max-cost-per-item",),
            type=dollars,
            metavar="USD",
        ),
        MAX_TURNS.but(help="stop an item after N model responses"),
        Arg(
            "max_attempts",
            "tries per item for transient failures (rate limits, overload, network; default 3)",
            flags=("--max-attempts",),
            type=positive_int,
            default=3,
            metavar="N",
        ),
        Arg.switch("no_resume", "start the output afresh instead of resuming it", "--no-resume"),
        Arg.switch("transcripts", "put each item's messages in its result", "--transcripts"),
        Arg(
            "grace",
            "how long Ctrl-C waits for running items (default 30)",
            flags=("--grace",),
            type=seconds,
            default=30.0,
            metavar="SECONDS",
        ),
        Arg(
            "progress",
            "the progress bar on stderr (default: when stderr is a terminal)",
            flags=("--progress",),
            action=argparse.BooleanOptionalAction,
        ),
        Arg(
            "ray",
            "run on a Ray cluster (ADDRESS, else RAY_ADDRESS, else a local Ray); needs pip "
            "install 'tau[ray]'",
            flags=("--ray",),
            nargs="?",
            const="",
            metavar="ADDRESS",
        ),
        DEBUG,
    ),
    description="Run one agent over every item of a JSONL file, each line "
    '{"id": ..., "prompt": ...} or {"id": ..., "context": <tau Context JSON>}; each result is '
    "one JSON line in the output, written as it finishes. A rerun resumes: ids already in the "
    "output are skipped.",
    epilog="Ctrl-C stops starting items and lets the running ones finish (up to --grace); a "
    "second Ctrl-C drops them. Exit status: 0 all ok, 1 an item failed, 2 bad usage or input, "
    "130 interrupted.",
)


def _stored(work: Callable[[], int], name: str) -> int:
    import sys

    from tau.ai.oauth import OAuthError

    try:
        return work()
    except OAuthError as exc:  # an unreadable auth.json: its path and what to do
        print(f"tau {name}: {exc}", file=sys.stderr)
        return 1


def _login(args: argparse.Namespace) -> int:
    from tau.cli.login import login

    return _stored(lambda: login(args.provider, open_browser=not args.no_browser), "login")


def _logout(args: argparse.Namespace) -> int:
    from tau.cli.login import logout

    return _stored(lambda: logout(args.provider), "logout")


def _auth_list(args: argparse.Namespace) -> int:
    from tau.cli.login import auth_list

    return _stored(lambda: auth_list(as_json=args.json), "auth list")


_PROVIDER = Arg(
    "provider",
    "a login (github-copilot, openai-codex, …) or a provider's key",
    nargs="?",
    metavar="PROVIDER",
)
LOGIN: Command[SubcommandHandler] = Command(
    "login",
    "log in to a subscription (Copilot, ChatGPT, Gemini, Claude) or store a provider's API key",
    _login,
    args=(
        _PROVIDER,
        Arg.switch("no_browser", "print the URL without opening a browser", "--no-browser"),
    ),
    description="Log in to a subscription provider (`tau login` with no PROVIDER offers a list), "
    "or store the API key of any other provider. Logins and keys are kept in "
    "$TAU_HOME/auth.json (mode 0600); the environment's keys win over them. Each subscription's "
    "own terms govern its use outside the vendor's own tools.",
)
LOGOUT: Command[SubcommandHandler] = Command(
    "logout",
    "forget a stored login or API key",
    _logout,
    args=(_PROVIDER,),
)
AUTH: Command[SubcommandHandler] = Command(
    "auth",
    "the stored logins and keys: list",
    children=(
        Command(
            "list",
            "each stored provider: login or key, account, expiry (never a token)",
            _auth_list,
            args=(Arg.switch("json", "as one JSON list", "--json"),),
        ),
    ),
    default_child="list",
)


def _web(args: argparse.Namespace) -> int:
    from tau.cli.web import web_command

    return web_command(args)


WEB: Command[SubcommandHandler] = Command(
    "web",
    "the agent in a browser page: chats, streaming, tool calls, approval buttons",
    _web,
    args=(
        Arg(
            "port",
            "the port to serve on (default 8765)",
            flags=("--port",),
            type=positive_int,
            default=8765,
            metavar="PORT",
        ),
        Arg(
            "host",
            "the interface to bind (default 127.0.0.1; any other needs --token)",
            flags=("--host",),
            default="127.0.0.1",
            metavar="HOST",
        ),
        Arg(
            "token",
            "a token every request must carry (or TAU_WEB_TOKEN); open the page at /?token=...",
            flags=("--token",),
            metavar="TOKEN",
        ),
        MODEL,
        Arg(
            "models",
            "comma-separated models the page's model picker also offers (provider/id)",
            flags=("--models",),
            metavar="MODELS",
        ),
        SYSTEM,
        TOOLS,
        YES.but(help="run write/edit/bash and MCP tools without asking (default: the page asks)"),
        MCP_FILE,
        Arg(
            "store",
            "where chats are kept: sessions (the tau command's session files of this "
            "directory, default) or sqlite ($TAU_HOME/web-chats.sqlite)",
            flags=("--store",),
            choices=("sessions", "sqlite"),
            default="sessions",
        ),
        THINKING,
        MAX_TOKENS,
        TEMPERATURE,
        OPTION,
        TIMEOUT,
    ),
    description="Serve the tau agent (same model, system prompt, tools and MCP servers as a run "
    "of tau) in a browser page: the chat list (this directory's tau sessions: `tau -c` goes on "
    "with a chat, and a terminal session opens in the page), streamed answers with "
    "Markdown and highlighted code, thinking folded, tool calls with their arguments and output, "
    "Approve/Deny buttons for write, edit and bash, image attachments, usage and cost. The page "
    "ships with tau: nothing is fetched from the internet. Needs pip install 'tau[web]'.",
)

BUILTIN: tuple[Command[SubcommandHandler], ...] = (
    MODELS,
    SESSIONS,
    MCP,
    TOOLS_COMMAND,
    BATCH,
    WEB,
    LOGIN,
    LOGOUT,
    AUTH,
    *PACKAGE_COMMANDS,
)
"""The built-in subcommands, in the order ``tau --help`` lists them."""
for _command in BUILTIN:
    SUBCOMMANDS.add(_command)
