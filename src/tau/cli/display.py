"""Rendering a run for a terminal with rich: Markdown, diffs, live tool output, a spinner.

What is final is printed once, above a live region that is redrawn as the run goes: the
answer's unfinished Markdown block, the last lines of a running ``bash``, a spinner while the
model has not answered yet. The answer is cut into blocks as it streams
(:class:`~tau.cli.markdown_blocks.BlockSplitter`): each block is rendered once when it is
finished, and only the tail is re-rendered, at most as often as the live region is redrawn.

Where the live region lives is the job of a :class:`Surface`: :class:`TerminalSurface` for a
one-shot run, the prompt in an interactive session. This module needs rich (the ``[cli]``
extra); the plain :class:`~tau.cli.render.Renderer` serves pipes.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol, TextIO

from rich.console import Console, RenderableType
from rich.markdown import Markdown
from rich.text import Text

from tau.agent import AgentEvent, FallbackEvent
from tau.ai import AssistantMessage, Model, TextContent
from tau.cli.markdown_blocks import BlockSplitter
from tau.cli.render import SPINNER_FRAMES, Renderer, describe_fallback, status_line

MIN_WIDTH = 20
"""Narrower terminals are rendered at this width (and wrap): rich cannot lay out less."""
TOOL_HEAD = 4
TOOL_TAIL = 6
"""A tool's output longer than ``TOOL_HEAD + TOOL_TAIL + 1`` lines shows only these."""
LIVE_TOOL_LINES = 8
"""Lines of a running tool's output shown live."""
DIFF_LINES = 60
_ARGS_PREVIEW = 160


class Surface(Protocol):
    """Where a :class:`TerminalRenderer` draws: final output above, a live region below."""

    def print(self, text: str) -> None:
        """Write ``text`` (ANSI, whole lines) above the live region, for good."""

    def changed(self) -> None:
        """The live region's content changed: redraw it soon."""

    def size(self) -> tuple[int, int]:
        """Columns and rows of the terminal."""


class AnswerMarkdown(Markdown):
    """Markdown as the model wrote it: a single newline stays a line break (a poem keeps its
    lines, as pi and ``llm`` show them), where CommonMark would join the lines with a space."""

    def __init__(self, markup: str) -> None:
        super().__init__(markup)
        for token in self.parsed:
            for child in token.children or ():
                if child.type == "softbreak":
                    child.type = "hardbreak"


@dataclass(slots=True)
class _Running:
    name: str
    output: str = ""


def collapse(text: str, head: int = TOOL_HEAD, tail: int = TOOL_TAIL) -> tuple[list[str], int]:
    """The lines of ``text`` to show and how many were left out (after line ``head``)."""
    lines = text.rstrip("\n").split("\n")
    hidden = len(lines) - head - tail
    if hidden <= 1:
        return lines, 0
    return [*lines[:head], *lines[-tail:]], hidden


def _last_lines(text: str, count: int) -> list[str]:
    end = len(text.rstrip("\n"))
    start = end
    for _ in range(count):
        found = text.rfind("\n", 0, start)
        if found < 0:
            start = 0
            break
        start = found
    return text[start:end].lstrip("\n").split("\n") if end else []


def _lines(rows: list[Text]) -> Text:
    """``rows`` one per line, each cut to the width with an ellipsis (never wrapped)."""
    return Text("\n", no_wrap=True, overflow="ellipsis").join(rows)


def _diff_line(line: str) -> Text:
    style = {"+": "green", "-": "red"}.get(line[:1], "dim")
    return Text(line, style=style)


class TerminalRenderer(Renderer):
    """A :class:`~tau.cli.render.Renderer` that draws for a person at a terminal."""

    def __init__(self, console: Console, surface: Surface, model: Callable[[], Model]) -> None:
        super().__init__()
        self.console = console
        self.surface = surface
        self.model = model
        self._text = BlockSplitter()
        self._thinking = BlockSplitter()
        self._blocks = 0
        self._waiting_since: float | None = None
        self._tools: dict[str, _Running] = {}
        self._live_key: tuple[Any, ...] | None = None
        self._live_cache = ""

    # ------------------------------------------------------------------- output helpers

    def width(self) -> int:
        """The width to render at."""
        return max(MIN_WIDTH, self.surface.size()[0])

    def render(self, renderable: RenderableType, width: int | None = None) -> str:
        """``renderable`` as ANSI text, whole lines, without blank lines around it."""
        # The console's width caps what print() is given: set it, the terminal may have changed.
        self.console.width = width or self.width()
        with self.console.capture() as captured:
            self.console.print(renderable, crop=False)
        lines = [line.rstrip(" ") for line in captured.get().split("\n")]
        while lines and not lines[-1]:
            lines.pop()
        first = next((i for i, line in enumerate(lines) if line), len(lines))
        return "".join(f"{line}\n" for line in lines[first:])

    def _print(self, renderable: RenderableType) -> None:
        self.surface.print(self.render(renderable))

    def _block(self, markdown: str) -> None:
        if self._blocks:
            self.surface.print("\n")
        self._blocks += 1
        self._print(AnswerMarkdown(markdown))

    def _thought(self, text: str) -> None:
        self._print(Text(text, style="dim italic"))

    def notice(self, text: str, style: str = "dim") -> None:
        """Lines of their own, e.g. ``[steering queued]``, above what is still streaming."""
        self._print(Text(text, style=style))

    def _flush_message(self) -> None:
        for block in self._thinking.flush():
            self._thought(block)
        for block in self._text.flush():
            self._block(block)

    # ------------------------------------------------------------------- events

    def __call__(self, event: AgentEvent) -> None:
        self.track(event)
        if event.type == "message_update":
            sub = event.assistant_message_event
            if sub.type == "text_delta":
                self._waiting_since = None
                for block in self._thinking.flush():
                    self._thought(block)
                for block in self._text.feed(sub.delta):
                    self._block(block)
            elif sub.type == "thinking_delta":
                self._waiting_since = None
                for block in self._thinking.feed(sub.delta):
                    self._thought(block)
        elif event.type in ("agent_start", "turn_start"):
            self._waiting_since = time.monotonic()
        elif event.type == "message_start":
            self._blocks = 0
        elif event.type == "message_end":
            message = event.message
            if isinstance(message, AssistantMessage):
                self._flush_message()
                if message.stop_reason == "length":
                    self.notice("[stopped: max tokens]", "yellow")
        elif event.type == "tool_execution_start":
            self._tool_started(event)
        elif event.type == "tool_execution_update":
            running = self._tools.get(event.tool_call_id)
            if running is not None:
                result = event.partial_result
                running.output = "".join(
                    b.text for b in result.content if isinstance(b, TextContent)
                )
        elif event.type == "tool_execution_end":
            self._tools.pop(event.tool_call_id, None)
            self._tool_ended(event)
        elif isinstance(event, FallbackEvent):
            self._flush_message()
            self.notice(describe_fallback(event), "yellow")
        elif event.type == "agent_end":
            self._flush_message()
            self._waiting_since = None
            self._tools.clear()
        self.surface.changed()

    def _tool_started(self, event: Any) -> None:
        self._flush_message()
        self._waiting_since = None
        args = event.args if isinstance(event.args, dict) else {}
        if event.tool_name == "bash" and "command" in args:
            shown = str(args["command"])
        elif "path" in args:
            shown = str(args["path"])
        else:
            shown = json.dumps(event.args, ensure_ascii=False)
        line = Text("→ ", style="cyan")
        line.append(event.tool_name, style="bold cyan")
        preview = " ".join(shown.split())
        if len(preview) > _ARGS_PREVIEW:
            preview = preview[: _ARGS_PREVIEW - 1] + "…"
        line.append(f" {preview}", style="cyan")
        self._print(line)
        self._blocks = 0
        self._tools[event.tool_call_id] = _Running(event.tool_name)

    def _tool_ended(self, event: Any) -> None:
        result = event.result
        details = result.details if isinstance(result.details, dict) else {}
        diff = details.get("diff") if event.tool_name == "edit" else None
        if isinstance(diff, str) and diff and not event.is_error:
            lines, hidden = collapse(diff, DIFF_LINES, 0)
            rows = [_diff_line(line) for line in lines]
            if hidden:
                rows.append(Text(f"… {hidden} more lines", style="dim italic"))
            self._print(_lines(rows))
            return
        text = "".join(b.text for b in result.content if isinstance(b, TextContent))
        images = sum(1 for b in result.content if getattr(b, "type", None) == "image")
        style = "red" if event.is_error else "dim"
        lines, hidden = collapse(text) if text.strip() else ([], 0)
        rows = [Text(line, style=style) for line in lines]
        if hidden:
            rows.insert(TOOL_HEAD, Text(f"… {hidden} more lines", style="dim italic"))
        if images:
            rows.append(Text(f"[{images} image(s)]", style="dim"))
        self._print(_lines(rows) if rows else Text("(no output)", style=style))

    # ------------------------------------------------------------------- the live region

    @property
    def animating(self) -> bool:
        """Whether the live region shows a spinner (and so needs redrawing on a timer)."""
        return self._waiting_since is not None or bool(self._tools)

    def live(self, rows: int | None = None) -> str:
        """The live region as ANSI lines, at most ``rows`` of them (a third of the terminal by
        default)."""
        columns, height = self.surface.size()
        if columns <= MIN_WIDTH:  # a live region that wraps cannot be erased: none at all
            return ""
        limit = rows if rows is not None else max(3, height // 3)
        frame = SPINNER_FRAMES[int(time.monotonic() * 12) % len(SPINNER_FRAMES)]
        key = (
            self._text.tail(limit),
            self._thinking.tail(limit),
            tuple((t.name, len(t.output)) for t in self._tools.values()),
            frame if self.animating else "",
            columns,
            limit,
        )
        if key != self._live_key:
            self._live_key = key
            self._live_cache = self._draw_live(key[0], key[1], frame, limit, columns - 1)
        return self._live_cache

    def _draw_live(self, tail: str, thought: str, frame: str, limit: int, width: int) -> str:
        # One column short of the terminal: a line that fills it would leave the cursor in the
        # pending-wrap state on some terminals, and the region could not be erased exactly.
        parts: list[str] = []
        if thought.strip():
            parts.append(self.render(Text(thought, style="dim italic"), width))
        if tail.strip():
            parts.append(self.render(AnswerMarkdown(tail), width))
        for running in self._tools.values():
            line = Text(f"{frame} {running.name} ", style="cyan")
            output = _last_lines(running.output, LIVE_TOOL_LINES)
            rows = [line, *(Text(x, style="dim") for x in output)]
            parts.append(self.render(_lines(rows), width))
        if self._waiting_since is not None and not parts:
            waited = time.monotonic() - self._waiting_since
            label = "waiting for the model" if waited < 2 else f"waiting ({waited:.0f}s)"
            parts.append(self.render(Text(f"{frame} {label}", style="cyan"), width))
        lines = "".join(parts).split("\n")[:-1]
        return "".join(f"{line}\n" for line in lines[-limit:])

    def status(self) -> str:
        """The status line: model, context %, tokens and cost."""
        return status_line(self.model(), self.context, self.total)


class TerminalSurface:
    """A live region at the bottom of a terminal stream, for a one-shot run.

    The region is erased and redrawn in one write, at most every ``interval`` seconds, from a
    task on the running event loop, so it never races the run that changes it.
    """

    def __init__(self, stream: TextIO, interval: float = 0.08) -> None:
        self.stream = stream
        self.interval = interval
        self.renderer: TerminalRenderer | None = None
        self._drawn = 0  # lines of the live region on the screen
        self._dirty = False
        self._task: asyncio.Task[None] | None = None

    def size(self) -> tuple[int, int]:
        """The terminal's columns and rows."""
        import shutil

        size = shutil.get_terminal_size()
        return size.columns, size.lines

    def _erase(self) -> str:
        if not self._drawn:
            return ""
        drawn, self._drawn = self._drawn, 0
        return f"\r\x1b[{drawn}A\x1b[J"

    def print(self, text: str) -> None:
        """Write ``text`` above the live region (which is redrawn on the next tick)."""
        self._write(self._erase() + text)
        self._dirty = True
        self._ensure_ticking()

    def changed(self) -> None:
        """Mark the live region for redrawing."""
        self._dirty = True
        self._ensure_ticking()

    def _ensure_ticking(self) -> None:
        if self._task is None:
            with contextlib.suppress(RuntimeError):  # no loop: redrawn by close()
                self._task = asyncio.get_running_loop().create_task(self._tick())

    async def _tick(self) -> None:
        while True:
            renderer = self.renderer
            if renderer is not None and (self._dirty or renderer.animating):
                self._dirty = False
                self.redraw()
            await asyncio.sleep(self.interval)

    def redraw(self) -> None:
        """Draw the live region now."""
        if self.renderer is None:
            return
        rows = max(1, self.size()[1] - 2)
        live = self.renderer.live(min(rows, max(3, rows // 2)))
        self._write(self._erase() + live)
        self._drawn = live.count("\n")

    def _write(self, text: str) -> None:
        if text:
            self.stream.write(text)
            self.stream.flush()

    def asking(self, ask: Callable[[str], Awaitable[bool]]) -> Callable[[str], Awaitable[bool]]:
        """``ask`` with the live region put away while the question waits for its answer."""

        async def paused(question: str) -> bool:
            self.close()
            try:
                return await ask(question)
            finally:
                self.changed()

        return paused

    def finish(self) -> None:
        """The end of the run: the status line, then no live region."""
        self.close()
        if self.renderer is not None:
            status = self.renderer.render(Text(self.renderer.status(), style="dim"))
            with contextlib.suppress(OSError, ValueError):
                self._write(status)

    def close(self) -> None:
        """Stop redrawing and erase the live region."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
        with contextlib.suppress(OSError, ValueError):
            self._write(self._erase())


def console_for(stream: TextIO) -> Console:
    """A rich console that renders for the terminal ``stream`` is (colours, width)."""
    return Console(file=stream, force_terminal=True, highlight=False, soft_wrap=False)
