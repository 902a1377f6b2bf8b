"""Sessions on the command line: which one a run uses (``-c``, ``-r``, ``--session``,
``--no-session``, declared in :mod:`tau.cli.flags`) and ``tau sessions [list|show|export|rm]``.

Only ``argparse`` and ``sys`` are imported at module level (``tau --help`` stays fast); the
session store is imported when a session is looked for, and a file is loaded as messages only
to show or export it.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from tau.cli.errors import EXIT_OK, UsageError

if TYPE_CHECKING:
    from pathlib import Path

    from tau.agent import AgentMessage
    from tau.cli.session_store import SessionSummary

PICK_LIMIT = 20
"""How many sessions ``--resume`` offers."""


class PickCancelled(Exception):
    """The user picked no session at the ``--resume`` prompt."""


def _note(text: str) -> None:
    print(f"tau: note: {text}", file=sys.stderr)


def session_choice(args: argparse.Namespace, cwd: Path) -> tuple[Path | None, Path | None]:
    """``(file to open, folder of new sessions)`` for the flags in ``args``.

    Raises :class:`~tau.cli.errors.UsageError` for a session that cannot be found and
    :class:`PickCancelled` when the user picks none.
    """
    from pathlib import Path

    from tau.cli.session_store import StoreError, find, latest, looks_like_id, sessions_dir

    if args.no_session:
        return None, None
    folder = sessions_dir(cwd)
    if args.session is not None:
        path = Path(args.session).expanduser()
        if path.exists() or not looks_like_id(args.session):
            return path, folder
        try:
            return find(args.session, cwd), folder
        except StoreError as exc:
            _note(f"{exc}: starting a new session in the file {args.session}")
            return path, folder
    if args.continue_session:
        last = latest(cwd)
        if last is None:
            _note("no earlier session in this directory: starting a new one")
        return last, folder
    if args.resume:
        return pick(cwd), folder
    return None, folder


# --------------------------------------------------------------------------- listing


def age(seconds_ago: float) -> str:
    """``just now``, ``5m ago``, ``3h ago``, ``2d ago``."""
    if seconds_ago < 60:
        return "just now"
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds_ago >= size:
            return f"{int(seconds_ago // size)}{unit} ago"
    return "just now"


def _width(stream: object) -> int | None:
    """The terminal's width, or None (no cutting) when ``stream`` is not a terminal."""
    import shutil

    isatty = getattr(stream, "isatty", None)
    return shutil.get_terminal_size().columns if isatty is not None and isatty() else None


def _rows(
    summaries: list[SessionSummary], numbered: bool, show_dir: bool, width: int | None
) -> list[str]:
    import time

    now = time.time()
    lines = []
    for number, s in enumerate(summaries, 1):
        prefix = f"{number:>2}. " if numbered else ""
        if s.problem and not s.messages:
            text = f"({s.problem}) {s.path.name}"
        else:
            text = s.name or s.first_prompt or "(no prompt)"
            if s.problem:
                text = f"({s.problem}) {text}"
        if show_dir and s.cwd:
            text = f"{s.cwd}: {text}"
        head = f"{prefix}{s.short_id:<8}  {age(now - s.modified):>9}  {s.messages:>4} msgs  "
        head += f"{s.model or '-':<28}  "
        room = max(20, width - len(head)) if width else len(text)
        lines.append(head + (text if len(text) <= room else text[: room - 1] + "…"))
    return lines


def check_can_pick() -> None:
    """Refuse ``--resume`` at once when stdin is not a terminal (nobody could answer)."""
    if not (sys.stdin is not None and sys.stdin.isatty()):
        raise UsageError(
            "--resume picks from a list on a terminal; here, list the sessions with "
            "`tau sessions` and open one with `--session ID`"
        )


def pick(cwd: Path) -> Path:
    """The session the user picks from this directory's recent ones (needs a terminal)."""
    from tau.cli.session_store import recent

    check_can_pick()
    summaries = [s for s in recent(cwd, PICK_LIMIT) if s.usable]
    if not summaries:
        raise UsageError("no saved session in this directory (`tau sessions list --all`)")
    err = sys.stderr
    err.write("recent sessions of this directory:\n")
    err.write("\n".join(_rows(summaries, True, False, _width(err))) + "\n")
    while True:
        err.write(f"resume which? [1-{len(summaries)}, Enter to cancel] ")
        err.flush()
        try:
            answer = sys.stdin.readline()
        except KeyboardInterrupt:
            err.write("\n")
            raise PickCancelled from None
        if not answer:  # end of input: nobody is there to answer again
            raise PickCancelled
        answer = answer.strip()
        if not answer:
            raise PickCancelled
        if answer.isdigit() and 1 <= int(answer) <= len(summaries):
            break
        # A typo asks again: the list is still on the screen.
        err.write(f"no session number {answer!r} (1 to {len(summaries)})\n")
    return summaries[int(answer) - 1].path


# --------------------------------------------------------------------------- tau sessions


def _load(reference: str, cwd: Path) -> tuple[Path, list[AgentMessage], str]:
    from tau.cli.session import Session, SessionError
    from tau.cli.session_store import StoreError, find

    try:
        path = find(reference, cwd)
        session = Session.open(path)
    except (StoreError, SessionError) as exc:
        raise UsageError(str(exc)) from None
    return path, list(session.history), f"tau session {session.id[:8]} · {session.model or '-'}"


def sessions_command(args: argparse.Namespace, cwd: Path) -> int:
    """``tau sessions ...`` with its parsed arguments (declared in :mod:`tau.cli.subcommands`);
    returns the exit status."""
    from pathlib import Path

    from tau.cli.session_store import StoreError, find, latest, recent, removable, search

    command = args.command
    if command == "list":
        everywhere = bool(getattr(args, "all", False))
        where, limit = None if everywhere else cwd, max(1, getattr(args, "n", 30))
        text = getattr(args, "search", None)
        summaries = recent(where, limit) if text is None else search(where, text, limit)
        if not summaries:
            what = "no saved sessions" if text is None else f"no saved session mentions {text!r}"
            place = "" if everywhere else " in this directory (--all: every directory)"
            print(f"{what}{place}", file=sys.stderr)
            return EXIT_OK
        print("\n".join(_rows(summaries, False, everywhere, _width(sys.stdout))))
        return EXIT_OK
    if command == "rm":
        try:
            path = removable(find(args.id, cwd))
            path.unlink()
        except StoreError as exc:
            raise UsageError(str(exc)) from None
        except OSError as exc:
            raise UsageError(f"cannot remove {args.id}: {exc.strerror}") from None
        print(f"removed {path}")
        return EXIT_OK
    from tau.cli.transcript import ExportError, to_html, to_markdown, write_export

    reference = args.id
    if reference is None:  # `tau sessions show`: this directory's latest session
        last = latest(cwd)
        if last is None:
            raise UsageError("no saved session in this directory (`tau sessions list --all`)")
        reference = str(last)
    path, messages, title = _load(reference, cwd)
    if command == "show" and getattr(args, "tree", False):
        from tau.cli.session import Session
        from tau.cli.session_tree import draw

        session = Session.open(path)
        print("\n".join(draw(session.entries(), session.leaf)))
        return EXIT_OK
    if command == "show":
        sys.stdout.write(to_markdown(messages, title))
        return EXIT_OK
    markdown = args.md or (not args.html and bool(args.output) and args.output.endswith(".md"))
    text = (to_markdown if markdown else to_html)(messages, title)
    if args.output is None:
        sys.stdout.write(text)
        return EXIT_OK
    try:
        write_export(Path(args.output).expanduser(), text)
    except ExportError as exc:
        raise RuntimeError(str(exc)) from None
    print(f"exported {path.name} to {args.output}", file=sys.stderr)
    return EXIT_OK
