"""``tau web``'s chats as the ``tau`` command's session files (:class:`SessionChatStore`).

A chat is the session of the same id among the working directory's sessions
(``$TAU_HOME/sessions/<directory key>/``, :mod:`tau.cli.session_store`), so a chat started in
the page is listed by ``tau sessions list``, resumed by ``tau -r`` / ``tau -c``, and a session
the terminal made opens in the page. What a :class:`tau.ui.Chat` holds beyond the transcript
is kept in the session's own entries (pi's JSONL v3):

* a paused run: the ``tau.paused_run`` custom entry the terminal writes too
  (:mod:`tau.cli.paused_run`), so an approval waiting in the page survives a restart and
  ``tau -c`` asks it in the terminal;
* the title given by a rename: a ``session_info`` entry (``name``); without one the title is
  the first prompt, as ``tau sessions list`` shows it;
* the page's approval answers and the last run's typed output: a ``custom`` entry of type
  :data:`WEB_CHAT`, written only when there is something to keep;
* the model of the newest answer: a ``model_change`` entry, as the terminal records it.

Every read and write goes through :class:`tau.cli.session.Session`, whose ``fcntl`` lock and
append-to-the-last-entry rule keep one file whole when two tabs, two servers or ``tau -c``
write it at once. A save appends only the messages the file does not hold yet. As for any
session, nothing is written until the chat has an answer.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pydantic_core import to_jsonable_python

from tau.agent import AgentMessage, dump_agent_message
from tau.ai import AssistantMessage, TextContent, UserMessage
from tau.cli.paused_run import PAUSED_RUN, paused_run, record_data
from tau.cli.session import Session, SessionError, new_session_path
from tau.cli.session_store import by_id, recent, sessions_dir
from tau.ui import Chat, ChatSummary

__all__ = ["WEB_CHAT", "SessionChatStore"]

WEB_CHAT = "tau.web_chat"
"""``customType`` of the entry keeping a chat's approval answers and typed output."""

_TITLE = 80


def _warn(text: str) -> None:
    print(f"tau: warning: {text}", file=sys.stderr)


def _first_prompt(messages: Sequence[AgentMessage]) -> str:
    for message in messages:
        if isinstance(message, UserMessage):
            content = message.content
            text = (
                content
                if isinstance(content, str)
                else " ".join(b.text for b in content if isinstance(b, TextContent))
            )
            return " ".join(text.split())[:_TITLE]
    return ""


def _output_name(recorded: Any) -> str | None:
    # The paused run's output type: a resume needs an agent with the same one.
    state = recorded.get("state") if isinstance(recorded, dict) else None
    output = state.get("output") if isinstance(state, dict) else None
    return output if isinstance(output, str) else None


def _extras(chat: Chat) -> dict[str, Any]:
    return {
        "approvals": dict(chat.approvals),
        "output": to_jsonable_python(chat.output, fallback=repr),
        "hasOutput": chat.has_output,
    }


class SessionChatStore:
    """A :class:`tau.ui.ChatStore` over the session files of ``cwd`` (see the module
    docstring). ``on_warning`` hears of damaged lines (default: a line on stderr)."""

    def __init__(self, cwd: Path, on_warning: Callable[[str], None] | None = None) -> None:
        self.cwd = cwd
        self.on_warning = on_warning

    def _open(self, chat_id: str) -> Session | None:
        path = by_id(self.cwd, chat_id)
        return Session.open(path, self.on_warning) if path is not None else None

    def _load(self, chat_id: str) -> Chat | None:
        try:
            session = self._open(chat_id)
        except SessionError as exc:
            # Not a session (any more): no chat by that id; a save says why again.
            (self.on_warning or _warn)(str(exc))
            return None
        if session is None:
            return None
        extras = session.custom.get(WEB_CHAT)
        extras = extras if isinstance(extras, dict) else {}
        approvals = extras.get("approvals")
        recorded = session.custom.get(PAUSED_RUN)
        return Chat(
            chat_id,
            messages=list(session.messages),
            state=paused_run(session.messages, recorded, output=_output_name(recorded)),
            approvals=dict(approvals) if isinstance(approvals, dict) else {},
            output=extras.get("output"),
            has_output=extras.get("hasOutput") is True,
            title=session.name or _first_prompt(session.history),
            updated=session.path.stat().st_mtime if session.on_disk else 0.0,
        )

    def _save(self, chat: Chat) -> None:
        try:
            session = self._open(chat.id)
        except SessionError as exc:
            # Its file is no session (any more): the chat goes on in a new file, which is
            # the newest of that id from now on; the other is left as it is.
            (self.on_warning or _warn)(f"{exc}; the chat is saved in a new session file")
            session = None
        if session is None:
            path = new_session_path(sessions_dir(self.cwd), chat.id)
            session = Session.open(path, self.on_warning)
            session.id = chat.id
        on_file = [dump_agent_message(m) for m in session.messages]
        common = 0
        for message, known in zip(chat.messages, on_file, strict=False):
            if dump_agent_message(message) != known:
                break
            common += 1
        new = chat.messages[common:]
        answers = [m for m in new if isinstance(m, AssistantMessage)]
        if answers:
            session.record_model(answers[-1].provider, answers[-1].model)
        for message in new:
            session.record_message(message)
        if chat.state is not None:
            data = record_data(chat.state)
            if data != session.custom.get(PAUSED_RUN):
                session.record_custom(PAUSED_RUN, data)
        extras = _extras(chat)
        if extras != session.custom.get(WEB_CHAT, _extras(Chat(chat.id))):
            session.record_custom(WEB_CHAT, extras)
        if chat.title and chat.title != (session.name or _first_prompt(session.history)):
            session.record_name(chat.title)
        session.flush()
        chat.updated = time.time()

    def _delete(self, chat_id: str) -> bool:
        path = by_id(self.cwd, chat_id)
        if path is None:
            return False
        path.unlink(missing_ok=True)
        return True

    def _list(self) -> list[ChatSummary]:
        return [
            ChatSummary(s.id, s.name or s.first_prompt[:_TITLE], s.modified)
            for s in recent(self.cwd)
            if s.usable and s.messages
        ]

    async def load(self, chat_id: str) -> Chat | None:
        """See :class:`tau.ui.ChatStore`."""
        return await asyncio.to_thread(self._load, chat_id)

    async def save(self, chat: Chat) -> None:
        """See :class:`tau.ui.ChatStore`."""
        await asyncio.to_thread(self._save, chat)

    async def delete(self, chat_id: str) -> bool:
        """See :class:`tau.ui.ChatStore`."""
        return await asyncio.to_thread(self._delete, chat_id)

    async def list(self) -> list[ChatSummary]:
        """See :class:`tau.ui.ChatStore`."""
        return await asyncio.to_thread(self._list)
