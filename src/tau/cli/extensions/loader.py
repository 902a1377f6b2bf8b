"""Where extensions are found and how a file becomes a running extension.

Found, in this order: each ``*.py`` file and package folder (with ``__init__.py``) in
``$TAU_HOME/extensions/``, then in ``.tau/extensions/`` of the working directory, then in each
installed package's ``extensions/``, then each ``--extension PATH``, then each installed
distribution's ``tau.extensions`` entry point (``name = "module"`` or ``"module:setup"``). A
file is imported under a private module name (two ``plugin.py`` files do not clash); its
``setup(tau)`` is called. An import that fails, a missing ``setup`` or a ``setup`` that raises
is a :class:`LoadProblem` naming the file and line: that extension is left out and the session
goes on.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

ENTRY_POINT_GROUP = "tau" + ".extensions"  # not a module: spelled so that no tool thinks so


@dataclass(frozen=True, slots=True)
class ExtensionSource:
    """An extension to load: a file (or package ``__init__.py``), or an entry point's value."""

    name: str
    path: Path | None = None
    entry_point: Any = None

    def label(self) -> str:
        """How a message names it."""
        return str(self.path) if self.path is not None else f"entry point {self.name}"


def folder_extensions(folder: Path) -> list[ExtensionSource]:
    """The extensions in ``folder``: its ``.py`` files and its packages, by name."""
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        return []
    found = []
    for entry in entries:
        if entry.name.startswith((".", "_")):
            continue
        path = Path(entry.path)
        try:
            if entry.is_file() and entry.name.endswith(".py"):
                found.append(ExtensionSource(path.stem, path))
            elif entry.is_dir() and (path / "__init__.py").is_file():
                found.append(ExtensionSource(entry.name, path / "__init__.py"))
        except OSError:
            continue
    return found


def path_extension(raw: str | Path, cwd: Path) -> list[ExtensionSource]:
    """``--extension PATH``: a ``.py`` file, a package folder, or a folder of extensions."""
    path = Path(raw).expanduser()
    path = path if path.is_absolute() else cwd / path
    if path.is_dir():
        if (path / "__init__.py").is_file():
            return [ExtensionSource(path.name, path / "__init__.py")]
        return folder_extensions(path)
    return [ExtensionSource(path.stem, path)]


def entry_point_extensions() -> list[ExtensionSource]:
    """The ``tau.extensions`` entry points of the installed distributions."""
    from importlib.metadata import entry_points

    return [
        ExtensionSource(point.name, None, point) for point in entry_points(group=ENTRY_POINT_GROUP)
    ]


def discover(
    cwd: Path,
    home: Path,
    paths: Iterable[str | Path] = (),
    package_roots: Iterable[Path] = (),
    *,
    found_ones: bool = True,
    entry_points: bool = True,
) -> list[ExtensionSource]:
    """Every extension to load, in order, each file once (``found_ones=False``: only
    ``paths``)."""
    found: list[ExtensionSource] = []
    if found_ones:
        found += folder_extensions(home / "extensions")
        found += folder_extensions(cwd / ".tau" / "extensions")
        for root in package_roots:
            found += folder_extensions(root / "extensions")
    for raw in paths:
        found += path_extension(raw, cwd)
    if entry_points:
        found += entry_point_extensions()
    unique: list[ExtensionSource] = []
    seen: set[Path] = set()
    for source in found:
        if source.path is not None:
            real = source.path.resolve()
            if real in seen:
                continue
            seen.add(real)
        unique.append(source)
    return unique


def import_source(source: ExtensionSource) -> tuple[ModuleType | None, Callable[..., Any]]:
    """The module of ``source`` and its ``setup`` (raises what importing raises, or
    :class:`AttributeError` without a ``setup``)."""
    if source.entry_point is not None:
        loaded = source.entry_point.load()
        if isinstance(loaded, ModuleType):
            return loaded, _setup_of(loaded, source)
        if not callable(loaded):
            raise AttributeError(f"entry point {source.name} names no setup function")
        return None, loaded
    assert source.path is not None
    if not source.path.is_file():
        raise FileNotFoundError(f"no such extension file: {source.path}")
    digest = hashlib.sha1(str(source.path.resolve()).encode()).hexdigest()[:10]
    name = f"tau_extension_{digest}"
    package = source.path.name == "__init__.py"
    spec = importlib.util.spec_from_file_location(
        name,
        source.path,
        submodule_search_locations=[str(source.path.parent)] if package else None,
    )
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {source.path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # a package's own relative imports find it
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module, _setup_of(module, source)


def _setup_of(module: ModuleType, source: ExtensionSource) -> Callable[..., Any]:
    setup: object = getattr(module, "setup", None)
    if not callable(setup):
        raise AttributeError(f"{source.label()} has no setup(tau) function")
    return setup
