"""The chat page of ``tau web``: :func:`chat_app` plus a static page, shipped in the wheel.

The page (``tau/ui/static``: HTML, CSS and JavaScript, no framework, nothing fetched from
elsewhere) speaks the AI SDK's UI message stream to the app's ``/api/chat``: the chat list,
streaming Markdown with highlighted code, thinking folded, tool calls with their arguments
and output, approval buttons, image attachments, usage and cost.

With a ``token``, the page is served at ``/?token=<token>`` and sends it with every API
request; the static files (the same for everyone) need none.
"""

from __future__ import annotations

import hmac
from collections.abc import Callable
from importlib import resources
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Mount, Route

from tau.agent import Agent
from tau.proxy.sse import error_response
from tau.ui.app import chat_app
from tau.ui.store import ChatStore

__all__ = ["STATIC_FILES", "web_app"]

STATIC_FILES = {
    "app.js": "text/javascript; charset=utf-8",
    "style.css": "text/css; charset=utf-8",
}
"""The page's assets, by name, with their content types."""

_SECURITY_HEADERS = {
    # The page runs only its own script and talks only to its own origin.
    "content-security-policy": "default-src 'self'; img-src 'self' data:; style-src 'self'",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
}


def _asset(name: str) -> bytes:
    return resources.files(__package__).joinpath("static", name).read_bytes()


def web_app(
    make_agent: Callable[[], Agent[Any]],
    *,
    store: ChatStore | None = None,
    token: str | None = None,
    **options: Any,
) -> Starlette:
    """The page at ``/``, its assets under ``/static/`` and :func:`chat_app` (with
    ``store``, ``token`` and ``options``) under ``/api/``."""
    page = _asset("index.html")
    assets = {name: _asset(name) for name in STATIC_FILES}

    async def index(request: Request) -> Response:
        if token is not None:
            given = request.query_params.get("token", "").encode()
            if not hmac.compare_digest(given, token.encode()):
                return error_response(401, "open the page with its token: /?token=<token>")
        return Response(page, media_type="text/html; charset=utf-8", headers=_SECURITY_HEADERS)

    async def static(request: Request) -> Response:
        name = request.path_params["name"]
        if name not in assets:
            return error_response(404, f"no static file {name!r}")
        return Response(assets[name], media_type=STATIC_FILES[name], headers=_SECURITY_HEADERS)

    chats = chat_app(make_agent, store=store, token=token, **options)
    return Starlette(
        routes=[
            Route("/", index, methods=["GET"]),
            Route("/static/{name}", static, methods=["GET"]),
            Mount("/", app=chats),
        ]
    )
