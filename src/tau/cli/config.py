"""The ``tau`` command's small settings file: ``$TAU_HOME/config.json``.

``TAU_HOME`` defaults to ``$XDG_CONFIG_HOME/tau`` (``~/.config/tau``). The file holds the model
to use when none is named (``"model": "provider/id"``, updated to the last one used) and the
interactive history lives beside it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any


def tau_home() -> Path:
    """Where tau keeps its settings and history."""
    home = os.environ.get("TAU_HOME")
    if home:
        return Path(home).expanduser()
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "tau"


def config_path() -> Path:
    """The settings file."""
    return tau_home() / "config.json"


def load_config() -> dict[str, Any]:
    """The settings; an unreadable or malformed file counts as empty (and is left alone)."""
    try:
        data = json.loads(config_path().read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return {}
    return data if isinstance(data, dict) else {}


def save_config(changes: dict[str, Any]) -> None:
    """Merge ``changes`` into the settings file (best effort: a read-only home is not an error)."""
    data = load_config()
    data.update(changes)
    path = config_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
        tmp.replace(path)
    except OSError:
        pass
