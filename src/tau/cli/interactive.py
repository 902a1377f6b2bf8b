"""The interactive session: a prompt with line editing and history, steering while the agent works.

The main thread reads lines (``input()`` with readline, so Ctrl-C arrives there as
``KeyboardInterrupt``); the agent runs on an event loop in a second thread. A line typed while a
run is going is queued as steering (delivered after the current tool calls), ``/follow text``
as a follow-up (delivered when the agent would stop). Ctrl-C aborts the run; a second Ctrl-C in
a row exits. ``/follow``, ``/help`` and ``/exit`` are handled here; every other slash command
comes from :mod:`tau.cli.commands`.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import io
import sys
import threading
import time
from typing import Any

from tau.cli.app import App, Settings
from tau.cli.commands import CommandContext, UnknownCommandError, help_lines, run_command
from tau.cli.config import tau_home
from tau.cli.render import Renderer, Spinner

PROMPT = "> "
HELP = """\
Type a message and press Enter. While the agent works, Enter queues a steering message.
  /follow TEXT   queue TEXT as a follow-up (sent when the agent would stop)
  /exit          leave (or Ctrl-D); Ctrl-C aborts a run, twice in a row exits"""


def _setup_readline() -> Any:
    try:
        import readline
    except ImportError:  # no readline on this platform: plain input() still works
        return None
    history = tau_home() / "history"
    with contextlib.suppress(OSError):  # no history yet
        readline.read_history_file(history)
    readline.set_history_length(1000)
    return readline


def _save_history(readline: Any) -> None:
    if readline is None:
        return
    path = tau_home() / "history"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        readline.write_history_file(path)
    except OSError:
        pass


class Repl:
    """The state of one interactive session."""

    def __init__(self, settings: Settings) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="tau-agent", daemon=True)
        self.renderer = Renderer(spinner=Spinner(sys.stderr))
        self.app = App(settings, self._confirm)
        self.app.agent.subscribe(self.renderer)
        self.run: concurrent.futures.Future[Any] | None = None
        self.question: concurrent.futures.Future[bool] | None = None
        self.interrupts = 0

    @property
    def busy(self) -> bool:
        """Whether a run is in progress."""
        return self.run is not None and not self.run.done()

    # ----------------------------------------------------------------------- agent side

    async def _confirm(self, question: str) -> bool:
        future: concurrent.futures.Future[bool] = concurrent.futures.Future()
        self.question = future
        sys.stdout.write(f"\n{question} [y/N] ")
        sys.stdout.flush()
        try:
            return await asyncio.wrap_future(future)
        finally:
            self.question = None

    async def _run(self, text: str) -> None:
        result = await self.app.run(text)
        if result.stop_reason in ("error", "aborted"):
            sys.stderr.write(f"[{result.stop_reason}: {result.error}]\n")
        sys.stdout.write(PROMPT)
        sys.stdout.flush()

    # ----------------------------------------------------------------------- input side

    def _submit(self, line: str) -> bool:
        """Act on one line; True when it started a run (which writes the next prompt)."""
        text = line.strip()
        if self.question is not None:
            self.question.set_result(text.lower() in ("y", "yes"))
            return True
        if not text:
            return False
        if text in ("/exit", "/quit"):
            raise EOFError
        if text == "/help":
            print(HELP)
            print("\n".join(help_lines()))
            return False
        follow = text.startswith("/follow ")
        if follow:
            text = text.removeprefix("/follow ").strip()
        elif text.startswith("/"):
            return self._command(text)
        agent = self.app.agent
        if self.busy:
            queue = agent.follow_up if follow else agent.steer
            self.loop.call_soon_threadsafe(queue, text)
            kind = "follow-up" if follow else "steering"
            sys.stderr.write(f"[{kind} queued]\n")
            return True
        self.run = asyncio.run_coroutine_threadsafe(self._run(text), self.loop)
        return True

    def _command(self, line: str) -> bool:
        """Run a registry command on the agent's loop; True when it writes the next prompt."""
        ctx = CommandContext(self.app, self.renderer, print)
        try:
            asyncio.run_coroutine_threadsafe(run_command(ctx, line), self.loop).result()
        except UnknownCommandError as exc:
            print(exc)
        return False

    def _interrupt(self) -> bool:
        """Handle Ctrl-C; True means exit."""
        self.interrupts += 1
        if self.interrupts > 1:
            return True
        if self.question is not None:
            self.question.set_result(False)
        if self.busy:
            # The notice goes out before the abort starts: the run's "[aborted: …]" line,
            # written by the agent thread, must not come first.
            sys.stderr.write("\n[aborting — Ctrl-C again to exit]\n")
            sys.stderr.flush()
            self.loop.call_soon_threadsafe(self.app.agent.abort, "Interrupted")
        else:
            sys.stderr.write("\n[Ctrl-C again to exit, or /exit]\n")
            sys.stdout.write(PROMPT)
        sys.stderr.flush()
        sys.stdout.flush()
        return False

    def main(self) -> int:
        """Read and dispatch lines until exit; returns the exit status."""
        # A byte that is not UTF-8 becomes U+FFFD as it is read, instead of failing input() or
        # (as a lone surrogate) the request and the session file later.
        stdin = sys.stdin
        if isinstance(stdin, io.TextIOWrapper):
            with contextlib.suppress(ValueError):
                stdin.reconfigure(errors="replace")
        readline = _setup_readline()
        self.thread.start()
        model = self.app.settings.model
        print(f"tau · {model.provider}/{model.id} · /help for commands")
        sys.stdout.write(PROMPT)
        sys.stdout.flush()
        try:
            while True:
                try:
                    # The prompt is written by whoever finishes last (a run ends, a command
                    # runs), so input() shows none and a run's output never lands after it.
                    line = input()
                except KeyboardInterrupt:
                    if self._interrupt():
                        break
                    continue
                except EOFError:
                    break
                self.interrupts = 0
                try:
                    started = self._submit(line)
                except EOFError:
                    break
                if not started and not self.busy:
                    sys.stdout.write(PROMPT)
                    sys.stdout.flush()
        finally:
            self._shutdown()
            _save_history(readline)
        return 0

    def _shutdown(self) -> None:
        if self.busy:
            self.loop.call_soon_threadsafe(self.app.agent.abort, "Exiting")
            deadline = time.monotonic() + 3
            while self.busy and time.monotonic() < deadline:
                time.sleep(0.02)
        closing = asyncio.run_coroutine_threadsafe(self.app.aclose(), self.loop)  # MCP servers
        with contextlib.suppress(Exception):
            closing.result(timeout=15)
        self.loop.call_soon_threadsafe(self.loop.stop)
        sys.stdout.write("\n")
        sys.stdout.flush()


def run_interactive(settings: Settings) -> int:
    """Run the interactive session until the user leaves."""
    return Repl(settings).main()
