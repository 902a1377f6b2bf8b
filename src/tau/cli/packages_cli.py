"""``tau install``, ``tau remove`` and ``tau list``: declared here (standard library only, for
``tau --help``), done by :mod:`tau.cli.packages`."""

from __future__ import annotations

import argparse

from tau.cli.registry import Arg, Command, SubcommandHandler

__all__ = ["PACKAGE_COMMANDS"]


def _install(args: argparse.Namespace) -> int:
    from tau.cli.packages import install

    package = install(args.source, args.name)
    holds = ", ".join(f"{n} {f}" for f, n in package.holds().items()) or "extensions by entry point"
    print(f"installed {package.name} ({package.kind}: {package.source}): {holds}")
    return 0


def _remove(args: argparse.Namespace) -> int:
    from tau.cli.packages import remove

    package = remove(args.name)
    print(f"removed {package.name}")
    return 0


def _list(args: argparse.Namespace) -> int:
    import json

    from tau.cli.packages import describe, installed

    rows = [describe(p) for p in installed()]
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    if not rows:
        print("no packages installed (tau install PATH|git+URL|pip:NAME)")
    for row in rows:
        holds = ", ".join(f"{n} {f}" for f, n in row["holds"].items()) or "-"
        print(f"{row['name']}  {row['kind']}  {row['source']}  {holds}")
    return 0


PACKAGE_COMMANDS: tuple[Command[SubcommandHandler], ...] = (
    Command(
        "install",
        "install a package of extensions/, skills/ and prompts/ (a folder, git+URL, pip:NAME)",
        _install,
        args=(
            Arg("source", "a folder, a git URL (git+URL, …/repo.git) or pip:REQUIREMENT"),
            Arg("name", "the name to install it under", flags=("--name",)),
        ),
    ),
    Command(
        "remove",
        "remove an installed package",
        _remove,
        args=(Arg("name", "the package's name (tau list)"),),
    ),
    Command(
        "list",
        "the installed packages and what each holds",
        _list,
        args=(Arg.switch("json", "as JSON", "--json"),),
    ),
)
