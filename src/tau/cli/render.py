"""Showing a run as plain text: the answer streamed to stdout, tool activity on stderr.

This is what a pipe gets (and a terminal that cannot do more, or one without the ``[cli]``
extra); :mod:`tau.cli.display` renders for a terminal on top of it. Thinking is shown dimmed
only when stdout is a terminal; piped stdout carries the answer text and nothing else. A
fallback model taking over is a notice on stderr; an answer cut at the token limit gets
``[stopped: max tokens]``. Usage of each run (the agent's totals: failed attempts and aborted
runs included, as they spent tokens too) is kept for ``/usage``, and the context the last
answer filled for the status line.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
import time
from dataclasses import dataclass, field
from typing import TextIO

from tau.agent import AgentEndEvent, AgentEvent, FallbackEvent, RunUsage
from tau.ai import AssistantMessage, Model, TextContent
from tau.ai.adapters import one_line

SPINNER_FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
DIM = "\033[2m"
RESET = "\033[0m"
_TOOL_PREVIEW = 200


@dataclass
class RunStats:
    """Usage and time of one run (or a sum of runs)."""

    usage: RunUsage = field(default_factory=RunUsage)
    seconds: float = 0.0

    def merge(self, other: RunStats) -> None:
        self.usage += other.usage
        self.seconds += other.seconds

    def describe(self) -> str:
        usage = self.usage
        cache = ""
        if usage.cache_read_tokens or usage.cache_write_tokens:
            cache = (
                f", cache read {usage.cache_read_tokens}, cache write {usage.cache_write_tokens}"
            )
        return (
            f"{usage.input_tokens} input + {usage.output_tokens} output tokens{cache}, "
            f"${usage.cost:.4f}, {self.seconds:.1f}s, {usage.turns} turn(s), "
            f"{usage.requests} request(s), {usage.tool_calls} tool call(s)"
        )


def is_fancy_terminal(stream: TextIO) -> bool:
    """Whether ``stream`` is a terminal that can be drawn on (``TERM=dumb`` cannot)."""
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):
        return False
    return tty and os.environ.get("TERM", "") not in ("dumb", "unknown")


def _count(value: float) -> str:
    if value < 1000:
        return f"{value:g}"
    if value < 1_000_000:
        return f"{value / 1000:.1f}k".replace(".0k", "k")
    return f"{value / 1_000_000:.1f}M".replace(".0M", "M")


def status_line(model: Model, context_tokens: int, total: RunStats) -> str:
    """``provider/id · 12% of 200k context · 3.4k tokens · $0.0123``: the model, how full the
    context was at the last answer, and the session's tokens and cost."""
    parts = [f"{model.provider}/{model.id}"]
    if model.context_window > 0:
        share = 100 * context_tokens / model.context_window
        parts.append(f"{share:.0f}% of {_count(model.context_window)} context")
    usage = total.usage
    tokens = usage.input_tokens + usage.output_tokens + usage.cache_read_tokens
    parts.append(f"{_count(tokens + usage.cache_write_tokens)} tokens")
    parts.append(f"${usage.cost:.4f}")
    return " · ".join(parts)


def context_tokens(message: AssistantMessage) -> int:
    """The tokens of the context an answer was given and produced (what the next turn sends)."""
    usage = message.usage
    return usage.input + usage.output + usage.cache_read + usage.cache_write


def describe_fallback(event: FallbackEvent) -> str:
    """The notice for a fallback model taking over."""
    attempt = event.attempt
    failed = f"{attempt.model.provider}/{attempt.model.id}"
    following = attempt.next_model
    then = f"falling back to {following.provider}/{following.id}" if following else "giving up"
    discarded = "; its partial answer is discarded" if attempt.discarded else ""
    return f"[{failed} failed: {one_line(attempt.error_message, _TOOL_PREVIEW)}; {then}{discarded}]"


class Spinner:
    """A spinner on stderr (a terminal only) until :meth:`stop`, which erases it."""

    def __init__(self, err: TextIO) -> None:
        self._err = err
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Start spinning (call on the event loop)."""
        if self._err.isatty() and self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._spin())

    async def _spin(self) -> None:
        frame = 0
        while True:
            self._err.write(f"\r{SPINNER_FRAMES[frame % len(SPINNER_FRAMES)]} ")
            self._err.flush()
            frame += 1
            await asyncio.sleep(0.08)

    def stop(self) -> None:
        """Stop and erase the spinner (no-op when it is not spinning)."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(OSError, ValueError):
                self._err.write("\r\033[K")
                self._err.flush()


@dataclass(eq=False)
class Renderer:
    """Writes a run's events for a person; one instance serves every run of a session."""

    out: TextIO = field(default_factory=lambda: sys.stdout)
    err: TextIO = field(default_factory=lambda: sys.stderr)
    color: bool | None = None
    last: RunStats = field(default_factory=RunStats)
    total: RunStats = field(default_factory=RunStats)
    spinner: Spinner | None = None
    context: int = 0
    """Tokens of the context at the last answer (see :func:`context_tokens`)."""
    _started_at: float = 0.0
    _mid_line: bool = False
    _in_thinking: bool = False

    def __post_init__(self) -> None:
        if self.color is None:
            self.color = self.out.isatty()

    def _dim(self, text: str, stream: TextIO) -> str:
        return f"{DIM}{text}{RESET}" if stream.isatty() else text

    def _write(self, text: str) -> None:
        self.out.write(text)
        self.out.flush()
        self._mid_line = not text.endswith("\n")

    def _end_line(self) -> None:
        if self._in_thinking:
            self.out.write(RESET)
            self._in_thinking = False
        if self._mid_line:
            self._write("\n")

    def _notice(self, text: str) -> None:
        self._output_starts()
        self._end_line()
        self.err.write(self._dim(text, self.err) + "\n")
        self.err.flush()

    def _output_starts(self) -> None:
        # The spinner goes before anything else is written, so it never overwrites output.
        if self.spinner is not None:
            self.spinner.stop()

    def track(self, event: AgentEvent) -> None:
        """Keep the statistics of ``event``: run usage and time, and the context's size."""
        if event.type == "agent_start":
            self._started_at = time.monotonic()
            self.last = RunStats()
        elif event.type == "message_end":
            message = event.message
            if isinstance(message, AssistantMessage) and message.stop_reason not in (
                "error",
                "aborted",
            ):
                self.context = context_tokens(message)
        elif isinstance(event, AgentEndEvent):
            self.last = RunStats(event.usage.copy(), time.monotonic() - self._started_at)
            self.total.merge(self.last)

    def __call__(self, event: AgentEvent) -> None:
        self.track(event)
        if event.type == "message_update":
            sub = event.assistant_message_event
            if sub.type == "text_delta":
                self._output_starts()
                if self._in_thinking:
                    self.out.write(RESET + "\n")
                    self._in_thinking = False
                self._write(sub.delta)
            elif sub.type == "thinking_delta" and self.color:
                self._output_starts()
                if not self._in_thinking:
                    self.out.write(DIM)
                    self._in_thinking = True
                self._write(sub.delta)
        elif event.type in ("agent_start", "turn_start"):
            if self.spinner is not None:
                self.spinner.start()
        elif event.type == "message_end":
            message = event.message
            if isinstance(message, AssistantMessage):
                self._end_line()
                if message.stop_reason == "length":
                    self._notice("[stopped: max tokens]")
        elif event.type == "tool_execution_start":
            args = json.dumps(event.args, ensure_ascii=False)
            self._notice(f"→ {event.tool_name}({one_line(args, _TOOL_PREVIEW)})")
        elif event.type == "tool_execution_end":
            result = event.result
            text = "".join(b.text for b in result.content if isinstance(b, TextContent))
            mark = "✗" if event.is_error else "←"
            self._notice(f"{mark} {one_line(text, _TOOL_PREVIEW) or '(no output)'}")
        elif isinstance(event, FallbackEvent):
            self._notice(describe_fallback(event))
        elif isinstance(event, AgentEndEvent):
            self._output_starts()
            self._end_line()
