"""``--session FILE``: the conversation as a JSONL file, written as it happens and resumable.

The layout is pi's session format (version 3) restricted to one branch: a header line
``{"type": "session", "version": 3, "id", "timestamp", "cwd"}``, then one entry per line, each
with ``type``, an 8-hex ``id``, the ``parentId`` of the entry before it and an ISO
``timestamp``: ``message`` entries (any agent message, in the library's JSON form) and
``model_change`` entries. Nothing is written until the first assistant message exists, so a
run that never reached the model leaves no file behind.
"""

from __future__ import annotations

import json
import os
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tau.agent.messages import AgentMessage, dump_agent_message, load_agent_message
from tau.ai.types import AssistantMessage


class SessionError(ValueError):
    """The session file cannot be read or is not a tau/pi session."""


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass
class Session:
    """An open session file: the messages so far and where the next entry attaches."""

    path: Path
    id: str = field(default_factory=lambda: str(uuid.uuid4()))
    messages: list[AgentMessage] = field(default_factory=list)
    model: str | None = None
    leaf: str | None = None
    _pending: list[dict[str, Any]] = field(default_factory=list)
    _on_disk: bool = False
    _ids: set[str] = field(default_factory=set)

    @classmethod
    def open(cls, path: Path) -> Session:
        """Resume ``path`` if it exists, else start a new session that will be written there."""
        if not path.exists():
            return cls(path)
        session = cls(path, _on_disk=True)
        session._load()
        return session

    def _load(self) -> None:
        try:
            lines = self.path.read_text(encoding="utf-8").splitlines()
        except OSError as exc:
            raise SessionError(f"cannot read session {self.path}: {exc.strerror}") from None
        entries: dict[str, dict[str, Any]] = {}
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                entry = json.loads(line)
            except ValueError:
                raise SessionError(f"{self.path}:{number}: not a JSON line") from None
            if not isinstance(entry, dict):
                raise SessionError(f"{self.path}:{number}: not a JSON object")
            if number == 1:
                if entry.get("type") != "session":
                    raise SessionError(f"{self.path} is not a session file (no header line)")
                self.id = str(entry.get("id") or self.id)
                continue
            entry_id = entry.get("id")
            if isinstance(entry_id, str):
                entries[entry_id] = entry
                self._ids.add(entry_id)
                self.leaf = entry_id
        # Walk from the last entry back to the root: the branch that is current.
        branch: list[dict[str, Any]] = []
        cursor = self.leaf
        while cursor is not None and cursor in entries:
            branch.append(entries[cursor])
            cursor = entries[cursor].get("parentId")
        for entry in reversed(branch):
            kind = entry.get("type")
            if kind == "message":
                try:
                    self.messages.append(load_agent_message(entry.get("message")))
                except ValueError as exc:
                    raise SessionError(f"{self.path}: bad message entry: {exc}") from None
            elif kind == "model_change":
                self.model = f"{entry.get('provider')}/{entry.get('modelId')}"

    def _new_id(self) -> str:
        while True:
            candidate = uuid.uuid4().hex[:8]
            if candidate not in self._ids:
                self._ids.add(candidate)
                return candidate

    def _append(self, entry: dict[str, Any]) -> None:
        entry = {"id": self._new_id(), "parentId": self.leaf, "timestamp": _now(), **entry}
        self.leaf = entry["id"]
        self._pending.append(entry)

    def record_model(self, provider: str, model_id: str) -> None:
        """Note a model switch (skipped when it is the session's current model)."""
        spec = f"{provider}/{model_id}"
        if spec != self.model:
            self.model = spec
            self._append({"type": "model_change", "provider": provider, "modelId": model_id})
            self.flush()

    def record_message(self, message: AgentMessage) -> None:
        """Append a finished message; the file is written once an assistant message exists."""
        self.messages.append(message)
        self._append({"type": "message", "message": dump_agent_message(message)})
        self.flush()

    def flush(self) -> None:
        """Write pending entries (a new file only once it holds an assistant message)."""
        if not self._pending:
            return
        if not self._on_disk:
            if not any(isinstance(m, AssistantMessage) for m in self.messages):
                return
            self.path.parent.mkdir(parents=True, exist_ok=True)
            header = {
                "type": "session",
                "version": 3,
                "id": self.id,
                "timestamp": _now(),
                "cwd": os.getcwd(),
            }
            self._pending.insert(0, header)
        with self.path.open("a", encoding="utf-8") as out:
            for entry in self._pending:
                out.write(json.dumps(entry, ensure_ascii=False) + "\n")
        self._pending.clear()
        self._on_disk = True
