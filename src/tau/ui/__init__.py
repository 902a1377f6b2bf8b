"""tau.ui: tau agents behind web pages (extra ``[web]``: ``pip install 'tau[web]'``).

* :func:`chat_app` — a Starlette app (mountable in FastAPI) serving chats by id from a
  :class:`ChatStore` (:class:`MemoryChatStore`, :class:`SQLiteChatStore`), in the AI SDK's
  UI message stream protocol (``useChat``) or AG-UI (CopilotKit);
* :class:`AISDKEncoder` — an agent run's events as the AI SDK's UI message stream chunks
  (protocol v1, the ``ai`` npm package version 7), :func:`to_ui_messages` a transcript as
  ``UIMessage``s, :func:`decode_ui_messages` / :func:`decode_decisions` the page's messages
  as tau messages and resume decisions;
* :class:`AGUIEncoder` — the same run as AG-UI events (on the ``ag-ui-protocol`` package);
* :func:`web_app` — :func:`chat_app` with the chat page of ``tau web`` (shipped in the wheel).

Guide: ``docs/guides/web-ui.md``.
"""

from tau.ui.ag_ui import AGUIEncoder
from tau.ui.ai_sdk import DONE_FRAME, UI_MESSAGE_STREAM_HEADERS, AISDKEncoder, sse_frame
from tau.ui.app import chat_app
from tau.ui.page import web_app
from tau.ui.parts import (
    UIMessageError,
    decode_decisions,
    decode_ui_messages,
    decode_user_message,
    to_ui_messages,
)
from tau.ui.store import Chat, ChatStore, ChatSummary, MemoryChatStore, SQLiteChatStore

__all__ = [
    "DONE_FRAME",
    "UI_MESSAGE_STREAM_HEADERS",
    "AGUIEncoder",
    "AISDKEncoder",
    "Chat",
    "ChatStore",
    "ChatSummary",
    "MemoryChatStore",
    "SQLiteChatStore",
    "UIMessageError",
    "chat_app",
    "decode_decisions",
    "decode_ui_messages",
    "decode_user_message",
    "sse_frame",
    "to_ui_messages",
    "web_app",
]
