"""Sessions as a tree (pi's JSONL v3: each entry names its ``parentId``): ``/tree`` to see it
and go back to any entry, ``/fork`` to copy a branch into a new session, ``/name``, ``/resume``
from inside a session, and the drawing ``tau sessions show --tree`` prints.

Going back never removes anything: the next message becomes a new child of the entry gone back
to, and the file keeps every branch. ``/tree ID summarize`` first has the model summarise the
branch being left (from where the two branches part), recorded as pi's ``branch_summary`` entry,
which the model then reads in the new branch's context.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tau.cli.commands import CommandContext, command
from tau.cli.registry import Arg

if TYPE_CHECKING:
    from tau.cli.session import Session

_LABEL_WIDTH = 70
SUMMARY_PROMPT = (
    "Summarise the conversation below, which the user is leaving to go back to an earlier "
    "point: what was tried, what was learned, what was decided, files read or changed. "
    "Be brief.\n\n{conversation}"
)


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [b.get("text", "") for b in content if isinstance(b, dict)]
        calls = [
            b.get("name", "?")
            for b in content
            if isinstance(b, dict) and b.get("type") == "toolCall"
        ]
        text = " ".join(p for p in parts if p)
        return text or (f"[calls {', '.join(calls)}]" if calls else "")
    return ""


def label(entry: dict[str, Any]) -> str:
    """One line saying what an entry is."""
    kind = entry.get("type")
    if kind == "message" and isinstance(entry.get("message"), dict):
        message = entry["message"]
        role = message.get("role", "?")
        if role == "toolResult":
            text = f"{message.get('toolName', 'tool')} result"
        else:
            text = f"{role}: {_text(message.get('content'))}"
    elif kind == "model_change":
        text = f"model: {entry.get('provider')}/{entry.get('modelId')}"
    elif kind == "thinking_level_change":
        text = f"thinking: {entry.get('thinkingLevel')}"
    elif kind == "compaction":
        text = "compaction"
    elif kind == "branch_summary":
        text = f"branch summary: {entry.get('summary', '')}"
    elif kind == "session_info":
        text = f"name: {entry.get('name')}"
    elif kind == "custom":
        text = f"custom: {entry.get('customType')}"
    else:
        text = str(kind)
    text = " ".join(text.split())
    return text if len(text) <= _LABEL_WIDTH else text[: _LABEL_WIDTH - 1] + "…"


def _tree(entries: list[dict[str, Any]]) -> tuple[list[str], dict[str, list[str]]]:
    """The roots and each entry's children, in file order (a missing parent: a root)."""
    ids = {e["id"] for e in entries if isinstance(e.get("id"), str)}
    roots: list[str] = []
    children: dict[str, list[str]] = {}
    for entry in entries:
        entry_id = entry.get("id")
        if not isinstance(entry_id, str) or entry.get("type") == "session":
            continue
        parent = entry.get("parentId")
        if isinstance(parent, str) and parent in ids and parent != entry_id:
            children.setdefault(parent, []).append(entry_id)
        else:
            roots.append(entry_id)
    return roots, children


def draw(entries: list[dict[str, Any]], leaf: str | None) -> list[str]:
    """The tree, one line per entry (``ID label``); a branch point's children are drawn with
    ``├─``/``└─``, the current entry marked ``← here``."""
    by_id = {e["id"]: e for e in entries if isinstance(e.get("id"), str)}
    roots, children = _tree(entries)
    lines: list[str] = []
    seen: set[str] = set()
    stack: list[tuple[str, str, str]] = [(r, "", "") for r in reversed(roots)]
    while stack:  # iterative: a long chain must not hit the recursion limit
        entry_id, prefix, connector = stack.pop()
        if entry_id in seen:
            continue
        seen.add(entry_id)
        mark = "  ← here" if entry_id == leaf else ""
        lines.append(f"{prefix}{connector}{entry_id} {label(by_id[entry_id])}{mark}")
        kids = children.get(entry_id, [])
        inner = prefix + ("   " if connector == "└─ " else "│  " if connector else "")
        if len(kids) == 1:
            stack.append((kids[0], inner, ""))
            continue
        for index in range(len(kids) - 1, -1, -1):
            stack.append((kids[index], inner, "└─ " if index == len(kids) - 1 else "├─ "))
    return lines


def path_to(entries: list[dict[str, Any]], entry_id: str) -> list[dict[str, Any]]:
    """The entries from the root down to ``entry_id``."""
    by_id = {e["id"]: e for e in entries if isinstance(e.get("id"), str)}
    branch: list[dict[str, Any]] = []
    cursor: Any = entry_id
    while isinstance(cursor, str) and cursor in by_id and len(branch) <= len(by_id):
        branch.append(by_id[cursor])
        cursor = by_id[cursor].get("parentId")
    branch.reverse()
    return branch


def find_entry(entries: list[dict[str, Any]], prefix: str) -> str:
    """The id ``prefix`` starts (raises :class:`LookupError` for none or several)."""
    header = entries[0].get("id") if entries and entries[0].get("type") == "session" else None
    found: list[str] = [
        e["id"]
        for e in entries
        if isinstance(e.get("id"), str) and e["id"].startswith(prefix) and e["id"] != header
    ]
    if len(found) != 1:
        what = "no entry" if not found else f"{len(found)} entries"
        raise LookupError(f"{what} with an id starting {prefix!r} (/tree lists them)")
    return found[0]


def _session(ctx: CommandContext) -> Session:
    session = ctx.app.session
    if session is None:
        raise LookupError("this session is not saved (--no-session): it has no tree")
    return session


def _switch(ctx: CommandContext, session: Session) -> None:
    app = ctx.app
    app.session = session
    app.resumed_messages = len(session.messages)
    app.agent.replace_messages(session.messages)
    app.agent.session_id = session.id


def _complete_entry(ctx: CommandContext, partial: str) -> Iterator[str]:
    session = ctx.app.session
    for entry in session.entries()[1:] if session else []:
        entry_id = entry.get("id")
        if isinstance(entry_id, str) and entry_id.startswith(partial.strip()):
            yield entry_id


@command(
    "tree",
    "the session's tree; with an ID: go back to that entry and go on from there (a new "
    "branch; `summarize` first summarises the branch left)",
    args=[Arg("target", metavar="ID [summarize]", nargs="?", complete=_complete_entry)],
)
async def _tree_command(ctx: CommandContext, argument: str) -> None:
    session = _session(ctx)
    entries = session.entries()
    if not argument:
        lines = draw(entries, session.leaf)
        ctx.say("\n".join(lines) if lines else "the session is empty")
        return
    if ctx.app.busy:
        _busy()
    word, _, rest = argument.partition(" ")
    target = find_entry(entries, word)
    left = session.leaf
    if rest.strip() == "summarize" and left is not None and left != target:
        ctx.say("summarising the branch left…")
        summary = await _summarise(ctx, entries, left, target)
        session.checkout(path_to(entries, target))
        session.record_branch_summary(left, summary)
    else:
        session.checkout(path_to(entries, target))
    ctx.app.agent.replace_messages(session.messages)
    ctx.say(
        f"at {target}: {label(path_to(entries, target)[-1])} (the next message starts a branch)"
    )


def _busy() -> None:
    raise RuntimeError("wait for the agent to finish (or abort it) first")


async def _summarise(
    ctx: CommandContext, entries: list[dict[str, Any]], left: str, target: str
) -> str:
    from tau.ai import Context, UserMessage, complete_simple
    from tau.cli.models import custom_key

    kept = {e.get("id") for e in path_to(entries, target)}
    leaving = [e for e in path_to(entries, left) if e.get("id") not in kept]
    conversation = "\n".join(label(e) for e in leaving if e.get("type") == "message")
    model = ctx.app.model
    options: dict[str, Any] = {}
    key = custom_key(model.provider)
    if key:
        options["api_key"] = key
    message = await complete_simple(
        model,
        Context([UserMessage(SUMMARY_PROMPT.format(conversation=conversation))]),
        max_tokens=2000,
        **options,
    )
    if message.stop_reason in ("error", "aborted") or not message.text.strip():
        raise RuntimeError(f"the summary failed: {message.error_message or 'no text'}")
    return message.text.strip()


@command(
    "fork",
    "copy the branch up to ID (default: here) into a new session, and go on there",
    args=[Arg("target", metavar="ID", nargs="?", complete=_complete_entry)],
)
def _fork(ctx: CommandContext, argument: str) -> None:
    from tau.cli.session import Session

    session = _session(ctx)
    entries = session.entries()
    target = find_entry(entries, argument) if argument else session.leaf
    branch = path_to(entries, target) if target else []
    forked = fork_file(session, branch)
    _switch(ctx, Session.open(forked))
    ctx.say(f"forked into {forked} ({len(branch)} entries)")


def fork_file(session: Session, branch: list[dict[str, Any]]) -> Path:
    """A new session file beside ``session``'s holding ``branch`` (its header names the
    session it came from, as pi's ``parentSession``)."""
    import os
    import uuid
    from datetime import UTC, datetime

    from tau.cli.session import new_session_path
    from tau.cli.session_file import encode_entry

    new_id = str(uuid.uuid4())
    path = new_session_path(session.path.parent, new_id)
    now = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    header = {
        "type": "session",
        "version": 3,
        "id": new_id,
        "timestamp": now,
        "cwd": os.getcwd(),
        "parentSession": str(session.path),
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("xb") as out:
        out.write(b"".join(encode_entry(e) for e in [header, *branch]))
    return path


@command(
    "name", "show the session's name, or name it", args=[Arg("name", metavar="NAME", nargs="?")]
)
def _name(ctx: CommandContext, argument: str) -> None:
    session = _session(ctx)
    if argument:
        session.record_name(argument)
    ctx.say(f"name: {session.name}" if session.name else "the session has no name (/name NAME)")


def _complete_session(ctx: CommandContext, partial: str) -> Iterator[str]:
    from tau.cli.session_store import recent

    for summary in recent(ctx.app.settings.workspace.cwd, 50):
        if summary.id.startswith(partial.strip()):
            yield summary.id[:8]


@command(
    "resume",
    "the sessions of this directory (TEXT: those that mention it); a number or id opens one",
    args=[Arg("choice", metavar="N|ID|TEXT", nargs="?", complete=_complete_session)],
)
def _resume(ctx: CommandContext, argument: str) -> None:
    from tau.cli.session import Session
    from tau.cli.session_store import find, looks_like_id, recent, search

    cwd = ctx.app.settings.workspace.cwd
    listed = recent(cwd, 20)
    choice = argument.strip()
    path: Path | None = None
    if choice.isdigit() and 1 <= int(choice) <= len(listed):
        path = listed[int(choice) - 1].path
    elif choice and looks_like_id(choice):
        path = find(choice, cwd)
    else:
        listed = search(cwd, choice, 20) if choice else listed
        if len(listed) == 1 and choice:
            path = listed[0].path
    if path is None:
        if not listed:
            ctx.say("no saved session" + (f" mentions {choice!r}" if choice else " here"))
        for number, summary in enumerate(listed, 1):
            ctx.say(f"{number:>3}  {summary.id[:8]}  {summary.first_prompt[:_LABEL_WIDTH]}")
        return
    if ctx.app.busy:
        _busy()
    session = Session.open(path)
    _switch(ctx, session)
    ctx.say(f"resumed {path.name}: {len(session.messages)} messages")
