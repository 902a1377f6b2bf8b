"""The cost of drawing a streamed answer on a terminal, against its length.

Run: ``python benchmarks/bench_render.py`` (needs the ``[cli]`` extra). A Markdown answer
(paragraphs, lists, code blocks, a table) of N lines streams in deltas of 4 characters, and the
live region is redrawn every 8 deltas (a model giving 100 deltas a second, the region redrawn
at 12.5 Hz, as :class:`tau.cli.display.TerminalSurface` does). Three ways are timed:

* ``plain``: the piped renderer (text written as it comes), the floor;
* ``tau``: :class:`tau.cli.display.TerminalRenderer`: finished blocks rendered once, only the
  unfinished tail re-rendered on each redraw;
* ``naive``: the whole answer re-rendered as Markdown on each redraw (what a rich ``Live``
  around ``Markdown(text)`` does), measured up to a length where it is already slow.

Linear means: twice the lines, about twice the time (the ``×prev`` column near 2).
"""

from __future__ import annotations

import io
import time

from rich.console import Console
from rich.markdown import Markdown

from tau.agent import MessageUpdateEvent
from tau.ai import AssistantMessage, TextContent, TextDeltaEvent
from tau.ai.providers.faux import faux_model
from tau.cli.display import TerminalRenderer
from tau.cli.render import Renderer

DELTA = 4
REDRAW_EVERY = 8
SIZES = (250, 500, 1000, 2000)
NAIVE_UP_TO = 500


def answer(lines: int) -> str:
    """About ``lines`` lines of varied Markdown."""
    parts: list[str] = []
    count = 0
    section = 0
    while count < lines:
        section += 1
        parts += [
            f"## Section {section}",
            "",
            f"Some **bold** text and `code` in paragraph {section}, long enough to wrap on a "
            "narrow terminal: the quick brown fox jumps over the lazy dog.",
            "",
            "- first point",
            "- second point with *emphasis*",
            "",
            "```python",
            f"def function_{section}(x):",
            "    return x * 2",
            "```",
            "",
            "| a | b |",
            "|---|---|",
            f"| {section} | {section * 2} |",
            "",
        ]
        count = len(parts)
    return "\n".join(parts)


class _Surface:
    def print(self, text: str) -> None:
        pass

    def changed(self) -> None:
        pass

    def size(self) -> tuple[int, int]:
        return 100, 40


def _deltas(text: str) -> list[str]:
    return [text[i : i + DELTA] for i in range(0, len(text), DELTA)]


def _events(text: str) -> list[MessageUpdateEvent]:
    message = AssistantMessage([TextContent("")], "faux", "faux", "faux-model")
    return [MessageUpdateEvent(message, TextDeltaEvent(0, d, message)) for d in _deltas(text)]


def time_plain(text: str) -> float:
    renderer = Renderer(out=io.StringIO(), err=io.StringIO(), color=False)
    events = _events(text)
    started = time.perf_counter()
    for event in events:
        renderer(event)
    return time.perf_counter() - started


def time_tau(text: str) -> float:
    console = Console(file=io.StringIO(), force_terminal=True, width=100)
    renderer = TerminalRenderer(console, _Surface(), faux_model)
    events = _events(text)
    started = time.perf_counter()
    for number, event in enumerate(events):
        renderer(event)
        if number % REDRAW_EVERY == 0:
            renderer.live()
    for block in renderer._text.flush():
        renderer._block(block)
    return time.perf_counter() - started


def time_naive(text: str) -> float:
    console = Console(file=io.StringIO(), force_terminal=True, width=100)
    shown = ""
    started = time.perf_counter()
    for number, delta in enumerate(_deltas(text)):
        shown += delta
        if number % REDRAW_EVERY == 0:
            with console.capture():
                console.print(Markdown(shown))
    return time.perf_counter() - started


def main() -> None:
    print(f"deltas of {DELTA} characters, a redraw every {REDRAW_EVERY} deltas\n")
    print(
        f"{'lines':>6} {'deltas':>7} {'plain ms':>9} {'tau ms':>8} {'×prev':>6} {'µs/delta':>9}"
        f" {'naive ms':>9} {'×prev':>6}"
    )
    previous_tau = previous_naive = 0.0
    for lines in SIZES:
        text = answer(lines)
        deltas = len(_deltas(text))
        plain = time_plain(text)
        tau = time_tau(text)
        naive = time_naive(text) if lines <= NAIVE_UP_TO else None
        tau_ratio = f"{tau / previous_tau:.1f}" if previous_tau else ""
        naive_cell = f"{naive * 1000:>9.0f}" if naive is not None else f"{'-':>9}"
        naive_ratio = f"{naive / previous_naive:.1f}" if naive and previous_naive else ""
        print(
            f"{lines:>6} {deltas:>7} {plain * 1000:>9.1f} {tau * 1000:>8.0f} {tau_ratio:>6} "
            f"{tau / deltas * 1e6:>9.1f} {naive_cell} {naive_ratio:>6}"
        )
        previous_tau = tau
        previous_naive = naive or previous_naive


if __name__ == "__main__":
    main()
