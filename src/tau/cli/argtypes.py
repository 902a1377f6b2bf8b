"""argparse value types shared by the command's flags (standard library only: `tau --help`
imports nothing else)."""

from __future__ import annotations

import argparse
import math


def positive_int(text: str) -> int:
    """A whole number above 0."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a whole number above 0, got {text!r}")
    return value


def positive_number(text: str, what: str = "a number") -> float:
    """A finite number above 0 (``what`` names it in the error: "a number of seconds")."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (value > 0 and math.isfinite(value)):
        raise argparse.ArgumentTypeError(f"must be {what} above 0, got {text!r}")
    return value


def non_negative_number(text: str, what: str = "a number") -> float:
    """A finite number of 0 or more."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (value >= 0 and math.isfinite(value)):
        raise argparse.ArgumentTypeError(f"must be {what} of 0 or more, got {text!r}")
    return value


THINKING_LEVELS = ("off", "minimal", "low", "medium", "high", "xhigh")
"""The reasoning levels ``--thinking`` and ``/thinking`` take."""
