"""The flags more than one command takes, each declared once, and the checks on their values.

``tau`` (a run) and ``tau batch`` share the model, tools, reasoning and limit flags; a command
lists the ones it takes (see :mod:`tau.cli.registry`). Only the standard library is imported
here: ``tau --help`` builds its parser from these declarations.
"""

from __future__ import annotations

from typing import Any

from tau.cli.argtypes import THINKING_LEVELS, non_negative_number, positive_int, positive_number
from tau.cli.errors import UsageError
from tau.cli.registry import Arg

# Named here so that `tau --help` imports no tool; a test keeps them equal to tau.cli.tools'.
KNOWN_TOOL_NAMES = (
    "read",
    "write",
    "edit",
    "bash",
    "ls",
    "grep",
    "find",
    "weather",
    "calculator",
    "task",
)
DEFAULT_TOOL_NAMES = ("read", "ls", "grep", "find")


def seconds(text: str) -> float:
    """A positive number of seconds."""
    return positive_number(text, "a number of seconds")


def dollars(text: str) -> float:
    """A positive amount of US dollars (``0.5`` or ``$0.5``)."""
    return positive_number(text.removeprefix("$"), "an amount of US dollars")


def temperature(text: str) -> float:
    """A sampling temperature: a number of 0 or more."""
    return non_negative_number(text, "a temperature")


def option_pair(text: str) -> tuple[str, Any]:
    """``KEY=VALUE`` of ``-o``: the value as JSON when it parses (``0.9``, ``true``,
    ``{"a": 1}``), else as the text itself."""
    import json

    key, equals, value = text.partition("=")
    key = key.strip()
    if not equals or not key:
        raise UsageError(f"-o {text!r}: give KEY=VALUE")
    try:
        return key, json.loads(value)
    except ValueError:
        return key, value


def tool_names(text: str | None, default: tuple[str, ...] | list[str]) -> list[str]:
    """The tools ``--tools`` names (``default`` without the flag; ``none``: no tool).

    An unknown name is a :class:`~tau.cli.errors.UsageError` listing the known ones.
    """
    if text is None:
        return list(default)
    names = [n.strip() for n in text.split(",") if n.strip()]
    names = [] if names == ["none"] else names
    unknown = [n for n in names if n not in KNOWN_TOOL_NAMES]
    if unknown:
        raise UsageError(f"unknown tool {unknown[0]!r} (known: {', '.join(KNOWN_TOOL_NAMES)})")
    return names


MODEL = Arg(
    "model",
    "provider/id, or an id alone when one provider has it (see `tau models`); "
    "local/<file.gguf> runs a GGUF",
    flags=("-m", "--model"),
)
SYSTEM = Arg(
    "system",
    "system prompt, or a file holding it (replaces the default)",
    flags=("--system-prompt", "--system"),
    metavar="TEXT|FILE",
)
APPEND_SYSTEM = Arg(
    "append_system",
    "text, or a file holding it, added to the system prompt",
    flags=("--append-system-prompt",),
    metavar="TEXT|FILE",
)
NO_SKILLS = Arg.switch("no_skills", "load no skills", "--no-skills")
NO_TEMPLATES = Arg.switch("no_templates", "load no prompt templates", "--no-prompt-templates")
EXTENSION = Arg(
    "extension",
    "load the extension PATH (a .py file or a package folder; repeatable)",
    flags=("-e", "--extension"),
    action="append",
    default=[],
    metavar="PATH",
)
NO_EXTENSIONS = Arg.switch(
    "no_extensions", "load no extensions but those given with --extension", "--no-extensions"
)
RESOURCE_FLAGS = (APPEND_SYSTEM, NO_SKILLS, NO_TEMPLATES, EXTENSION, NO_EXTENSIONS)

# pi's command-line habits (tau.cli.pi_habits applies them).
PI_FLAGS = (
    Arg.switch(
        "print",
        "print mode: answer the prompt and exit (the default with a prompt)",
        "-p",
        "--print",
    ),
    Arg.switch(
        "interactive",
        "an interactive session whose first message is the prompt",
        "-i",
        "--interactive",
    ),
    Arg(
        "provider",
        "the provider of -m MODEL (or its first model without -m)",
        flags=("--provider",),
    ),
    Arg(
        "api_key",
        "the API key of the model's provider, for this run",
        flags=("--api-key",),
        metavar="KEY",
    ),
    Arg.switch("no_tools", "give the model no tool (as --tools none)", "--no-tools"),
    Arg(
        "models",
        "models to cycle through with Ctrl+P in the session (comma-separated; each may end in "
        ":THINKING)",
        flags=("--models",),
        metavar="A,B,C",
    ),
)
TOOLS = Arg(
    "tools",
    f"comma-separated tools, or 'none' (default: {','.join(DEFAULT_TOOL_NAMES)}, none for local "
    f"models; known: {','.join(KNOWN_TOOL_NAMES)}; `tau tools` lists them with the names the "
    "model calls them by)",
    flags=("--tools",),
)
YES = Arg.switch("yes", "run write/edit/bash and MCP tools without asking", "-y", "--yes")
THINKING = Arg(
    "thinking",
    "reasoning level (default: the resumed session's, else off)",
    flags=("--thinking",),
    choices=THINKING_LEVELS,
)
MAX_TOKENS = Arg(
    "max_tokens",
    "cap on output tokens per response",
    flags=("--max-tokens",),
    type=positive_int,
    metavar="N",
)
TIMEOUT = Arg(
    "timeout",
    "how long to wait for the provider to connect, to start answering, and between two pieces "
    "of its answer (default: 10 s to connect, 120 s for each of the others)",
    flags=("--timeout",),
    type=seconds,
    metavar="SECONDS",
)
OUTPUT_SCHEMA = Arg(
    "output_schema",
    "end the run on a value valid under SCHEMA (a JSON Schema file, or module:Model naming a "
    "pydantic model) and print only that JSON on stdout (with --json: on the agent_end event)",
    flags=("--output-schema",),
    metavar="SCHEMA",
)
MAX_TURNS = Arg(
    "max_turns",
    "stop a run after N model responses (its last tool calls still run)",
    flags=("--max-turns",),
    type=positive_int,
    metavar="N",
)
MAX_COST = Arg(
    "max_cost",
    "stop a run once it has cost this much, at the catalog's prices",
    flags=("--max-cost",),
    type=dollars,
    metavar="USD",
)
FALLBACK = Arg(
    "fallback",
    "a model to try when the model fails before answering (repeatable, in order; default: the "
    'config\'s "fallback" list)',
    flags=("--fallback",),
    action="append",
    metavar="PROVIDER/ID",
)
TEMPERATURE = Arg(
    "temperature",
    "sampling temperature (0: the most likely tokens; higher: more varied)",
    flags=("--temperature",),
    type=temperature,
    metavar="T",
)
OPTION = Arg(
    "options",
    "set any option of the model's provider (repeatable; VALUE is read as JSON when it parses, "
    "else as text), e.g. -o top_p=0.9; checked against the provider's options",
    flags=("-o", "--option"),
    action="append",
    default=[],
    metavar="KEY=VALUE",
)
DEBUG = Arg.switch("debug", "show tracebacks", "--debug")
MCP_FILE = Arg(
    "mcp",
    'MCP servers to use, {"mcpServers": {...}} as in Claude Desktop (see `tau mcp list`)',
    flags=("--mcp",),
    metavar="FILE",
)

# Which session a run uses: one of them at most.
SESSION = Arg(
    "session",
    "resume or start the session FILE, or resume a saved one by id (`tau sessions`)",
    flags=("--session",),
    metavar="FILE|ID",
    group="session",
)
CONTINUE = Arg.switch(
    "continue_session",
    "continue the last session of this directory",
    "-c",
    "--continue",
    group="session",
)
RESUME = Arg.switch(
    "resume", "pick a recent session of this directory to resume", "-r", "--resume", group="session"
)
NO_SESSION = Arg.switch(
    "no_session", "save nothing (sessions are saved by default)", "--no-session", group="session"
)
SESSION_FLAGS = (SESSION, CONTINUE, RESUME, NO_SESSION)
