"""``tau install``, ``tau remove``, ``tau list`` and ``tau config``: declared here (standard
library only, for ``tau --help``), done by :mod:`tau.cli.packages`."""

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


def _config(args: argparse.Namespace) -> int:
    from pathlib import Path

    from tau.cli.config import config_path, tau_home
    from tau.cli.errors import UsageError
    from tau.cli.extensions.loader import discover
    from tau.cli.packages import disabled_resources, installed, package_roots, set_enabled
    from tau.cli.resources import ResourceOptions, load_resources

    if args.action is not None:
        if args.resource is None:
            raise UsageError(f"tau config {args.action} needs KIND:NAME")
        set_enabled(args.resource, args.action == "enable")
    disabled = disabled_resources()
    cwd = Path.cwd().resolve()
    roots = package_roots()
    found = load_resources(cwd, ResourceOptions(extra_roots=roots))
    extensions = discover(cwd, tau_home(), (), [r for r, _ in roots], entry_points=True)
    rows = [
        *((f"skill:{s.name}", s.source) for s in found.skills),
        *((f"template:{t.name}", t.source) for t in found.templates),
        *((f"extension:{e.name}", e.label()) for e in extensions),
        *((f"package:{p.name}", p.source) for p in installed()),
    ]
    names = {name for name, _ in rows}
    rows += [(name, "(not found here)") for name in sorted(disabled - names)]
    print(f"settings: {config_path()}")
    for name, where in rows:
        print(f"  [{'off' if name in disabled else 'on '}] {name}  {where}")
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
    Command(
        "config",
        "the skills, templates, extensions and packages found here, each on or off; "
        "enable/disable KIND:NAME",
        _config,
        args=(
            Arg("action", "enable or disable", nargs="?", choices=("enable", "disable")),
            Arg(
                "resource",
                "skill:NAME, template:NAME, extension:NAME or package:NAME",
                nargs="?",
                metavar="KIND:NAME",
            ),
        ),
    ),
)
