"""The module paths ``tau.ai`` had before its subpackages, kept importable for one minor version.

``import tau.ai.builder`` (or ``from tau.ai.utils.partial_json import …``) still works and warns
with a ``DeprecationWarning`` that names the new module. The old paths are served by an import
finder rather than by shim files at the old paths: a file left at a moved module's path would
stop git from seeing the move, and edits made to the old file on other branches would then
conflict with the shim instead of following the module to its new place.

An old module is a stand-in whose attributes are read from the new modules (a module that was
split lists each part), so ``tau.ai.builder.output_cap`` finds the cap in its own module now.
"""

from __future__ import annotations

import importlib
import sys
import warnings
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from types import ModuleType
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    # Only for the type: importing importlib.abc at run time costs tens of milliseconds.
    from importlib.abc import Loader

# old module -> the modules its names live in now (the first one is "where it moved")
MOVED: dict[str, tuple[str, ...]] = {
    "tau.ai.types": ("tau.ai.core.types", "tau.ai.core.compat"),
    "tau.ai.events": ("tau.ai.core.events",),
    "tau.ai.errors": ("tau.ai.core.errors",),
    "tau.ai.abort": ("tau.ai.core.abort",),
    "tau.ai.options": ("tau.ai.core.options",),
    "tau.ai.utils.cost": ("tau.ai.core.cost",),
    "tau.ai.event_stream": ("tau.ai.streaming.event_stream",),
    "tau.ai.builder": (
        "tau.ai.streaming.builder",
        "tau.ai.streaming.launch",
        "tau.ai.streaming.output_cap",
    ),
    "tau.ai.adapter": ("tau.ai.streaming.adapter", "tau.ai.streaming.json_body"),
    "tau.ai.sse": ("tau.ai.streaming.sse",),
    "tau.ai.headers": ("tau.ai.streaming.headers",),
    "tau.ai.observe": ("tau.ai.streaming.observe",),
    "tau.ai.http": ("tau.ai.streaming.http",),
    "tau.ai.utils.partial_json": ("tau.ai.streaming.partial_json",),
    "tau.ai.utils.json_path": ("tau.ai.streaming.json_path",),
    "tau.ai.utils.sanitize": ("tau.ai.streaming.sanitize",),
    "tau.ai.utils.hash": ("tau.ai.streaming.hash",),
    "tau.ai.registry": ("tau.ai.lookup.registry",),
    "tau.ai.catalog": ("tau.ai.lookup.catalog",),
    "tau.ai.env_keys": ("tau.ai.lookup.env_keys",),
    "tau.ai.local_models": ("tau.ai.lookup.local_models",),
    "tau.ai.provider_options": ("tau.ai.lookup.provider_options",),
    "tau.ai.fallback": ("tau.ai.capabilities.fallback",),
    "tau.ai.serialization": ("tau.ai.capabilities.serialization",),
    "tau.ai.utils.transform_messages": ("tau.ai.capabilities.transform_messages",),
    "tau.ai.utils.validation": ("tau.ai.capabilities.validation",),
    "tau.ai.utils.overflow": ("tau.ai.capabilities.overflow",),
    "tau.ai.utils.size": ("tau.ai.capabilities.size",),
    # A package that is gone as a whole: its modules moved one by one (above).
    "tau.ai.utils": (),
}


def new_place(old: str) -> tuple[str, ...] | None:
    """The modules that hold what the old module ``old`` held, or ``None`` if it did not move.

    A submodule of a moved package moved with it: ``tau.ai.http._pool`` is
    ``tau.ai.streaming.http._pool``.
    """
    if old in MOVED:
        return MOVED[old]
    package, _, tail = old.rpartition(".")
    while package.startswith("tau.ai."):
        targets = MOVED.get(package)
        if targets:
            return (f"{targets[0]}.{tail}",)
        package, _, head = package.rpartition(".")
        tail = f"{head}.{tail}"
    return None


def _warn(old: str, targets: Sequence[str]) -> None:
    where = f"use {targets[0]}" if targets else "its modules moved into tau.ai's subpackages"
    # Point the warning at the importing line: past this module's frames (``warnings`` itself
    # skips the import machinery's frames when it counts).
    frame = sys._getframe(0)
    level = 1
    while frame.f_back is not None and frame.f_code.co_filename == __file__:
        frame = frame.f_back
        level += 1
    warnings.warn(f"{old} is deprecated; {where}", DeprecationWarning, stacklevel=level)


class _MovedModule(ModuleType):
    """The stand-in for an old module path: names resolve in the new modules."""

    def __init__(self, name: str, targets: tuple[str, ...]) -> None:
        super().__init__(name, f"Deprecated: moved to {targets[0]}." if targets else None)
        self.__targets = targets

    def __getattr__(self, name: str) -> Any:
        for target in self.__targets:
            module = importlib.import_module(target)
            if hasattr(module, name):
                return getattr(module, name)
        raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")

    def __dir__(self) -> list[str]:
        names = set(super().__dir__())
        for target in self.__targets:
            names |= set(dir(importlib.import_module(target)))
        return sorted(names)


class _MovedLoader:
    def create_module(self, spec: ModuleSpec) -> ModuleType:
        targets = new_place(spec.name) or ()
        _warn(spec.name, targets)
        module = _MovedModule(spec.name, targets)
        # A package keeps a (search-free) path so that its old submodules import through here.
        if spec.name in MOVED and (not targets or _is_package(targets[0])):
            module.__path__ = []
        return module

    def exec_module(self, module: ModuleType) -> None:
        """Nothing to run: the stand-in reads the new modules when asked."""


def _is_package(module: str) -> bool:
    return hasattr(importlib.import_module(module), "__path__")


class _MovedFinder:
    """Finds the old module paths of tau.ai (first on ``sys.meta_path``)."""

    def find_spec(
        self, name: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if not name.startswith("tau.ai.") or new_place(name) is None:
            return None
        return ModuleSpec(name, cast("Loader", _MovedLoader()), is_package=name in MOVED)


def install() -> None:
    """Serve the old paths (once per interpreter)."""
    if not any(isinstance(finder, _MovedFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, _MovedFinder())
