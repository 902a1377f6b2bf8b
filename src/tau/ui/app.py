""":func:`chat_app`: a tau agent behind a web page, as a Starlette app (mountable in FastAPI).

Routes (under wherever the app is mounted):

* ``POST /api/chat``: one run of the chat named in the body, streamed in the app's
  protocol: the AI SDK's UI message stream (``useChat``'s request: ``{id, messages,
  trigger}``; see :mod:`tau.ui.ai_sdk`) or AG-UI (a ``RunAgentInput``; see
  :mod:`tau.ui.ag_ui`). The store's transcript is the chat's history: the page's last
  message is the new input (a user message), or, for a chat whose run is paused, the
  decisions (the assistant message with its approval responses and the outputs of the
  page's own tools).
* ``GET /api/options``: the models and thinking levels the page may pick;
* ``GET /api/chats``: the chat list; ``GET /api/chats/{id}``: a chat as ``UIMessage``s;
  ``PATCH /api/chats/{id}`` (``{"title": ...}``: rename it); ``DELETE /api/chats/{id}``.

Refused with a one-line ``{"error": ...}``: ``401`` without the token (when the app has one:
``Authorization: Bearer <token>``), ``413`` for a body over ``max_body_bytes``, ``408`` for a
body that does not arrive within ``body_timeout`` seconds, ``400`` for a malformed request or
message, ``404`` for an unknown chat, ``409`` while another request runs the same chat, for
a new message while its run waits for decisions, and for decisions when nothing waits.

A client that disconnects aborts its run; one that reads nothing for ``send_timeout``
seconds is dropped (the proxy's rules, :mod:`tau.proxy.sse`). Either way the run's
transcript up to the abort is saved.
"""

from __future__ import annotations

import hmac
import re
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Literal

try:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response
    from starlette.routing import Route
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError("tau.ui needs the [web] extra: pip install 'tau[web]'") from exc

from tau.agent import Agent, RunResult
from tau.ai import Model, TextContent, UserMessage
from tau.proxy.sse import EventStreamResponse, HTTPError, error_response, read_json
from tau.ui.parts import UIMessageError, shown, to_ui_messages
from tau.ui.protocols import PreparedRun, Protocol, ai_sdk_protocol
from tau.ui.store import Chat, ChatStore, MemoryChatStore

__all__ = [
    "DEFAULT_BODY_TIMEOUT",
    "DEFAULT_MAX_BODY_BYTES",
    "DEFAULT_MAX_BUFFERED_EVENTS",
    "DEFAULT_SEND_TIMEOUT",
    "chat_app",
]

DEFAULT_MAX_BODY_BYTES = 16 * 1024 * 1024
"""The largest request body (images travel in it as data URLs)."""
DEFAULT_BODY_TIMEOUT = 30.0
"""Seconds a client has to send its whole request body (else ``408``)."""
DEFAULT_MAX_BUFFERED_EVENTS = 256
"""Events a client may leave unread before its run waits for it."""
DEFAULT_SEND_TIMEOUT = 60.0
"""Seconds a client may accept nothing before it is dropped (and its run aborted)."""

_CHAT_ID = re.compile(r"[A-Za-z0-9_.:-]{1,128}")


def check_chat_id(value: Any, field: str) -> str:
    """``value`` if it is a usable chat id, else a 400."""
    if not isinstance(value, str) or not _CHAT_ID.fullmatch(value):
        raise HTTPError(400, f"{field} must be 1-128 letters, digits or _.:-")
    return value


def chat_app(
    make_agent: Callable[[], Agent[Any]],
    *,
    store: ChatStore | None = None,
    protocol: Literal["ai-sdk", "ag-ui"] = "ai-sdk",
    token: str | None = None,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    body_timeout: float | None = DEFAULT_BODY_TIMEOUT,
    send_timeout: float | None = DEFAULT_SEND_TIMEOUT,
    max_buffered_events: int = DEFAULT_MAX_BUFFERED_EVENTS,
    models: Mapping[str, Model] | None = None,
) -> Starlette:
    """The ASGI app serving chats with agents from ``make_agent()`` (one per request, built
    the same way each time: a paused run resumes on another one). ``store`` keeps the chats
    (a :class:`~tau.ui.MemoryChatStore` by default); ``protocol`` is the page's;
    ``token``, when given, must come with every request. ``models`` are the models the page
    may pick by name (the request's ``model``; AG-UI: ``forwardedProps.model``), as the
    proxy's allow-list; a ``thinking`` level may be picked too. ``GET /api/options`` lists
    both. See the module docstring."""
    if protocol == "ai-sdk":
        speaks: Protocol = ai_sdk_protocol()
    elif protocol == "ag-ui":
        from tau.ui.ag_ui import ag_ui_protocol

        speaks = ag_ui_protocol()
    else:
        raise ValueError(f"protocol must be 'ai-sdk' or 'ag-ui', not {protocol!r}")
    chats: ChatStore = store if store is not None else MemoryChatStore()
    expected = f"Bearer {token}".encode() if token else None
    busy: set[str] = set()
    offered: Mapping[str, Model] = dict(models or {})

    def guarded(
        handler: Callable[[Request], Awaitable[Response]],
    ) -> Callable[[Request], Awaitable[Response]]:
        async def endpoint(request: Request) -> Response:
            if expected is not None:
                given = request.headers.get("authorization", "").encode()
                if not hmac.compare_digest(given, expected):
                    return error_response(
                        401,
                        "missing or invalid bearer token",
                        {"www-authenticate": "Bearer", "connection": "close"},
                    )
            try:
                return await handler(request)
            except HTTPError as exc:
                return error_response(exc.status, str(exc))
            except UIMessageError as exc:
                return error_response(400, str(exc))

        return endpoint

    async def run_chat(request: Request) -> Response:
        body = await read_json(request, max_body_bytes, body_timeout)
        chat_id = check_chat_id(speaks.chat_id(body), speaks.chat_id_field)
        if chat_id in busy:
            raise HTTPError(409, f"chat {chat_id!r} is running: wait for its run to end")
        busy.add(chat_id)
        try:
            return await _start(chat_id, body)
        except BaseException:
            busy.discard(chat_id)
            raise

    async def _start(chat_id: str, body: dict[str, Any]) -> Response:
        chat = await chats.load(chat_id) or Chat(chat_id)
        agent = make_agent()
        _choose(agent, speaks.choices(body), offered)
        agent.replace_messages(chat.messages)
        prepared: PreparedRun = speaks.prepare(chat, agent, body)

        async def on_done(result: RunResult[Any] | None) -> None:
            try:
                if result is None and stream.error is not None:
                    return  # refused before it ran (a bad resume): the chat stays as it was
                chat.messages = list(agent.state.messages)
                chat.state = result.state if result is not None else None
                chat.approvals.update(prepared.approvals)
                if result is not None:
                    chat.output, chat.has_output = result.output, result.has_output
                if not chat.title:
                    chat.title = _title(chat)
                await chats.save(chat)
            finally:
                busy.discard(chat_id)

        stream = prepared.stream(agent, on_done, max_buffered_events)
        await stream.start()
        if stream.error is not None:
            await stream.close()
            return error_response(400, str(stream.error))
        return EventStreamResponse(
            stream.frames(),
            send_timeout=send_timeout,
            on_close=stream.close,
            headers=speaks.headers,
        )

    async def options(request: Request) -> Response:
        return JSONResponse({"models": list(offered), "thinkingLevels": list(THINKING_LEVELS)})

    async def list_chats(request: Request) -> Response:
        summaries = await chats.list()
        return JSONResponse(
            [{"id": s.id, "title": s.title, "updated": s.updated} for s in summaries]
        )

    async def get_chat(request: Request) -> Response:
        chat_id = check_chat_id(request.path_params["chat_id"], "the chat id")
        chat = await chats.load(chat_id)
        if chat is None:
            raise HTTPError(404, f"no chat {chat_id!r}")
        pending = chat.state.pending if chat.state is not None else []
        messages = to_ui_messages(
            chat.messages,
            approvals=chat.approvals,
            pending=pending,
            output=chat.output,
            has_output=chat.has_output,
        )
        return JSONResponse(
            {
                "id": chat.id,
                "title": chat.title,
                "messages": messages,
                "paused": chat.state is not None,
                "running": chat_id in busy,
            }
        )

    async def rename_chat(request: Request) -> Response:
        chat_id = check_chat_id(request.path_params["chat_id"], "the chat id")
        data = await read_json(request, 64 * 1024, body_timeout)
        title = data.get("title")
        if not isinstance(title, str) or not 0 < len(title.strip()) <= 200:
            raise HTTPError(400, "title must be a non-empty string of at most 200 characters")
        if chat_id in busy:
            raise HTTPError(409, f"chat {chat_id!r} is running: wait for its run to end")
        chat = await chats.load(chat_id)
        if chat is None:
            raise HTTPError(404, f"no chat {chat_id!r}")
        chat.title = " ".join(title.split())
        await chats.save(chat)
        return JSONResponse({"id": chat.id, "title": chat.title})

    async def delete_chat(request: Request) -> Response:
        chat_id = check_chat_id(request.path_params["chat_id"], "the chat id")
        if chat_id in busy:
            raise HTTPError(409, f"chat {chat_id!r} is running: wait for its run to end")
        if not await chats.delete(chat_id):
            raise HTTPError(404, f"no chat {chat_id!r}")
        return JSONResponse({"deleted": chat_id})

    return Starlette(
        routes=[
            Route("/api/chat", guarded(run_chat), methods=["POST"]),
            Route("/api/chats", guarded(list_chats), methods=["GET"]),
            Route("/api/options", guarded(options), methods=["GET"]),
            Route("/api/chats/{chat_id}", guarded(get_chat), methods=["GET"]),
            Route("/api/chats/{chat_id}", guarded(rename_chat), methods=["PATCH"]),
            Route("/api/chats/{chat_id}", guarded(delete_chat), methods=["DELETE"]),
        ]
    )


THINKING_LEVELS = ("off", "minimal", "low", "medium", "high", "xhigh")
"""The thinking levels a page may pick (``thinking`` in the request)."""


def _choose(agent: Agent[Any], choices: Mapping[str, Any], models: Mapping[str, Model]) -> None:
    """Apply the page's ``model`` and ``thinking`` picks (400 for one not offered)."""
    name = choices.get("model")
    if name is not None:
        model = models.get(name) if isinstance(name, str) else None
        if model is None:
            offered = ", ".join(models) or "none"
            raise HTTPError(400, f"model {shown(name)} is not offered here (offered: {offered})")
        agent.set_model(model)
    level = choices.get("thinking")
    if level is not None:
        if level not in THINKING_LEVELS:
            raise HTTPError(400, f"thinking must be one of {', '.join(THINKING_LEVELS)}")
        agent.set_thinking_level(level)


def _title(chat: Chat) -> str:
    for message in chat.messages:
        if isinstance(message, UserMessage):
            content = message.content
            text = (
                content
                if isinstance(content, str)
                else " ".join(b.text for b in content if isinstance(b, TextContent))
            )
            return " ".join(text.split())[:80]
    return ""
