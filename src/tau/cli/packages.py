"""Packages: a folder holding ``extensions/``, ``skills/`` and/or ``prompts/`` (a pi package
with those folders works too), installed once and used in every session.

``tau install SOURCE`` records it in ``$TAU_HOME/packages.json``:

* a local folder: used where it is (edits take effect at the next start or ``/reload``);
* a git repository (``git+URL``, ``git+file:///path``, an ``https://``/``ssh://``/``git@`` URL,
  or a path ending in ``.git``): cloned into ``$TAU_HOME/packages/NAME``;
* ``pip:REQUIREMENT``: ``pip install``\\ ed into tau's own environment; its extensions come
  through the ``tau.extensions`` entry point.

``tau remove NAME`` forgets it (deleting the clone, or ``pip uninstall``\\ ing it); ``tau list``
shows each with what it holds. The resources of a package come after the user's own (see
:mod:`tau.cli.resources.loader`).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from tau.cli.config import tau_home
from tau.cli.errors import UsageError

RESOURCE_FOLDERS = ("extensions", "skills", "prompts")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")
_GIT_URL = re.compile(r"^(git\+|https?://|ssh://|git@|git://)")


class PackageError(RuntimeError):
    """A package that cannot be installed or removed; the message says why."""


@dataclass(frozen=True, slots=True)
class Package:
    """One installed package."""

    name: str
    kind: str
    """``path``, ``git`` or ``pip``."""
    source: str
    root: str | None
    """The folder holding its resources (None for a pip package)."""

    def holds(self) -> dict[str, int]:
        """How many entries each resource folder of the package has."""
        if self.root is None:
            return {}
        counts = {}
        for folder in RESOURCE_FOLDERS:
            path = Path(self.root) / folder
            try:
                counts[folder] = sum(1 for p in path.iterdir() if not p.name.startswith("."))
            except OSError:
                continue
        return counts


def _registry_path() -> Path:
    return tau_home() / "packages.json"


def installed() -> list[Package]:
    """The installed packages, in the order they were installed (a malformed file: none)."""
    try:
        data = json.loads(_registry_path().read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return []
    packages = []
    for item in data.get("packages", []) if isinstance(data, dict) else []:
        try:
            packages.append(Package(**{k: item[k] for k in ("name", "kind", "source", "root")}))
        except (KeyError, TypeError):
            continue
    return packages


def package_roots(disabled: frozenset[str] = frozenset()) -> tuple[tuple[Path, str], ...]:
    """``(folder, name)`` of each installed package that has a folder (and is not
    ``package:NAME`` in ``disabled``)."""
    return tuple(
        (Path(p.root), p.name)
        for p in installed()
        if p.root is not None and f"package:{p.name}" not in disabled
    )


KINDS = ("skill", "template", "extension", "package")
"""What ``tau config enable``/``disable`` name: ``KIND:NAME``."""


def disabled_resources() -> frozenset[str]:
    """The ``KIND:NAME`` entries of config.json's ``"disabled"`` list (malformed ones ignored)."""
    from tau.cli.config import load_config

    listed = load_config().get("disabled")
    if not isinstance(listed, list):
        return frozenset()
    return frozenset(n for n in listed if isinstance(n, str) and n.partition(":")[0] in KINDS)


def set_enabled(reference: str, enabled: bool) -> None:
    """Enable or disable the resource ``KIND:NAME`` (in config.json's ``"disabled"``)."""
    from tau.cli.config import save_config

    kind, colon, name = reference.partition(":")
    if not colon or kind not in KINDS or not name:
        raise UsageError(f"{reference!r}: give KIND:NAME, KIND one of {', '.join(KINDS)}")
    current = set(disabled_resources())
    (current.discard if enabled else current.add)(reference)
    save_config({"disabled": sorted(current)})


def _save(packages: list[Package]) -> None:
    path = _registry_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps({"packages": [asdict(p) for p in packages]}, indent=2) + "\n")
    tmp.replace(path)


def _name_from(source: str) -> str:
    tail = re.split(r"[/:\\]", source.rstrip("/"))[-1]
    return re.sub(r"\.git$", "", tail) or "package"


def _check_root(root: Path) -> None:
    if not any((root / folder).is_dir() for folder in RESOURCE_FOLDERS):
        raise PackageError(f"{root} holds none of {', '.join(f + '/' for f in RESOURCE_FOLDERS)}")


def install(source: str, name: str | None = None, cwd: Path | None = None) -> Package:
    """Install ``source`` (see the module's note) as ``name`` (default: from the source)."""
    kind = "pip" if source.startswith("pip:") else "git" if _is_git(source) else "path"
    if kind == "pip":
        requirement = source.removeprefix("pip:").strip()
        if not requirement:
            raise UsageError("pip: needs a requirement, e.g. pip:tau-guard")
        name = name or re.split(r"[<>=!~\[ ;@]", requirement, maxsplit=1)[0]
    name = name or _name_from(source.removeprefix("git+"))
    if not _NAME.match(name):
        raise UsageError(f"{name!r} is not a package name (letters, digits, . _ -)")
    packages = installed()
    if any(p.name == name for p in packages):
        raise PackageError(f"a package named {name!r} is installed (tau remove {name} first)")
    if kind == "path":
        root = Path(source).expanduser()
        root = (root if root.is_absolute() else (cwd or Path.cwd()) / root).resolve()
        if not root.is_dir():
            raise PackageError(f"no such folder: {source}")
        _check_root(root)
        package = Package(name, kind, str(root), str(root))
    elif kind == "git":
        target = tau_home() / "packages" / name
        if target.exists():
            raise PackageError(f"{target} exists already: remove it first")
        target.parent.mkdir(parents=True, exist_ok=True)
        url = source.removeprefix("git+")
        _run(["git", "clone", "--quiet", "--depth", "1", url, str(target)], f"git clone {url}")
        try:
            _check_root(target)
        except PackageError:
            shutil.rmtree(target, ignore_errors=True)
            raise
        package = Package(name, kind, source, str(target))
    else:
        _run([sys.executable, "-m", "pip", "install", "--quiet", requirement], "pip install")
        package = Package(name, kind, source, None)
    _save([*packages, package])
    return package


def _is_git(source: str) -> bool:
    return bool(_GIT_URL.match(source)) or source.rstrip("/").endswith(".git")


def _run(argv: list[str], what: str) -> None:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=600, check=False)
    except FileNotFoundError:
        raise PackageError(f"{what}: {argv[0]} is not installed") from None
    except subprocess.TimeoutExpired:
        raise PackageError(f"{what}: no answer after 10 minutes") from None
    if done.returncode != 0:
        lines = (done.stderr or done.stdout).strip().splitlines()
        raise PackageError(f"{what} failed: {lines[-1] if lines else f'exit {done.returncode}'}")


def remove(name: str) -> Package:
    """Forget the package ``name`` (a clone is deleted, a pip package uninstalled)."""
    packages = installed()
    found = next((p for p in packages if p.name == name), None)
    if found is None:
        known = ", ".join(p.name for p in packages) or "none is installed"
        raise PackageError(f"no package named {name!r} ({known})")
    if found.kind == "git" and found.root is not None:
        clone = Path(found.root)
        if clone.parent == tau_home() / "packages":  # only ever a folder tau made
            shutil.rmtree(clone, ignore_errors=True)
    elif found.kind == "pip":
        _run([sys.executable, "-m", "pip", "uninstall", "--yes", "--quiet", name], "pip uninstall")
    _save([p for p in packages if p is not found])
    return found


def describe(package: Package) -> dict[str, Any]:
    """One row of ``tau list``."""
    return {**asdict(package), "holds": package.holds()}
