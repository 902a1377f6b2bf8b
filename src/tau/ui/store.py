"""Where :func:`tau.ui.chat_app` keeps its chats: by id, as JSON.

A :class:`Chat` is a transcript (tau's message JSON), the paused run's
:class:`~tau.agent.RunState` when one waits for the page, the page's approval answers, the
last run's output and a title. A store holds chats as JSON text, so a reload, a second tab
or another process (SQLite) sees the same chat; :class:`MemoryChatStore` for tests and
single-process apps, :class:`SQLiteChatStore` for apps. Any object with the methods of
:class:`ChatStore` will do.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import jiter
from pydantic_core import to_json, to_jsonable_python

from tau.agent import AgentMessage, RunState, dump_agent_message, load_agent_message
from tau.ui.parts import Approval

__all__ = ["Chat", "ChatStore", "ChatSummary", "MemoryChatStore", "SQLiteChatStore"]


@dataclass(slots=True)
class ChatSummary:
    """A line of the chat list."""

    id: str
    title: str
    updated: float


@dataclass(slots=True)
class Chat:
    """One chat: see the module docstring."""

    id: str
    messages: list[AgentMessage] = field(default_factory=list)
    state: RunState | None = None
    approvals: dict[str, Approval] = field(default_factory=dict)
    output: Any = None
    has_output: bool = False
    title: str = ""
    updated: float = 0.0

    def to_json(self) -> str:
        """The chat as JSON text."""
        return to_json(
            {
                "id": self.id,
                "title": self.title,
                "updated": self.updated,
                "messages": [dump_agent_message(m) for m in self.messages],
                "state": self.state.dump() if self.state is not None else None,
                "approvals": self.approvals,
                "output": to_jsonable_python(self.output, fallback=repr),
                "hasOutput": self.has_output,
            }
        ).decode()

    @classmethod
    def from_json(cls, text: str | bytes) -> Chat:
        """A chat from :meth:`to_json` text."""
        data = jiter.from_json(text.encode() if isinstance(text, str) else text)
        state = data.get("state")
        return cls(
            id=data["id"],
            title=data.get("title", ""),
            updated=data.get("updated", 0.0),
            messages=[
                load_agent_message(m, f"messages[{i}]") for i, m in enumerate(data["messages"])
            ],
            state=RunState.load(state) if state is not None else None,
            approvals=dict(data.get("approvals") or {}),
            output=data.get("output"),
            has_output=bool(data.get("hasOutput")),
        )

    def summary(self) -> ChatSummary:
        """Its line in the chat list."""
        return ChatSummary(self.id, self.title, self.updated)


class ChatStore(Protocol):
    """What :func:`tau.ui.chat_app` needs of a store."""

    async def load(self, chat_id: str) -> Chat | None:
        """The chat, or None if there is none by that id."""
        ...

    async def save(self, chat: Chat) -> None:
        """Store ``chat`` (replacing the one with its id)."""
        ...

    async def delete(self, chat_id: str) -> bool:
        """Remove the chat; False if there was none."""
        ...

    async def list(self) -> list[ChatSummary]:
        """Every chat, the most recently updated first."""
        ...


def _stamp(chat: Chat) -> str:
    chat.updated = time.time()
    return chat.to_json()


class MemoryChatStore:
    """Chats in this process's memory (as JSON text: a loaded chat is always a copy)."""

    def __init__(self) -> None:
        self._chats: dict[str, str] = {}

    async def load(self, chat_id: str) -> Chat | None:
        """See :class:`ChatStore`."""
        text = self._chats.get(chat_id)
        return Chat.from_json(text) if text is not None else None

    async def save(self, chat: Chat) -> None:
        """See :class:`ChatStore`."""
        self._chats[chat.id] = _stamp(chat)

    async def delete(self, chat_id: str) -> bool:
        """See :class:`ChatStore`."""
        return self._chats.pop(chat_id, None) is not None

    async def list(self) -> list[ChatSummary]:
        """See :class:`ChatStore`."""
        chats = [Chat.from_json(text).summary() for text in self._chats.values()]
        return sorted(chats, key=lambda c: c.updated, reverse=True)


class SQLiteChatStore:
    """Chats in a SQLite file (one table, ``tau_chats``), shared by processes."""

    def __init__(self, path: str | Path) -> None:
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        with self._lock:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS tau_chats (id TEXT PRIMARY KEY, title TEXT NOT NULL,"
                " updated REAL NOT NULL, data TEXT NOT NULL)"
            )

    def _run(self, sql: str, args: tuple[Any, ...] = ()) -> list[Any]:
        with self._lock:
            cursor = self._db.execute(sql, args)
            rows = cursor.fetchall()
            return [cursor.rowcount, *rows]

    async def load(self, chat_id: str) -> Chat | None:
        """See :class:`ChatStore`."""
        _, *rows = await asyncio.to_thread(
            self._run, "SELECT data FROM tau_chats WHERE id = ?", (chat_id,)
        )
        return Chat.from_json(rows[0][0]) if rows else None

    async def save(self, chat: Chat) -> None:
        """See :class:`ChatStore`."""
        text = _stamp(chat)
        await asyncio.to_thread(
            self._run,
            "INSERT OR REPLACE INTO tau_chats (id, title, updated, data) VALUES (?, ?, ?, ?)",
            (chat.id, chat.title, chat.updated, text),
        )

    async def delete(self, chat_id: str) -> bool:
        """See :class:`ChatStore`."""
        count, *_ = await asyncio.to_thread(
            self._run, "DELETE FROM tau_chats WHERE id = ?", (chat_id,)
        )
        return bool(count)

    async def list(self) -> list[ChatSummary]:
        """See :class:`ChatStore`."""
        _, *rows = await asyncio.to_thread(
            self._run, "SELECT id, title, updated FROM tau_chats ORDER BY updated DESC"
        )
        return [ChatSummary(*row) for row in rows]

    def close(self) -> None:
        """Close the database."""
        with self._lock:
            self._db.close()
