"""The model call's settings from the command line: the one place the CLI builds them.

Every command that runs the model (the interactive and one-shot agent, ``tau batch``) takes
its :class:`tau.ai.Settings` from here, so a flag maps to a setting once.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tau.ai import Settings

__all__ = ["model_settings"]


def model_settings(args: argparse.Namespace) -> Settings:
    """The settings the parsed flags give (``--max-tokens``, ``--timeout``); a flag the command
    does not have, or that was not given, leaves the setting to its default."""
    settings: Settings = {}  # a plain dict: `tau --help` loads no tau.ai
    max_tokens = getattr(args, "max_tokens", None)
    if max_tokens is not None:
        settings["max_tokens"] = max_tokens
    timeout = getattr(args, "timeout", None)
    if timeout is not None:
        settings["timeout"] = timeout
    return settings
