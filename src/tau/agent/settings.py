"""An agent's model settings: checked when the agent is made, the deprecated form still taken."""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

from tau.ai import Settings
from tau.ai.adapters import check_settings

__all__ = ["agent_settings"]

STREAM_OPTIONS_DEPRECATED = (
    "Agent(stream_options=...) is deprecated: pass settings=tau.ai.Settings(...)"
)


def agent_settings(
    settings: Settings | None, stream_options: Mapping[str, Any] | None
) -> tuple[Settings, dict[str, Any]]:
    """The agent's own copies of ``settings`` (checked: a misspelt key is a ``TypeError``
    here, not at the first run) and of the deprecated ``stream_options`` (which warn)."""
    if settings is not None:
        check_settings(settings, "Agent()")
    if stream_options is not None:
        # stacklevel: the user's Agent(...) line, past this function and Agent.__init__.
        warnings.warn(STREAM_OPTIONS_DEPRECATED, DeprecationWarning, stacklevel=3)
    return Settings(**settings) if settings else Settings(), dict(stream_options or {})
