"""Telemetry never breaks what it observes: a failing exporter, processor or meter is logged."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator

_log = logging.getLogger("tau.telemetry")


@contextlib.contextmanager
def guarded(what: str) -> Iterator[None]:
    """Log an exception raised in the block (``what`` failed) instead of raising it."""
    try:
        yield
    except Exception:
        _log.exception("tau.telemetry: %s failed", what)
