"""A session file: the conversation as JSONL, written as it happens and resumable.

The layout is pi's session format (version 3) restricted to one branch: a header line
``{"type": "session", "version": 3, "id", "timestamp", "cwd"}``, then one entry per line, each
with ``type``, an 8-hex ``id``, the ``parentId`` of the entry before it and an ISO
``timestamp``: ``message`` entries (any agent message, in the library's JSON form),
``model_change`` (``provider``, ``modelId``; tau adds ``api`` and ``baseUrl`` for an endpoint
given only by ``--base-url``), ``thinking_level_change`` (``thinkingLevel``) and ``compaction``
(``summary``, ``firstKeptEntryId``, ``tokensBefore``, ``details``) entries, ``session_info``
(``name``: the session's name, given by ``tau web``'s rename; the last one counts) and ``custom``
entries (``customType``, ``data``: tau's ``tau.paused_run``, see :mod:`tau.cli.paused_run`;
the last one of each type is :attr:`Session.custom`). Nothing is written
until the first assistant message exists, so a run that never reached the model leaves no file
behind; an existing empty file is a new session.

A compaction deletes nothing: the context rebuilt from the file is the summary, then the
message entries from ``firstKeptEntryId`` on (as pi builds it), the same context the process
that compacted went on with.

Nothing is lost, and saving never stops:

* every entry is written as valid UTF-8 JSON (see :func:`~tau.cli.session_file.encode_entry`);
  a message that cannot be serialised at all is recorded as a ``custom`` entry of type
  ``tau.unsaved_message`` saying why;
* each write holds an ``fcntl`` lock and attaches to the file's last entry, so two processes on
  one file keep one chain and a resume sees the entries of both;
* a resume keeps every complete entry: damaged lines (cut off, NUL padding, not UTF-8) and
  broken parent links are reported with the file and line, and the chain goes on from the entry
  before; a loop of ``parentId`` links is broken where it closes. The file is left as it is until
  the next save, which rewrites it without the damaged lines and keeps the original next to it
  as ``FILE.damaged``.
"""

from __future__ import annotations

import os
import stat
import sys
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tau.agent import (
    AgentMessage,
    RunUsage,
    dump_agent_message,
    load_agent_message,
    message_role,
)
from tau.ai import AssistantMessage, UserMessage
from tau.cli.compaction import CompactionSummary
from tau.cli.session_file import (
    ParsedFile,
    backup_path,
    encode_entry,
    locked,
    parse,
    read_all,
    write_all,
)

UNSAVED_MESSAGE = "tau.unsaved_message"
"""``customType`` of the entry recorded in place of a message that could not be serialised."""


class SessionError(ValueError):
    """The session file cannot be read or is not a tau/pi session."""


def _now() -> str:
    return _iso_of(datetime.now(UTC))


def _iso_of(moment: datetime) -> str:
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _iso(ms: int) -> str:
    return _iso_of(datetime.fromtimestamp(ms / 1000, UTC))


def _ms(timestamp: Any) -> int | None:
    """Milliseconds since the epoch of an ISO ``timestamp`` (None if it is not one)."""
    if not isinstance(timestamp, str):
        return None
    try:
        return int(datetime.fromisoformat(timestamp.replace("Z", "+00:00")).timestamp() * 1000)
    except ValueError:
        return None


def new_session_path(directory: Path, session_id: str) -> Path:
    """The file of a new session in ``directory``: its start time, then its id (pi's naming)."""
    stamp = _now().replace(":", "-").replace(".", "-")
    return directory / f"{stamp}_{session_id}.jsonl"


BRANCH_SUMMARY_PREFIX = (
    "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n"
)
"""pi's wording: the model reads a branch summary as a user message in this frame."""


def branch_summary_message(summary: str, timestamp: int | None) -> UserMessage:
    """The context message of a ``branch_summary`` entry."""
    text = f"{BRANCH_SUMMARY_PREFIX}{summary}\n</summary>"
    return UserMessage(text) if timestamp is None else UserMessage(text, timestamp=timestamp)


def _print_warning(text: str) -> None:
    print(f"tau: warning: {text}", file=sys.stderr)


@dataclass
class Session:
    """An open session file: the messages so far and where the next entry attaches."""

    path: Path
    id: str = field(default_factory=lambda: str(uuid.uuid4()))
    messages: list[AgentMessage] = field(default_factory=list)
    """The context: a compaction's summary and what followed it, or every message."""
    entry_ids: list[str | None] = field(default_factory=list)
    """The entry of each message in :attr:`messages` (None for a compaction's summary)."""
    model: str | None = None
    """``provider/id`` of the last ``model_change``."""
    model_entry: dict[str, Any] | None = None
    """The last ``model_change`` entry itself (``api`` and ``baseUrl`` of an ad-hoc endpoint)."""
    thinking_level: str | None = None
    usage: RunUsage = field(default_factory=RunUsage)
    """The tokens and cost of every answer on the branch, compacted ones included."""
    history: list[AgentMessage] = field(default_factory=list)
    """Every message of the branch, compacted ones included, with each compaction's summary
    where it happened (what an export shows)."""
    custom: dict[str, Any] = field(default_factory=dict)
    """The ``data`` of the last ``custom`` entry of each ``customType`` on the branch."""
    leaf: str | None = None
    name: str | None = None
    """The session's name (the last ``session_info`` entry's, as pi writes it; ``/name``)."""
    custom_entries: list[tuple[str, Any]] = field(default_factory=list)
    """``(customType, data)`` of every ``custom`` entry on the branch (extensions' state)."""
    on_warning: Callable[[str], None] = _print_warning
    _pending: list[dict[str, Any]] = field(default_factory=list)
    _on_disk: bool = False
    _ids: set[str] = field(default_factory=set)
    _known_size: int = 0
    _needs_repair: bool = False

    @classmethod
    def create(cls, directory: Path, on_warning: Callable[[str], None] | None = None) -> Session:
        """A new session, to be written in ``directory`` under a fresh name."""
        session_id = str(uuid.uuid4())
        return cls(
            new_session_path(directory, session_id),
            id=session_id,
            on_warning=on_warning or _print_warning,
        )

    @property
    def on_disk(self) -> bool:
        """Whether the file exists yet (it is written once there is an answer)."""
        return self._on_disk

    @classmethod
    def open(cls, path: Path, on_warning: Callable[[str], None] | None = None) -> Session:
        """Resume ``path`` if it holds a session, else start a new one that will be written there.

        Damage is reported through ``on_warning`` (default: a line on stderr).
        """
        session = cls(path, on_warning=on_warning or _print_warning)
        if path.exists() or path.is_symlink():
            session._load()
        return session

    # ----------------------------------------------------------------------- reading

    def _open_fd(self, flags: int) -> int:
        try:
            fd = os.open(self.path, flags | os.O_NONBLOCK | os.O_CLOEXEC, 0o644)
        except OSError as exc:
            raise SessionError(f"cannot open session {self.path}: {exc.strerror}") from None
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            raise SessionError(f"cannot use {self.path} as a session: not a regular file")
        return fd

    def _load(self) -> None:
        try:
            mode = os.stat(self.path).st_mode
        except OSError as exc:
            raise SessionError(f"cannot read session {self.path}: {exc.strerror}") from None
        if not stat.S_ISREG(mode):
            kind = "a directory" if stat.S_ISDIR(mode) else "not a regular file"
            raise SessionError(f"cannot use {self.path} as a session: {kind}")
        fd = self._open_fd(os.O_RDONLY)
        try:
            with locked(fd, str(self.path), exclusive=False):
                data = read_all(fd)
        except TimeoutError as exc:
            raise SessionError(str(exc)) from None
        finally:
            os.close(fd)
        self._known_size = len(data)
        parsed = parse(data)
        self._check_header(parsed)
        for number, reason in parsed.damaged:
            self.on_warning(f"{self.path}:{number}: damaged line skipped: {reason}")
        if parsed.damaged:
            self._needs_repair = True
            self.on_warning(
                f"{self.path}: the file is repaired at the next save (the original is kept "
                f"as {backup_path(self.path).name})"
            )
        if parsed.blank:
            return  # an empty file (or only padding): a new session
        self._on_disk = True
        self._read_branch(parsed)

    def _check_header(self, parsed: ParsedFile) -> None:
        if parsed.blank:
            return
        first_line = min([number for number, _ in parsed.entries] + [n for n, _ in parsed.damaged])
        damaged = dict(parsed.damaged)
        if first_line in damaged:
            raise SessionError(
                f"{self.path} is not a session file: line {first_line} is {damaged[first_line]}"
            )
        header = parsed.entries[0][1]
        if header.get("type") != "session":
            raise SessionError(f"{self.path} is not a session file (no header line)")
        self.id = str(header.get("id") or self.id)

    def _read_branch(self, parsed: ParsedFile) -> None:
        order = [(n, e) for n, e in parsed.entries[1:] if isinstance(e.get("id"), str)]
        index = {entry["id"]: i for i, (_, entry) in enumerate(order)}
        self._ids.update(index)
        if not order:
            return
        self.leaf = order[-1][1]["id"]
        # Walk from the last entry back to the root: the branch that is current.
        branch: list[dict[str, Any]] = []
        seen: set[int] = set()
        cursor: int | None = len(order) - 1
        while cursor is not None:
            seen.add(cursor)
            number, entry = order[cursor]
            branch.append(entry)
            parent = entry.get("parentId")
            if parent is None:
                break
            following = index.get(parent) if isinstance(parent, str) else None
            if following is None:
                following = cursor - 1 if cursor > 0 else None
                self.on_warning(
                    f"{self.path}:{number}: parent entry {parent!r} is missing; "
                    "going on with the entry before it"
                )
            if following is not None and following in seen:
                self.on_warning(
                    f"{self.path}:{number}: parentId {parent!r} closes a loop; "
                    "the chain is broken there"
                )
                break
            cursor = following
        branch.reverse()
        self._rebuild(branch)

    def _rebuild(self, branch: list[dict[str, Any]]) -> None:
        """The context of ``branch`` (root first): from its last compaction on, if any."""
        compaction = next(
            (i for i in range(len(branch) - 1, -1, -1) if branch[i].get("type") == "compaction"),
            None,
        )
        kept_from = 0
        if compaction is not None:
            entry = branch[compaction]
            first_kept = entry.get("firstKeptEntryId")
            kept_from = next(
                (i for i in range(compaction) if branch[i].get("id") == first_kept), compaction
            )
            if kept_from == compaction and first_kept is not None:
                self.on_warning(
                    f"{self.path}: the compaction's first kept entry {first_kept!r} is not on "
                    "the branch; going on from the compaction"
                )
            self._add(self._summary(entry), None)
        for index, entry in enumerate(branch):
            kind = entry.get("type")
            if kind == "compaction":
                self.history.append(self._summary(entry))
            elif kind == "model_change":
                self.model = f"{entry.get('provider')}/{entry.get('modelId')}"
                self.model_entry = entry
            elif kind == "thinking_level_change" and isinstance(entry.get("thinkingLevel"), str):
                self.thinking_level = entry["thinkingLevel"]
            elif kind == "custom" and isinstance(entry.get("customType"), str):
                self.custom[entry["customType"]] = entry.get("data")
                self.custom_entries.append((entry["customType"], entry.get("data")))
            elif kind == "session_info" and isinstance(entry.get("name"), str | None):
                self.name = entry.get("name")
            elif kind == "branch_summary" and isinstance(entry.get("summary"), str):
                summary = branch_summary_message(entry["summary"], _ms(entry.get("timestamp")))
                self.history.append(summary)
                if compaction is None or index > compaction:
                    self._add(summary, entry.get("id"))
            elif kind == "message":
                message = self._load_message(entry)
                if message is None:
                    continue
                self.history.append(message)
                if isinstance(message, AssistantMessage):
                    self.usage.add_message(message)
                if compaction is None or kept_from <= index < compaction or index > compaction:
                    self._add(message, entry.get("id"))

    def _summary(self, entry: dict[str, Any]) -> CompactionSummary:
        details = entry.get("details")
        details = details if isinstance(details, dict) else {}

        def names(key: str) -> list[str]:
            value = details.get(key)
            return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []

        before = entry.get("tokensBefore")
        return CompactionSummary(
            summary=str(entry.get("summary") or ""),
            tokens_before=before if isinstance(before, int) and not isinstance(before, bool) else 0,
            timestamp=_ms(entry.get("timestamp")) or 0,
            read_files=names("readFiles"),
            modified_files=names("modifiedFiles"),
        )

    def _load_message(self, entry: dict[str, Any]) -> AgentMessage | None:
        try:
            return load_agent_message(entry.get("message"))
        except ValueError as exc:
            self.on_warning(f"{self.path}: message {entry.get('id')!r} skipped: {exc}")
            return None

    def _add(self, message: AgentMessage, entry_id: Any) -> None:
        self.messages.append(message)
        self.entry_ids.append(entry_id if isinstance(entry_id, str) else None)

    # ----------------------------------------------------------------------- writing

    def _new_id(self) -> str:
        while True:
            candidate = uuid.uuid4().hex[:8]
            if candidate not in self._ids:
                self._ids.add(candidate)
                return candidate

    def _append(self, entry: dict[str, Any]) -> str:
        entry = {"id": self._new_id(), "parentId": self.leaf, "timestamp": _now(), **entry}
        self.leaf = entry["id"]
        self._pending.append(entry)
        return str(entry["id"])

    def record_model(
        self, provider: str, model_id: str, endpoint: dict[str, str] | None = None
    ) -> None:
        """Note a model switch (skipped when it is the session's current model).

        ``endpoint`` (``api``, ``baseUrl``) is stored for a model no name can find again.
        """
        spec = f"{provider}/{model_id}"
        current = self.model_entry or {}
        recorded = {k: current[k] for k in ("api", "baseUrl") if k in current}
        if spec != self.model or recorded != (endpoint or {}):
            self.model = spec
            entry = {"type": "model_change", "provider": provider, "modelId": model_id}
            self.model_entry = {**entry, **(endpoint or {})}
            self._append(self.model_entry)
            self.flush()

    def record_thinking_level(self, level: str) -> None:
        """Note a reasoning level change (skipped when unchanged; ``off`` is the default)."""
        if level != (self.thinking_level or "off"):
            self.thinking_level = level
            self._append({"type": "thinking_level_change", "thinkingLevel": level})
            self.flush()

    def record_compaction(
        self, summary: CompactionSummary, first_kept: int, tokens_before: int
    ) -> None:
        """Note a compaction: the context becomes ``summary`` and the messages from index
        ``first_kept`` of :attr:`messages` on; nothing is removed from the file."""
        kept_id = self.entry_ids[first_kept] if first_kept < len(self.entry_ids) else None
        self._append(
            {
                "type": "compaction",
                # The summary's own time: a resume rebuilds the very same summary message.
                "timestamp": _iso(summary.timestamp),
                "summary": summary.summary,
                "firstKeptEntryId": kept_id,
                "tokensBefore": tokens_before,
                "details": {
                    "readFiles": list(summary.read_files),
                    "modifiedFiles": list(summary.modified_files),
                },
                "fromHook": False,
            }
        )
        self.history.append(summary)
        self.messages = [summary, *self.messages[first_kept:]]
        self.entry_ids = [None, *self.entry_ids[first_kept:]]
        self.flush()

    def checkout(self, branch: list[dict[str, Any]]) -> None:
        """Go on from the last entry of ``branch`` (root first): the context becomes that
        branch's and the next entry its child, a new branch (nothing is removed)."""
        self.messages, self.entry_ids, self.history = [], [], []
        self.custom, self.custom_entries = {}, []
        self.usage = RunUsage()
        self.model = self.model_entry = self.thinking_level = None
        self._rebuild(branch)
        self.leaf = branch[-1].get("id") if branch else None

    def entries(self) -> list[dict[str, Any]]:
        """Every entry of the file (the header first) and those not written yet."""
        entries: list[dict[str, Any]] = []
        if self._on_disk:
            fd = self._open_fd(os.O_RDONLY)
            try:
                with locked(fd, str(self.path), exclusive=False):
                    entries = [entry for _, entry in parse(read_all(fd)).entries]
            except TimeoutError as exc:
                raise SessionError(str(exc)) from None
            finally:
                os.close(fd)
        return [*entries, *self._pending]

    def record_branch_summary(self, from_id: str, summary: str) -> None:
        """Note a summary of the branch left at ``from_id`` (pi's ``branch_summary``): it goes
        into the context, after the entry navigated to."""
        message = branch_summary_message(summary, None)
        self.history.append(message)
        entry = {"type": "branch_summary", "fromId": from_id, "summary": summary}
        self._add(message, self._append(entry))
        self.flush()

    def record_custom(self, custom_type: str, data: Any) -> None:
        """Append a ``custom`` entry (pi's extension data: no message, not in the context)."""
        self.custom[custom_type] = data
        self.custom_entries.append((custom_type, data))
        self._append({"type": "custom", "customType": custom_type, "data": data})
        self.flush()

    def record_name(self, name: str) -> None:
        """Name the session (pi's ``session_info`` entry; skipped when unchanged)."""
        if name != self.name:
            self.name = name
            self._append({"type": "session_info", "name": name})
            self.flush()

    def record_message(self, message: AgentMessage) -> None:
        """Append a finished message; the file is written once an assistant message exists.

        A message that cannot be serialised is recorded as an error entry instead, so the
        session goes on saving.
        """
        self.history.append(message)
        if isinstance(message, AssistantMessage):
            self.usage.add_message(message)
        try:
            entry: dict[str, Any] = {"type": "message", "message": dump_agent_message(message)}
        except Exception as exc:
            entry = {
                "type": "custom",
                "customType": UNSAVED_MESSAGE,
                "data": {"role": message_role(message), "error": str(exc) or type(exc).__name__},
            }
        self._add(message, self._append(entry))
        self.flush()

    def flush(self) -> None:
        """Write pending entries (a new file only once it holds an assistant message)."""
        if not self._pending:
            return
        if not self._on_disk:
            if not any(isinstance(m, AssistantMessage) for m in self.messages):
                return
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                reason = exc.strerror or type(exc).__name__
                raise SessionError(f"cannot create {self.path.parent}: {reason}") from None
        fd = self._open_fd(os.O_RDWR | os.O_CREAT | os.O_APPEND)
        try:
            with locked(fd, str(self.path), exclusive=True):
                self._write_locked(fd)
        except TimeoutError as exc:
            raise SessionError(str(exc)) from None
        finally:
            os.close(fd)
        self._pending.clear()
        self._on_disk = True

    def _write_locked(self, fd: int) -> None:
        size = os.fstat(fd).st_size
        prefix = b""
        file_leaf = self._pending[0]["parentId"]
        if size != self._known_size or self._needs_repair:
            # Another process wrote since we last looked, or the file needs its repair.
            data = read_all(fd)
            parsed = parse(data)
            if parsed.damaged:
                self._repair(fd, data, parsed)
            elif not parsed.ends_with_newline:
                prefix = b"\n"
            ids = [e["id"] for _, e in parsed.entries[1:] if isinstance(e.get("id"), str)]
            self._ids.update(ids)
            file_leaf = ids[-1] if ids else None
            if parsed.entries and parsed.entries[0][1].get("type") == "session":
                self.id = str(parsed.entries[0][1].get("id") or self.id)
            size = os.fstat(fd).st_size
        # Attach to the file's last entry: a chain another process extended stays one chain.
        self._pending[0]["parentId"] = file_leaf
        lines = [encode_entry(entry) for entry in self._pending]
        if size == 0:
            header = {
                "type": "session",
                "version": 3,
                "id": self.id,
                "timestamp": _now(),
                "cwd": os.getcwd(),
            }
            lines.insert(0, encode_entry(header))
        payload = prefix + b"".join(lines)
        write_all(fd, payload)
        self._known_size = size + len(payload)

    def _repair(self, fd: int, data: bytes, parsed: ParsedFile) -> None:
        backup = backup_path(self.path)
        with backup.open("xb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.ftruncate(fd, 0)
        write_all(fd, b"".join(_relinked(parsed)))
        self._needs_repair = False
        self.on_warning(
            f"{self.path}: repaired ({len(parsed.damaged)} damaged lines dropped); "
            f"the original is kept as {backup}"
        )


def _relinked(parsed: ParsedFile) -> list[bytes]:
    """The complete lines, with each link to a lost entry moved to the entry before it."""
    known = {e["id"] for _, e in parsed.entries if isinstance(e.get("id"), str)}
    lines: list[bytes] = []
    previous: str | None = None
    for (_, entry), line in zip(parsed.entries, parsed.clean, strict=True):
        entry_id = entry.get("id")
        parent = entry.get("parentId")
        if isinstance(entry_id, str):
            if parent is not None and parent not in known:
                line = encode_entry({**entry, "parentId": previous})
            previous = entry_id
        lines.append(line)
    return lines
