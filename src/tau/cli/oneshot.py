"""One-shot runs: ``tau "prompt"`` prints the answer (rendered on a terminal, plain in a pipe),
``--json`` every event as a JSON line, ``--output-schema`` only the validated output.

Ctrl-C aborts the run (a second one exits at once); a closed stdout aborts it too.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from tau.cli.errors import EXIT_FAILURE, EXIT_INTERRUPTED, EXIT_OK, error_line
from tau.cli.input_text import note

if TYPE_CHECKING:
    from tau.agent import RunResult
    from tau.cli.app import Settings
    from tau.cli.app_events import AppEvent
    from tau.cli.attach import Prompt
    from tau.cli.display import TerminalSurface

INTERRUPTED = "Interrupted"


def _dim(text: str) -> str:
    return f"\033[2m{text}\033[0m" if sys.stderr.isatty() else text


async def _ask_on_terminal(question: str) -> bool:
    """Ask on stderr and read the answer from the terminal without a thread, so that an abort
    (Ctrl-C) can cancel the question at once."""
    import asyncio

    sys.stderr.write(f"{question} [y/N] ")
    sys.stderr.flush()
    loop = asyncio.get_running_loop()
    answer: asyncio.Future[bytes] = loop.create_future()
    fd = sys.stdin.fileno()

    def readable() -> None:
        if not answer.done():
            answer.set_result(os.read(fd, 4096))

    loop.add_reader(fd, readable)
    try:
        line = await answer
    except BaseException:
        sys.stderr.write("\n")
        raise
    finally:
        loop.remove_reader(fd)
    return line.decode("utf-8", "replace").strip().lower() in ("y", "yes")


def _json_printer() -> Callable[[Any], None]:
    from tau.agent import event_to_json

    def print_json(event: Any) -> None:
        print(event_to_json(event), flush=True)

    return print_json


def _print_app_event_json(event: AppEvent) -> None:
    import json

    from tau.cli.app_events import dump_app_event

    print(json.dumps(dump_app_event(event)), flush=True)


class _Output:
    """The event sink of one-shot mode; a closed stdout aborts the run instead of failing it."""

    def __init__(self, show: Callable[[Any], None], abort: Callable[[str], object]) -> None:
        self.show = show
        self.abort = abort
        self.closed = False

    def __call__(self, event: Any) -> None:
        if self.closed:
            return
        try:
            self.show(event)
        except BrokenPipeError:
            self.closed = True
            self.abort("stdout was closed")


async def _append_async(sent: list[str], text: str) -> None:
    sent.append(text)


async def run_once(
    settings: Settings, prompt: Prompt, *, json_mode: bool, named_model: str | None = None
) -> int:
    """Print (or JSON) mode: one prompt, then exit.

    In print mode the answering model is named on stderr when the command line did not name
    it exactly (``named_model``), and a resumed session says what it loaded.
    """
    import asyncio
    import signal

    from tau.cli.app import App
    from tau.cli.models import model_spec
    from tau.cli.render import Renderer

    # Questions need a terminal to answer on; without one, mutating tools need --yes.
    terminal = sys.stdin is not None and sys.stdin.isatty() and not json_mode
    typed = settings.output_type is not None
    surface = None if json_mode or typed else _terminal_surface()
    ask = _ask_on_terminal if surface is None else surface.asking(_ask_on_terminal)
    app = App(
        settings,
        (lambda call, question: ask(question)) if terminal else None,
        on_event=_print_app_event_json if json_mode else None,
    )
    if isinstance(prompt, str):  # `tau "/review src"`: a prompt template or skill, expanded
        prompt = app.custom.resources.expand(prompt)
    session = app.session.path if app.session else None
    await app.custom.start(None, "json" if json_mode else "print", session)
    if isinstance(prompt, str) and app.custom.runs_command(prompt):
        # An extension's command: it runs; what it sends (if anything) is the run's prompt.
        sent: list[str] = []
        await app.custom.dispatch(prompt, lambda text: _append_async(sent, text))
        if not sent:
            await app.aclose()
            return EXIT_OK
        prompt = sent[0]
    notice = app.resume_notice()
    if notice is None and not json_mode and named_model != model_spec(app.model):
        notice = f"model: {model_spec(app.model)}"
    if notice is not None:
        print(_dim(notice), file=sys.stderr, flush=True)
    if json_mode:
        show: Callable[[Any], None] = _json_printer()
    elif typed:
        show = _activity_printer()
    elif surface is not None:
        from tau.cli.app_events import describe_app_event
        from tau.cli.display import TerminalRenderer, console_for

        renderer = TerminalRenderer(console_for(sys.stdout), surface, lambda: app.model)
        surface.renderer = renderer
        # A compaction notice goes above the live region, not through it on stderr.
        app.on_event = lambda event: renderer.notice(describe_app_event(event))
        show = renderer
    else:
        from tau.cli.render import Spinner

        show = Renderer(spinner=Spinner(sys.stderr))
    output = _Output(show, app.abort)
    app.agent.subscribe(output)
    loop = asyncio.get_running_loop()
    interrupted = 0

    def on_interrupt() -> None:
        nonlocal interrupted
        interrupted += 1
        if interrupted > 1:
            raise SystemExit(EXIT_INTERRUPTED)
        app.abort(INTERRUPTED)

    loop.add_signal_handler(signal.SIGINT, on_interrupt)
    try:
        result = await app.run(prompt)
    finally:
        loop.remove_signal_handler(signal.SIGINT)
        if surface is not None:
            surface.finish()
        await app.aclose()
    if output.closed:
        raise BrokenPipeError
    status = _report(result)
    if typed and not json_mode and status == EXIT_OK:
        from tau.cli.output_schema import dump_output

        print(dump_output(result.output), flush=True)
    return status


def _activity_printer() -> Callable[[Any], None]:
    """What a run with ``--output-schema`` shows: tool activity and notices on stderr, not the
    answer (stdout carries only the validated JSON, once the run is over)."""
    from tau.cli.render import Renderer, Spinner

    renderer = Renderer(out=sys.stderr, spinner=Spinner(sys.stderr))

    def show(event: Any) -> None:
        if event.type != "message_update":
            renderer(event)

    return show


def _terminal_surface() -> TerminalSurface | None:
    """Where a one-shot run is drawn when stdout is a terminal that can show more than text
    (None: plain text, as in a pipe)."""
    from tau.cli.render import is_fancy_terminal

    if not is_fancy_terminal(sys.stdout):
        return None
    try:
        from tau.cli.display import TerminalSurface
    except ImportError:
        note("rich is not installed: plain output (pip install 'tau[cli]' for rendered output)")
        return None
    return TerminalSurface(sys.stdout)


def _report(result: RunResult) -> int:
    if result.aborted:
        error_line(f"aborted: {result.error or INTERRUPTED}")
        return EXIT_INTERRUPTED
    if result.stop_reason == "error":
        error_line(f"error: {result.error or 'no answer'}")
        return EXIT_FAILURE
    return EXIT_OK
