"""The progress bar on stderr (rich, imported only when a bar is shown).

It shows done/total, errors, items per second, tokens and cost so far, and the time left.
By default it is on only when stderr is a terminal; without rich installed (the ``[cli]``
extra) the default is no bar, and asking for one explicitly is an ImportError naming the extra.
"""

from __future__ import annotations

import importlib.util
import sys
import time
from typing import Any

from tau.batch.result import BatchSummary

__all__ = ["ProgressBar", "progress_bar"]

INSTALL_HINT = "pip install 'tau[cli]'"


class ProgressBar:
    """A rich progress bar for one batch."""

    def __init__(self, summary: BatchSummary, description: str) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self.summary = summary
        self._progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[errors]}"),
            TextColumn("{task.fields[rate]}"),
            TextColumn("{task.fields[tokens]}"),
            TextColumn("{task.fields[cost]}"),
            TimeElapsedColumn(),
            TextColumn("eta"),
            TimeRemainingColumn(),
            console=Console(stderr=True),
            refresh_per_second=4,
        )
        self._started = time.perf_counter()
        self._task = self._progress.add_task(
            description,
            total=summary.total,
            completed=summary.skipped,
            **self._fields(),
        )
        self._progress.start()

    def _fields(self) -> dict[str, Any]:
        summary = self.summary
        elapsed = max(time.perf_counter() - self._started, 1e-9)
        usage = summary.usage
        errors = summary.counts.get("error", 0)
        return {
            "errors": f"[red]{errors:,} errors[/red]" if errors else "0 errors",
            "rate": f"{summary.done / elapsed:,.1f}/s",
            "tokens": f"{usage.total_tokens:,} tok",
            "cost": f"${usage.cost:,.4f}",
        }

    def update(self) -> None:
        """One more result is in the summary."""
        self._progress.update(
            self._task, completed=self.summary.skipped + self.summary.done, **self._fields()
        )

    def close(self) -> None:
        """Draw the last state and stop."""
        self.update()
        self._progress.stop()


def progress_bar(
    wanted: bool | None, summary: BatchSummary, description: str
) -> ProgressBar | None:
    """The bar for ``progress=wanted`` (None: only on a terminal, and only if rich is there)."""
    if wanted is False:
        return None
    if wanted is None:
        stream = sys.stderr
        if stream is None or not stream.isatty() or importlib.util.find_spec("rich") is None:
            return None
    elif importlib.util.find_spec("rich") is None:
        raise ImportError(f"the batch progress bar needs rich: {INSTALL_HINT}")
    return ProgressBar(summary, description)
