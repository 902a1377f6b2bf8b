"""``tau`` under a pseudo-terminal, read the way a person sees it.

pexpect runs the command; its output feeds a pyte screen (a VT100 emulator with scrollback),
which answers cursor-position requests as a real terminal does, so prompt_toolkit draws its
full interface (status line included). Tests wait for what the *screen* shows, not for bytes:
a redraw writes the same text many times, and only the screen says whether it is garbled.
"""

from __future__ import annotations

import json
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pexpect
import pyte

from tests.cli.conftest import clean_env

WAIT = 20.0


class _Screen(pyte.HistoryScreen):  # type: ignore[misc]
    """A screen that answers the terminal's reports (cursor position) to the program."""

    def __init__(self, columns: int, rows: int, reply: Callable[[str], Any]) -> None:
        super().__init__(columns, rows, history=5000)
        self._reply = reply

    def write_process_input(self, data: str) -> None:
        self._reply(data)


class Terminal:
    """``python -m tau.cli ARGS`` in ``tmp_path/work`` on a ``rows`` × ``columns`` terminal."""

    def __init__(
        self,
        tmp_path: Path,
        args: list[str],
        *,
        rows: int = 30,
        columns: int = 160,
        env: dict[str, str] | None = None,
    ) -> None:
        work = tmp_path / "work"
        work.mkdir(exist_ok=True)
        self.child = pexpect.spawn(
            sys.executable,
            ["-m", "tau.cli", *args],
            cwd=str(work),
            env=clean_env(tmp_path, TERM="xterm-256color", **(env or {})),
            encoding="utf-8",
            codec_errors="replace",
            timeout=WAIT,
            dimensions=(rows, columns),
        )
        self.screen = _Screen(columns, rows, self.child.send)
        self.stream = pyte.Stream(self.screen)
        self.raw: list[str] = []

    @classmethod
    def scripted(
        cls, tmp_path: Path, responses: list[dict[str, Any]], *args: str, **options: Any
    ) -> Terminal:
        """``tau --model faux/<script> ARGS``, playing ``responses``."""
        script = tmp_path / "script.json"
        script.write_text(json.dumps(responses))
        return cls(tmp_path, ["--model", f"faux/{script}", *args], **options)

    # ------------------------------------------------------------------- reading

    def pump(self, seconds: float = 0.05) -> bool:
        """Feed what the program wrote within ``seconds``; False once it has exited."""
        try:
            data = self.child.read_nonblocking(65536, timeout=seconds)
        except pexpect.TIMEOUT:
            return True
        except pexpect.EOF:
            return False
        self.raw.append(data)
        self.stream.feed(data)
        return True

    def _row(self, line: Any) -> str:
        return "".join(line[x].data for x in range(self.screen.columns)).rstrip()

    def lines(self) -> list[str]:
        """Every line shown so far: the scrollback, then the screen."""
        history = [self._row(line) for line in self.screen.history.top]
        return [*history, *(line.rstrip() for line in self.screen.display)]

    def text(self) -> str:
        """:meth:`lines` as one string."""
        return "\n".join(self.lines())

    def cursor_line(self) -> str:
        """The line the cursor is on (where typing goes)."""
        return self.screen.display[self.screen.cursor.y].rstrip()

    def wait(self, condition: str | Callable[[], bool], timeout: float = WAIT) -> None:
        """Read until ``condition`` holds (a string: until the screen shows it)."""
        check = (lambda: condition in self.text()) if isinstance(condition, str) else condition
        deadline = time.monotonic() + timeout
        while not check():
            if time.monotonic() > deadline or not self.pump():
                if check():
                    return
                raise AssertionError(f"waited for {condition!r}; the screen:\n{self.text()}")

    def wait_count(self, text: str, count: int, timeout: float = WAIT) -> None:
        """Read until ``text`` is shown ``count`` times (or more)."""
        self.wait(lambda: self.text().count(text) >= count, timeout)

    def wait_match(self, pattern: str, timeout: float = WAIT) -> re.Match[str]:
        """Read until the screen matches the regular expression ``pattern``; returns the match."""
        self.wait(lambda: re.search(pattern, self.text()) is not None, timeout)
        found = re.search(pattern, self.text())
        assert found is not None
        return found

    def settle(self, quiet: float = 0.15, longest: float = 2.0) -> None:
        """Read until the program has written nothing for ``quiet`` seconds (a spinner never
        stops: at most ``longest`` seconds)."""
        deadline = time.monotonic() + longest
        while time.monotonic() < deadline:
            before = len(self.raw)
            if not self.pump(quiet) or len(self.raw) == before:
                return

    def wait_prompt(self, prompt: str = "> ", timeout: float = WAIT) -> None:
        """Read until the cursor's line starts with ``prompt`` (``"> "``: idle, ``"… "``: a run
        is going) and stays so once the screen is still (a redraw moves the cursor about)."""
        deadline = time.monotonic() + timeout
        while True:
            self.wait(lambda: self.cursor_line().startswith(prompt.rstrip()), timeout)
            self.settle()
            if self.cursor_line().startswith(prompt.rstrip()):
                return
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"waited for the prompt {prompt!r}; the screen:\n{self.text()}"
                )

    # ------------------------------------------------------------------- writing

    def send(self, text: str) -> None:
        """Type ``text`` (``\\r`` is Enter)."""
        self.child.send(text)

    def paste(self, text: str) -> None:
        """Paste ``text`` as a terminal does in bracketed-paste mode."""
        self.child.send(f"\x1b[200~{text}\x1b[201~")

    def exit(self) -> int:
        """``/exit``; returns the exit status."""
        self.send("/exit\r")
        return self.wait_exit()

    def wait_exit(self, timeout: float = WAIT) -> int:
        """Read until the program exits; returns its exit status."""
        deadline = time.monotonic() + timeout
        while self.pump(0.1):
            if time.monotonic() > deadline:
                raise AssertionError(f"still running; the screen:\n{self.text()}")
        self.child.close()
        return int(self.child.exitstatus if self.child.exitstatus is not None else -1)
