"""Names a face resolves on first use, and names that left it for another face.

A face (``tau.ai``, ``tau.ai.adapters``, ``tau.ai.structured``) lists each lazy name with the
module that defines it, so ``import tau.ai`` loads only what a first call needs and each
capability loads when it is first named. A name that moved to another face still resolves
from the old one, with a ``DeprecationWarning`` naming the new place, for one minor version.
"""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Mapping
from typing import Any


def resolve(
    face: str,
    namespace: dict[str, Any],
    name: str,
    lazy: Mapping[str, str],
    moved: Mapping[str, str],
    modules: Mapping[str, str] | None = None,
) -> Any:
    """The value of ``face.name``: loaded from its module (``lazy``: name -> the module that
    defines it; ``modules``: name -> a module that is the value) and kept in ``namespace``, so
    the next lookup is a plain attribute; or, for a name that ``moved`` (name -> its new face),
    read from the new face with a ``DeprecationWarning``."""
    if name in lazy:
        value = getattr(importlib.import_module(lazy[name]), name)
    elif modules is not None and name in modules:
        value = importlib.import_module(modules[name])
    elif name in moved:
        # stacklevel 3: the warning points at the line that read the name, past __getattr__.
        warnings.warn(
            f"{face}.{name} is deprecated; import it from {moved[name]}",
            DeprecationWarning,
            stacklevel=3,
        )
        return getattr(importlib.import_module(moved[name]), name)
    else:
        raise AttributeError(f"module {face!r} has no attribute {name!r}")
    namespace[name] = value
    return value
