"""Every command of ``tau``, declared once: subcommands, slash commands and RPC commands.

A :class:`Command` is a name, its help, its arguments (:class:`Arg`) and a handler; each of the
three surfaces keeps its commands in one :class:`Registry` (:data:`SUBCOMMANDS`,
:data:`SLASH_COMMANDS`, :data:`RPC_COMMANDS`), and everything that needs to know a command reads
that one declaration:

* parsing: :func:`build_parser` turns a command (and its children, ``tau sessions list``) into
  an ``argparse`` parser; a slash command's line is split by :meth:`Registry.parse_line`; an RPC
  command's fields are checked by :meth:`Registry.check_fields`;
* help: ``tau --help`` and ``tau help`` list :data:`SUBCOMMANDS`, ``/help`` lists
  :meth:`Registry.help_lines`;
* completion: the interactive completer offers a registry's names and each argument's
  ``complete``;
* the RPC schema: :meth:`Registry.schema` (JSON Schema of each command's fields).

The handler's signature is the surface's own: ``(args: argparse.Namespace) -> int`` for a
subcommand, ``(ctx: CommandContext, argument: str) -> None`` (or awaitable) for a slash command,
``async (server: RpcServer, command: dict) -> data`` for an RPC command. Adding a command is one
declaration (``@SLASH_COMMANDS.command(...)`` on its handler, or ``SUBCOMMANDS.add(Command(...))``).

Only the standard library is imported here: ``tau --help`` builds its parser from this module.
"""

from __future__ import annotations

import argparse
import builtins
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Generic, TypeVar

__all__ = [
    "RPC_COMMANDS",
    "SLASH_COMMANDS",
    "SUBCOMMANDS",
    "Arg",
    "Command",
    "FieldError",
    "Registry",
    "SubcommandHandler",
    "UnknownCommandError",
    "build_parser",
]

H = TypeVar("H")
Complete = Callable[[Any, str], Iterable[str]]
"""``(context, partial text) -> candidates``: completion of an argument."""

_JSON_TYPES: dict[str, type | tuple[type, ...]] = {
    "string": str,
    "integer": int,
    "number": (int, float),
    "boolean": bool,
    "array": list,
    "object": dict,
}


class Arg:
    """One argument of a command.

    On the command line an argument with ``flags`` is an option (``-m``/``--model``), one
    without is positional; ``type``, ``choices``, ``default``, ``nargs``, ``action``, ``metavar``
    and ``const`` mean what they mean to ``argparse`` (with ``action="version"``, ``default``
    is the text printed); arguments sharing a ``group`` exclude each other. A slash command's
    argument is the text after its name (``metavar`` names it in the usage, ``complete``
    completes it). An RPC command's argument is a field of the JSON command, named ``name``, of
    JSON type ``json_type``.
    """

    # A plain class, not a dataclass: `tau --help` builds these, and dataclasses (with inspect)
    # would cost it several milliseconds.
    __slots__ = _ARG_FIELDS = (
        "name",
        "help",
        "flags",
        "type",
        "json_type",
        "choices",
        "default",
        "required",
        "nargs",
        "action",
        "metavar",
        "const",
        "group",
        "complete",
    )

    def __init__(
        self,
        name: str,
        help: str = "",
        *,
        flags: tuple[str, ...] = (),
        type: Callable[[str], Any] | None = None,
        json_type: str = "string",
        choices: tuple[str, ...] | None = None,
        default: Any = None,
        required: bool = False,
        nargs: str | None = None,
        action: str | builtins.type[argparse.Action] | None = None,
        metavar: str | None = None,
        const: Any = None,
        group: str | None = None,
        complete: Complete | None = None,
    ) -> None:
        self.name = name
        self.help = help
        self.flags = flags
        self.type = type
        self.json_type = json_type
        self.choices = choices
        self.default = default
        self.required = required
        self.nargs = nargs
        self.action = action
        self.metavar = metavar
        self.const = const
        self.group = group
        self.complete = complete

    def __repr__(self) -> str:
        return f"Arg({self.name!r}, flags={self.flags!r})"

    @classmethod
    def switch(cls, name: str, help: str, *flags: str, group: str | None = None) -> Arg:
        """An on/off flag (``--json``): False unless given."""
        return cls(name, help, flags=flags, action="store_true", default=False, group=group)

    def but(self, **changes: Any) -> Arg:
        """This argument with another help text or default for one command (``tau batch``'s
        ``--tools`` defaults to none): the flag itself stays declared once."""
        values = {name: getattr(self, name) for name in self._ARG_FIELDS}
        return Arg(**(values | changes))

    def add_to(self, parser: argparse.ArgumentParser | Any) -> None:
        """Add this argument to an ``argparse`` parser (or group)."""
        options: dict[str, Any] = {"help": self.help or None}
        if self.action is not None:
            options["action"] = self.action
        if self.type is not None:
            options["type"] = self.type
        if self.choices is not None:
            options["choices"] = self.choices
        if self.nargs is not None:
            options["nargs"] = self.nargs
        if self.metavar is not None:
            options["metavar"] = self.metavar
        if self.const is not None:
            options["const"] = self.const
        if self.action == "version":
            options["version"] = self.default  # the text `--version` prints
        else:
            options["default"] = self.default
        if self.flags:
            options["dest"] = self.name
            if self.required:
                options["required"] = True
            parser.add_argument(*self.flags, **options)
        else:
            parser.add_argument(self.name, **options)

    def usage(self) -> str:
        """How the argument is written in a one-line usage: ``NAME`` or ``[NAME]``."""
        word = self.metavar or self.name.upper()
        if self.choices is not None:
            word = "|".join(self.choices)
        if self.nargs in ("*", "+"):
            word += " ..."
        needed = self.required or (not self.flags and self.nargs in (None, "+"))
        return word if needed else f"[{word}]"

    def schema(self) -> dict[str, Any]:
        """The JSON Schema of the argument as an RPC field."""
        schema: dict[str, Any] = {"type": self.json_type}
        if self.help:
            schema["description"] = self.help
        if self.choices is not None:
            schema["enum"] = list(self.choices)
        if self.json_type == "string" and self.required:
            schema["minLength"] = 1
        return schema


class Command(Generic[H]):
    """One command: its name, help, arguments and handler (or its children's).

    ``children`` are the commands under it (``tau sessions list``; ``default_child`` is run when
    none is named); ``aliases`` are other names for it; ``background`` marks an RPC command
    answered when it finishes while later commands go on.
    """

    __slots__ = (
        "aliases",
        "args",
        "background",
        "children",
        "default_child",
        "description",
        "epilog",
        "handler",
        "help",
        "name",
    )

    def __init__(
        self,
        name: str,
        help: str,
        handler: H | None = None,
        args: tuple[Arg, ...] = (),
        *,
        description: str | None = None,
        epilog: str | None = None,
        children: tuple[Command[H], ...] = (),
        default_child: str | None = None,
        aliases: tuple[str, ...] = (),
        background: bool = False,
    ) -> None:
        self.name = name
        self.help = help
        self.handler = handler
        self.args = args
        self.description = description
        self.epilog = epilog
        self.children = children
        self.default_child = default_child
        self.aliases = aliases
        self.background = background

    def __repr__(self) -> str:
        return f"Command({self.name!r})"

    def usage(self, prefix: str = "") -> str:
        """``/model [PROVIDER/ID]``: the name and the arguments in one line."""
        words = [f"{prefix}{self.name}", *(a.usage() for a in self.args if not a.flags)]
        return " ".join(words)

    def child(self, name: str) -> Command[H] | None:
        """The child command ``name``, if there is one."""
        return next((c for c in self.children if c.name == name), None)


class UnknownCommandError(LookupError):
    """A name no command in the registry has."""


class FieldError(ValueError):
    """An RPC command's field that is missing or of the wrong type."""


class Registry(Generic[H]):
    """The commands of one surface, in the order they were added; names and aliases unique.

    ``prefix`` is written before a name (``/`` for slash commands); ``listing`` says where a
    user finds the commands, after an unknown name (``/help lists them``).
    """

    def __init__(self, surface: str, prefix: str = "", listing: str = "") -> None:
        self.surface = surface
        self.prefix = prefix
        self.listing = listing
        self._commands: dict[str, Command[H]] = {}
        self._names: dict[str, str] = {}

    def add(self, command: Command[H]) -> Command[H]:
        """Register ``command`` (a name or alias already taken is a ``ValueError``)."""
        for name in (command.name, *command.aliases):
            if name in self._names:
                raise ValueError(f"{self.surface} command {name!r} is already registered")
        self._commands[command.name] = command
        for name in (command.name, *command.aliases):
            self._names[name] = command.name
        return command

    def command(
        self,
        name: str,
        help: str,
        *,
        args: Iterable[Arg] = (),
        aliases: Iterable[str] = (),
        background: bool = False,
        description: str | None = None,
    ) -> Callable[[H], H]:
        """Register the decorated function as the handler of the command ``name``."""

        def register(handler: H) -> H:
            self.add(
                Command(
                    name,
                    help,
                    handler,
                    tuple(args),
                    description=description,
                    aliases=tuple(aliases),
                    background=background,
                )
            )
            return handler

        return register

    def remove(self, name: str) -> None:
        """Unregister the command ``name`` and its aliases."""
        command = self._commands.pop(self._names[name])
        for alias in (command.name, *command.aliases):
            del self._names[alias]

    def get(self, name: str) -> Command[H] | None:
        """The command called ``name`` (or aliased so), or None."""
        key = self._names.get(name)
        return None if key is None else self._commands[key]

    def __getitem__(self, name: str) -> Command[H]:
        found = self.get(name)
        if found is None:
            raise UnknownCommandError(self.unknown(name))
        return found

    def __contains__(self, name: object) -> bool:
        return name in self._names

    def __iter__(self) -> Iterator[Command[H]]:
        return iter(list(self._commands.values()))

    def __len__(self) -> int:
        return len(self._commands)

    def names(self) -> list[str]:
        """Every name a command answers to (aliases included), sorted."""
        return sorted(self._names)

    def unknown(self, name: str) -> str:
        """The message for a name no command has, with the closest names."""
        import difflib

        close = difflib.get_close_matches(name, self.names(), n=3)
        hints = [self.listing] if self.listing else []
        if close:
            hints.append(f"did you mean {', '.join(self.prefix + c for c in close)}?")
        hint = f" ({'; '.join(hints)})" if hints else ""
        return f"unknown command {self.prefix}{name}{hint}"

    def complete_names(self, partial: str) -> list[tuple[str, str]]:
        """``(name, help)`` of each command whose name starts with ``partial``."""
        return [(c.name, c.help) for c in self if c.name.startswith(partial)]

    def help_lines(self, extra: Iterable[Command[Any]] = ()) -> list[str]:
        """One line per command (then ``extra``): its usage and what it does."""
        commands = [*self, *extra]
        usages = [c.usage(self.prefix) for c in commands]
        width = max((len(u) for u in usages), default=0)
        return [f"  {u.ljust(width)}  {c.help}" for u, c in zip(usages, commands, strict=True)]

    def parse_line(self, line: str) -> tuple[Command[H], str]:
        """The command a typed line (``/model gpt-4o``) names and its argument, stripped (an
        unknown name raises :class:`UnknownCommandError`; the handler checks the argument)."""
        name, _, argument = line.strip().removeprefix(self.prefix).partition(" ")
        found = self.get(name)
        if found is None:
            raise UnknownCommandError(self.unknown(name))
        return found, argument.strip()

    def check_fields(self, command: Command[H], fields: dict[str, Any]) -> None:
        """Check an RPC command's fields against its declared arguments (raises
        :class:`FieldError` naming the first bad one)."""
        for arg in command.args:
            value = fields.get(arg.name)
            if value is None:
                if arg.required:
                    raise FieldError(_expected(arg))
                continue
            expected = _JSON_TYPES[arg.json_type]
            wrong_bool = isinstance(value, bool) and arg.json_type in ("integer", "number")
            if not isinstance(value, expected) or wrong_bool:
                raise FieldError(_expected(arg))
            if arg.required and isinstance(value, str) and not value.strip():
                raise FieldError(_expected(arg))
            if arg.choices is not None and value not in arg.choices:
                raise FieldError(f'"{arg.name}" must be one of {", ".join(arg.choices)}')

    def schema(self) -> list[dict[str, Any]]:
        """Each command as ``{name, description, parameters}``, its fields as JSON Schema."""
        described = []
        for command in self:
            parameters = {
                "type": "object",
                "properties": {a.name: a.schema() for a in command.args},
                "required": [a.name for a in command.args if a.required],
            }
            entry: dict[str, Any] = {
                "name": command.name,
                "description": command.help,
                "parameters": parameters,
            }
            if command.aliases:
                entry["aliases"] = list(command.aliases)
            described.append(entry)
        return described


def _expected(arg: Arg) -> str:
    kind = {"string": "a string", "integer": "a whole number", "number": "a number"}.get(
        arg.json_type,
        f"an {arg.json_type}" if arg.json_type[0] in "aeiou" else f"a {arg.json_type}",
    )
    if arg.required and arg.json_type == "string":
        kind = "a non-empty string"
    return f'"{arg.name}" must be {kind}'


def build_parser(
    command: Command[Any],
    prog: str,
    formatter_class: type[argparse.HelpFormatter] = argparse.HelpFormatter,
) -> argparse.ArgumentParser:
    """The ``argparse`` parser of a (sub)command and its children, from its declaration.

    The chosen child lands in ``args.command`` and its handler in ``args.handler`` (the
    default child's, or the parent's, when no child is named).
    """
    parser = argparse.ArgumentParser(
        prog=prog,
        description=command.description or command.help,
        epilog=command.epilog,
        formatter_class=formatter_class,
    )
    _add_args(parser, command.args)
    default = command.child(command.default_child) if command.default_child else None
    if default is not None:
        # `tau sessions --all` is `tau sessions list --all`: the default child's flags work
        # without its name.
        _add_args(parser, default.args)
    if command.children:
        children = parser.add_subparsers(
            dest="command", metavar="COMMAND", required=command.default_child is None
        )
        for child in command.children:
            sub = children.add_parser(
                child.name,
                help=child.help,
                description=child.description or child.help,
                aliases=list(child.aliases),
            )
            _add_args(sub, child.args)
            sub.set_defaults(handler=child.handler, command=child.name)
    # After the subparsers: their action's default (None) would hide the parser's own.
    handler = command.handler if default is None else default.handler
    parser.set_defaults(handler=handler, command=command.default_child)
    return parser


def _add_args(parser: argparse.ArgumentParser, args: Iterable[Arg]) -> None:
    groups: dict[str, Any] = {}
    for arg in args:
        target: Any = parser
        if arg.group is not None:
            if arg.group not in groups:
                groups[arg.group] = parser.add_mutually_exclusive_group()
            target = groups[arg.group]
        arg.add_to(target)


SubcommandHandler = Callable[[argparse.Namespace], int]
"""A subcommand's handler: the parsed arguments in, the exit status out."""
SUBCOMMANDS: Registry[SubcommandHandler] = Registry("subcommand")
"""``tau models``, ``tau sessions``…: handlers take the parsed arguments, return the exit status."""
SLASH_COMMANDS: Registry[Callable[[Any, str], Any]] = Registry("slash", "/", "/help lists them")
"""``/model``, ``/compact``…: handlers take a :class:`~tau.cli.commands.CommandContext` and the
text after the name."""
RPC_COMMANDS: Registry[Callable[[Any, dict[str, Any]], Any]] = Registry("rpc")
"""``prompt``, ``get_state``…: handlers take the :class:`~tau.cli.rpc.RpcServer` and the command
object (its fields checked against the declaration first)."""
