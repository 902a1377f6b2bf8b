"""The interactive session: a prompt_toolkit prompt that stays open while the agent works.

The prompt and the agent share one event loop. Output is printed above the prompt (the
answer's finished Markdown blocks, tool calls, notices); what is still changing (the block
being streamed, a running ``bash``, the spinner) is drawn live between the output and the
prompt, and a status line (model, context, tokens, cost) sits below it. So typing is never
mixed into the output.

Enter sends; Alt+Enter (and Shift+Enter where the terminal reports it) inserts a newline; a
paste is one message, indentation and all. A message typed while a run is going is queued as
steering (delivered after the current tool calls), ``/follow text`` as a follow-up (delivered
when the agent would stop). ``@path`` attaches a file (:mod:`tau.cli.attach`); Tab completes
commands, their arguments and ``@`` paths. Ctrl-C aborts the run (or clears the line); a second
Ctrl-C in a row exits, as do Ctrl-D and ``/exit``. ``/follow``, ``/help`` and ``/exit`` are
handled here; every other slash command comes from :mod:`tau.cli.commands` (the session's:
``/new``, ``/session``, ``/model``, ``/compact``…). A resumed session starts by saying what was
loaded and showing the last exchange. History is kept in ``$TAU_HOME/history``.

Without a capable terminal (``TERM=dumb``, or stdout not a terminal) the prompt is a plain one
and the output is plain text, as in a pipe.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import re
import shutil
import signal
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TextIO

from prompt_toolkit import PromptSession
from prompt_toolkit.application import run_in_terminal
from prompt_toolkit.formatted_text import ANSI, FormattedText
from prompt_toolkit.history import FileHistory
from prompt_toolkit.input.ansi_escape_sequences import ANSI_SEQUENCES
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.keys import Keys
from prompt_toolkit.output import create_output
from prompt_toolkit.patch_stdout import patch_stdout
from prompt_toolkit.styles import Style
from rich.text import Text

from tau.agent import PendingCall
from tau.ai import Model
from tau.cli.app import App, Settings
from tau.cli.app_events import AppEvent, describe_app_event
from tau.cli.attach import AttachmentError, Prompt, build_prompt
from tau.cli.commands import CommandContext, run_command
from tau.cli.completion import TauCompleter
from tau.cli.config import tau_home
from tau.cli.display import TerminalRenderer, collapse, console_for
from tau.cli.extensions.ui import TerminalUI, bind_shortcuts
from tau.cli.input_text import clean_text, unread_files
from tau.cli.paused_run import asks
from tau.cli.pi_habits import bang, cycle_model
from tau.cli.registry import SLASH_COMMANDS, Arg, Command, Registry, UnknownCommandError
from tau.cli.render import Renderer, RunStats, is_fancy_terminal
from tau.cli.session_tree import draw as _declare_tree_commands  # noqa: F401  (/tree, /fork…)

PROMPT = "> "
BUSY_PROMPT = "… "
"""Shown while a run is going: Enter then queues steering."""
HELP = """\
Enter sends; Alt+Enter (or Shift+Enter) starts a new line; @FILE attaches a file; Tab completes.
While the agent works, Enter queues a steering message. Ctrl-C aborts a run, twice in a row exits."""
LocalHandler = Callable[["CommandContext", str], Awaitable[None]]
ECHO_HEAD = 10
ECHO_TAIL = 5
"""A long message is echoed as its first and last lines (it is sent whole)."""
HISTORY_ENTRIES = 1000
"""The history file is cut back to this many entries when it passes ``HISTORY_BYTES``."""
HISTORY_BYTES = 1024 * 1024
_LEADING_BLANK_LINES = re.compile(r"\A(?:[ \t]*\n)+")

# Shift+Enter, as terminals that tell it apart report it (kitty's and xterm's
# modifyOtherKeys forms), is Alt+Enter: a newline.
for _sequence in ("\x1b[13;2u", "\x1b[27;2;13~"):
    ANSI_SEQUENCES[_sequence] = (Keys.Escape, Keys.ControlM)


class _History(FileHistory):
    """The prompt history in a file; a file that cannot be read or written loses only history."""

    def __init__(self, path: Path) -> None:
        super().__init__(str(path))
        self.path = path
        with contextlib.suppress(OSError):
            if path.stat().st_size > HISTORY_BYTES:
                self._trim()

    def _trim(self) -> None:
        kept = list(super().load_history_strings())[:HISTORY_ENTRIES]
        self.path.unlink()
        for entry in reversed(kept):
            super().store_string(entry)

    def load_history_strings(self) -> Any:
        """The stored entries, newest first (none if the file cannot be read)."""
        try:
            return list(super().load_history_strings())
        except (OSError, UnicodeDecodeError):
            return []

    def store_string(self, string: str) -> None:
        """Append ``string`` to the file (silently not, if it cannot be written)."""
        with contextlib.suppress(OSError):
            self.path.parent.mkdir(parents=True, exist_ok=True)
            super().store_string(string)


class PromptSurface:
    """Output above a running prompt_toolkit prompt (see :class:`tau.cli.display.Surface`).

    Text waits in a queue and is written, in order, while the prompt is erased for a moment
    (``run_in_terminal``); until then the live region still shows it, so nothing flickers.
    """

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.session: PromptSession[str] | None = None
        self._pending: list[str] = []

    def size(self) -> tuple[int, int]:
        """The terminal's columns and rows."""
        size = shutil.get_terminal_size()
        return size.columns, size.lines

    def print(self, text: str) -> None:
        """Write ``text`` above the prompt, after what is already queued (at once when no
        prompt is shown: the prompt must come after it, even on a terminal that cannot erase)."""
        self._pending.append(text)
        if self.session is None or not self.session.app.is_running:
            self._flush()
        elif len(self._pending) == 1:
            run_in_terminal(self._flush)

    def pending(self) -> str:
        """What is queued and not written yet."""
        return "".join(self._pending)

    def _flush(self) -> None:
        text = "".join(self._pending)
        self._pending.clear()
        with contextlib.suppress(OSError, ValueError):
            self.stream.write(text)
            self.stream.flush()

    def changed(self) -> None:
        """Redraw the prompt (and the live region in it) soon."""
        if self.session is not None:
            self.session.app.invalidate()


class Repl:
    """The state of one interactive session."""

    def __init__(self, settings: Settings, *, fancy: bool, first: str | None = None) -> None:
        self.fancy = fancy
        self.first = first
        self.out = sys.stdout
        self.surface = PromptSurface(self.out)
        self.app = App(settings, self._confirm, on_event=self._on_app_event)
        self.renderer: Renderer
        if fancy:
            self.display: TerminalRenderer | None = TerminalRenderer(
                console_for(self.out), self.surface, self._model
            )
            self.renderer = self.display
        else:
            self.display = None
            self.renderer = Renderer()
        self.app.agent.subscribe(self.renderer)
        self._session_shown = self.app.session
        self._refresh_context()
        if self.app.session is not None:
            # The status line counts the whole session's tokens and cost, resumed ones too.
            self.renderer.total.usage += self.app.session.usage
        self.context = CommandContext(self.app, self.renderer, self.say, self._send_typed)
        self.local_commands = self._local_commands()
        # A template named like a command of this session's own is left out (and reported).
        self.app.custom.reserve(self.local_commands.names())
        self.extension_ui = TerminalUI(self._notice, self._ask, self.surface.changed)
        self.run: asyncio.Task[None] | None = None
        self.question: asyncio.Future[Any] | None = None
        self.question_text = ""
        self.question_hint = "[y/N]"
        self.question_parse: Callable[[str], Any] = _yes
        self.interrupts = 0
        self.exiting = False
        self.draft = ""
        self._wake = asyncio.Event()  # a run ended or asks a question (see _wait_for_the_run)
        self.session: PromptSession[str] = PromptSession(
            history=_History(tau_home() / "history"),
            completer=TauCompleter(
                settings.workspace,
                lambda: self.context,
                (SLASH_COMMANDS, self.local_commands, self.app.custom.commands),
            ),
            complete_while_typing=True,
            key_bindings=self._bindings(),
            multiline=True,
            prompt_continuation=lambda width, line, wrapped: " " * min(width, 2),
            bottom_toolbar=self._toolbar if fancy else None,
            erase_when_done=fancy,
            reserve_space_for_menu=6,
            style=Style.from_dict({"bottom-toolbar": "noreverse fg:ansibrightblack"}),
            include_default_pygments_style=False,
            # Piped stdout carries the answers only: the prompt goes to the terminal (stderr).
            output=None if sys.stdout.isatty() else create_output(always_prefer_tty=True),
        )
        self.surface.session = self.session

    def _model(self) -> Model:
        """The model the next turn uses."""
        return self.app.agent.state.model or self.app.settings.model

    @property
    def busy(self) -> bool:
        """Whether a run is in progress."""
        return self.run is not None and not self.run.done()

    def _refresh_context(self) -> None:
        """Measure the context for the status line (after a resume, ``/new``, a compaction or
        another model; otherwise each answer reports it)."""
        self.renderer.context = self.app.context_tokens()

    # ----------------------------------------------------------------------- output

    def say(self, text: str) -> None:
        """A line (or lines) of text above the prompt."""
        if self.display is not None:
            self.display.notice(text, "")
        else:
            self.surface.print(text + "\n")

    def _on_app_event(self, event: AppEvent) -> None:
        self._notice(describe_app_event(event))
        if event.type == "auto_compaction_end":
            self._refresh_context()

    def _notice(self, text: str) -> None:
        if self.display is not None:
            self.display.notice(text)
        else:
            sys.stderr.write(text + "\n")
            sys.stderr.flush()

    def _echo(self, text: str, prefix: str) -> None:
        """The user's message, kept in the scrollback (the prompt erases itself)."""
        if self.display is None:
            return
        lines, hidden = collapse(text, ECHO_HEAD, ECHO_TAIL)
        if hidden:
            lines.insert(ECHO_HEAD, f"… {hidden} more lines")
        shown = Text(prefix + "\n".join(lines), style="bold")
        self.surface.print("\n" + self.display.render(shown))

    def _message(self) -> Any:
        prompt = (
            f"{self.question_text} {self.question_hint} "
            if self.question
            else (BUSY_PROMPT if self.busy else PROMPT)
        )
        if self.display is None:
            return prompt
        pending = self.surface.pending()
        live = self.display.live()
        above = (pending + live).split("\n")
        lines = above[-max(2, self.surface.size()[1] // 2) :]
        return ANSI("\n".join(lines) + prompt)

    def _toolbar(self) -> Any:
        status = self.display.status() if self.display else ""
        extras = self.extension_ui.status()
        return FormattedText([("", f"{status} · {extras}" if extras else status)])

    # ----------------------------------------------------------------------- agent side

    async def _confirm(self, call: PendingCall | None, question: str) -> bool:
        """A yes/no question (the approver's, about ``call``), answered at the prompt."""
        return bool(await self._ask(question, "[y/N]", _yes))

    async def _ask(self, question: str, hint: str, parse: Callable[[str], Any]) -> Any:
        """Ask at the prompt: the line typed next, through ``parse``, is the answer (Ctrl-C
        answers False)."""
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.question, self.question_text = future, question
        self.question_hint, self.question_parse = hint, parse
        self._wake.set()
        self.surface.changed()
        try:
            return await future
        finally:
            self.question, self.question_text = None, ""
            self.surface.changed()

    async def _run(self, prompt: Prompt | None) -> None:
        """A prompt's run; None: the session's paused run, asked about again and resumed."""
        try:
            result = await (
                self.app.run(prompt) if prompt is not None else self.app.resume_paused()
            )
            if result is not None and result.stop_reason in ("error", "aborted"):
                self._notice(f"[{result.stop_reason}: {result.error}]")
        finally:
            self._wake.set()
            self.surface.changed()

    async def _wait_for_the_run(self) -> None:
        """Without a terminal to draw on, output cannot go above the prompt: the prompt comes
        back when the run ends (or asks a question); Ctrl-C still aborts it meanwhile."""
        while self.busy and self.question is None and not self.exiting:
            self._wake.clear()
            await self._wake.wait()

    async def _animate(self) -> None:
        # The spinner turns only while something waits; redraws are cheap otherwise (cached).
        while True:
            await asyncio.sleep(0.1)
            if self.display is not None and self.display.animating:
                self.surface.changed()

    # ----------------------------------------------------------------------- input side

    def _bindings(self) -> KeyBindings:
        bindings = KeyBindings()

        @bindings.add("enter")
        @bindings.add("c-j")
        def _submit(event: KeyPressEvent) -> None:
            event.current_buffer.validate_and_handle()

        @bindings.add("escape", "enter")
        def _newline(event: KeyPressEvent) -> None:
            event.current_buffer.insert_text("\n")

        @bindings.add("c-p")
        def _cycle(event: KeyPressEvent) -> None:
            self._notice(cycle_model(self.app))
            self._refresh_context()

        @bindings.add("c-c")
        def _interrupt(event: KeyPressEvent) -> None:
            buffer = event.current_buffer
            if buffer.text and not self.busy and self.question is None:
                buffer.reset()
                return
            if self._interrupt():
                event.app.exit(exception=EOFError())

        bind_shortcuts(bindings, self.app.custom)
        return bindings

    def _interrupt(self) -> bool:
        """Handle Ctrl-C; True means exit."""
        self.interrupts += 1
        if self.interrupts > 1:
            return True
        if self.question is not None and not self.question.done():
            self.question.set_result(False)
        if self.busy or self.app.compacting:
            # The notice goes out before the abort starts: the run's "[aborted: …]" line must
            # not come first.
            self._notice("[aborting — Ctrl-C again to exit]")
            queued = self.app.abort("Interrupted")
            if queued:
                self._to_editor(queued.texts())
        else:
            self._notice("[Ctrl-C again to exit, or /exit]")
        return False

    def _to_editor(self, texts: list[str]) -> None:
        """Put messages an abort took off the queues back in the editor (as pi does): the user
        sends them again, edits or clears them; they never go out with the next prompt."""
        restored = "\n".join(texts)
        if self.session.app.is_running:
            buffer = self.session.default_buffer
            text = f"{restored}\n{buffer.text}" if buffer.text else restored
            buffer.text = text
            buffer.cursor_position = len(text)
        else:
            self.draft = f"{restored}\n{self.draft}" if self.draft else restored
        count = len(texts)
        self._notice(f"[{count} queued message{'s' if count > 1 else ''} back in the editor]")

    def _on_sigint(self) -> None:
        # Ctrl-C while the prompt is not reading keys (between two prompts, during a command).
        if self._interrupt():
            self.exiting = True
            self._wake.set()
            if self.session.app.is_running:
                self.session.app.exit(exception=EOFError())

    async def _submit(self, line: str) -> bool:
        """Act on one message; True means exit."""
        # Bytes that are not UTF-8 arrive as lone surrogates: U+FFFD, as everywhere in tau.
        line = clean_text(line, "the message")
        text = line.strip()
        if self.question is not None:
            self.surface.print(f"{self.question_text} {self.question_hint} {text}\n")
            if not self.question.done():
                self.question.set_result(self.question_parse(text))
            return False
        if not text:
            return False
        if text.startswith("!"):  # !command: the output for the model; !!command: only shown
            await bang(self.app, text, self.say)
            return False
        if text.startswith("/"):
            name = text[1:].partition(" ")[0]
            local = self.local_commands.get(name)
            if local is None:
                await self._command(text)
            elif local.handler is not None:
                # The text after the name as typed: a follow-up keeps its lines.
                await local.handler(self.context, line.lstrip()[len(name) + 1 :])
            return self.exiting
        await self._send(line, follow=False)
        return False

    def _local_commands(self) -> Registry[LocalHandler]:
        """The commands only this session has, declared like the shared ones."""
        local: Registry[LocalHandler] = Registry("slash", "/")
        local.add(
            Command(
                "follow",
                "queue TEXT as a follow-up (sent when the agent would stop)",
                self._follow,
                args=(Arg("text", metavar="TEXT", required=True),),
            )
        )
        local.add(Command("help", "this help", self._help))
        local.add(Command("exit", "leave (or Ctrl-D)", self._exit, aliases=("quit",)))
        return local

    async def _follow(self, ctx: CommandContext, text: str) -> None:
        if not text.strip():
            self.say("usage: /follow TEXT")
            return
        await self._send(text, follow=True)

    async def _help(self, ctx: CommandContext, argument: str) -> None:
        lines = SLASH_COMMANDS.help_lines([*self.local_commands, *self.app.custom.commands])
        self.say(HELP + "\n" + "\n".join(lines))

    async def _exit(self, ctx: CommandContext, argument: str) -> None:
        self.exiting = True

    async def _send_typed(self, text: str) -> None:
        await self._send(text, follow=False)

    async def _send(self, line: str, *, follow: bool) -> None:
        """Send a message: a new run, or steering/a follow-up queued for the one going on."""
        message = _LEADING_BLANK_LINES.sub("", line.rstrip())
        if follow:
            message = message.lstrip(" ")
        try:
            prompt, notes = build_prompt(message, self.app.settings.workspace, self._model())
        except AttachmentError as exc:
            self._notice(f"tau: {exc}")
            self.draft = line  # back in the prompt, to be fixed
            return
        if self.busy:
            self._echo(message, "+ " if follow else "» ")
            agent = self.app.agent
            (agent.follow_up if follow else agent.steer)(prompt)
            self._notice(f"[{'follow-up' if follow else 'steering'} queued]")
        else:
            self._echo(message, PROMPT)
            self.run = asyncio.create_task(self._run(prompt))
        settings = self.app.settings
        for note in [*notes, *unread_files(message, settings.workspace.cwd, settings.tool_names)]:
            self._notice(f"tau: note: {note}")

    async def _command(self, line: str) -> None:
        try:
            await run_command(self.context, line)
        except UnknownCommandError as exc:
            self.say(str(exc))
        if self.app.session is not self._session_shown:  # /new: the status line starts over
            self._session_shown = self.app.session
            self.renderer.total = RunStats()
        self._refresh_context()

    async def main(self) -> int:
        """Read and dispatch messages until exit; returns the exit status."""
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGINT, self._on_sigint)
        animation = loop.create_task(self._animate())
        try:
            with patch_stdout(raw=True) if self.fancy else contextlib.nullcontext():
                self._welcome()
                session = self.app.session.path if self.app.session else None
                await self.app.custom.start(self.extension_ui, "interactive", session)
                if self.first:  # -i "first message"
                    await self._send(self.first, follow=False)
                while not self.exiting:
                    if not self.fancy:
                        await self._wait_for_the_run()
                        if self.exiting:
                            break
                    draft, self.draft = self.draft, ""
                    try:
                        line = await self.session.prompt_async(
                            self._message, default=draft, handle_sigint=False
                        )
                    except EOFError:
                        break
                    self.interrupts = 0
                    if await self._submit(line):
                        break
                await self._shutdown()
        finally:
            animation.cancel()
            loop.remove_signal_handler(signal.SIGINT)
        return 0

    def _welcome(self) -> None:
        model = self._model()
        self.say(f"tau · {model.provider}/{model.id} · /help for commands")
        notice = self.app.resume_notice()
        if notice is not None:
            # What was resumed, and where the conversation was left.
            self._notice(notice)
            exchange = self.app.last_exchange()
            if exchange:
                self._notice(exchange)
        paused = self.app.paused
        if paused is not None:
            # The run stopped at calls nobody decided (killed at the question): ask again.
            count = len(paused.pending)
            lines = [f"the last run stopped at {count} undecided tool call{'s' * (count > 1)}:"]
            asking = False
            for call in paused.pending:
                asked = asks(call, self.app.agent.state.tools, yes=self.app.settings.yes)
                asking = asking or asked
                subject = self.app.approvals.describe(call.tool_name, call.arguments)
                lines.append(f"  {subject}{'' if asked else ' (runs again without asking)'}")
            self._notice("\n".join(lines))
            self.run = asyncio.create_task(self._resume(confirm=not asking))

    async def _resume(self, *, confirm: bool) -> None:
        """Resume the paused run; with no call to ask about, only once the user says so (it
        calls the model: a message typed instead closes the calls unrun)."""
        if not confirm or await self._confirm(None, "Resume the run?"):
            await self._run(None)
        else:
            self._wake.set()

    async def _shutdown(self) -> None:
        if self.question is not None and not self.question.done():
            self.question.set_result(False)
        if self.run is not None and self.busy:
            self.app.abort("Exiting")
            with contextlib.suppress(Exception):
                await asyncio.wait_for(asyncio.shield(self.run), 3)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.app.aclose(), 15)  # MCP servers
        await asyncio.sleep(0)  # let queued output reach the terminal
        with contextlib.suppress(OSError, ValueError):
            self.out.write("\n")
            self.out.flush()


def _yes(text: str) -> bool:
    return text.strip().lower() in ("y", "yes")


def run_interactive(settings: Settings, first: str | None = None) -> int:
    """Run the interactive session until the user leaves (``first``: its first message)."""
    # A byte that is not UTF-8 becomes U+FFFD as it is read, not a failure later.
    stdin = sys.stdin
    if isinstance(stdin, io.TextIOWrapper):
        with contextlib.suppress(ValueError):
            stdin.reconfigure(errors="replace")

    async def session() -> int:
        return await Repl(settings, fancy=is_fancy_terminal(sys.stdout), first=first).main()

    return asyncio.run(session())
