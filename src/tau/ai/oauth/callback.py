"""The one-shot HTTP server a browser login redirects to, on 127.0.0.1 only.

It answers one path, accepts a redirect only when its ``state`` is the login's (anything else
is refused with 400 and the login keeps waiting), and hands the code to the waiting login.
Shared by the PKCE logins (OpenAI Codex, Gemini CLI, Antigravity).
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

from tau.ai.oauth.base import LoginCallbacks, OAuthError

__all__ = ["CallbackServer", "authorize_in_browser", "parse_pasted", "wait_for_code"]

_DONE_PAGE = (
    b"<!doctype html><html><head><meta charset='utf-8'><title>Logged in</title></head>"
    b"<body><p>Authentication successful. Return to your terminal to continue.</p></body></html>"
)


class CallbackServer:
    """Listens on ``127.0.0.1:port`` (0: any free port) for ``GET path?code=…&state=…``."""

    def __init__(self, path: str, state: str, port: int) -> None:
        self.path = path
        self.state = state
        self.codes: queue.Queue[tuple[str, str]] = queue.Queue()
        """``("callback", code)`` from the browser, ``("paste", text)`` from a person."""
        handler = _handler(self)
        try:
            self._server: ThreadingHTTPServer | None = ThreadingHTTPServer(
                ("127.0.0.1", port), handler
            )
        except OSError:
            self._server = None  # the port is taken: the login falls back to a pasted code
            self.port = port
            return
        self._server.daemon_threads = True
        self.port = int(self._server.server_address[1])
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def listening(self) -> bool:
        """Whether the port could be bound."""
        return self._server is not None

    def close(self) -> None:
        """Stop listening."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None


def _handler(owner: CallbackServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            url = urlsplit(self.path)
            if url.path != owner.path:
                self._answer(404, b"Not found")
                return
            query = parse_qs(url.query)
            if query.get("state", [""])[0] != owner.state:
                self._answer(400, b"State mismatch")
                return
            code = query.get("code", [""])[0]
            if not code:
                self._answer(400, b"Missing authorization code")
                return
            self._answer(200, _DONE_PAGE, "text/html; charset=utf-8")
            owner.codes.put(("callback", code))

        def _answer(self, status: int, body: bytes, kind: str = "text/plain") -> None:
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            del format, args  # the URL holds the code: never logged

    return Handler


def parse_pasted(text: str) -> tuple[str | None, str | None]:
    """``(code, state)`` from what a person pasted: the redirect URL, ``code#state``, a query
    string, or the bare code."""
    value = text.strip()
    if not value:
        return None, None
    if "://" in value:
        query = parse_qs(urlsplit(value).query)
        return query.get("code", [None])[0], query.get("state", [None])[0]
    if "#" in value:
        code, _, state = value.partition("#")
        return code or None, state or None
    if "code=" in value:
        query = parse_qs(value)
        return query.get("code", [None])[0], query.get("state", [None])[0]
    return value, None


def wait_for_code(
    server: CallbackServer, callbacks: LoginCallbacks, who: str, timeout: float
) -> str:
    """The authorization code: from the browser's redirect, or pasted (``on_manual_code``
    alongside the server, ``on_prompt`` when the port could not be bound or nothing came in
    ``timeout`` seconds). A pasted redirect whose state is not the login's is refused."""
    if callbacks.on_manual_code is not None:
        ask = callbacks.on_manual_code

        def paste() -> None:
            try:
                server.codes.put(("paste", ask()))
            except Exception:  # a cancelled prompt: the browser may still answer
                return

        threading.Thread(target=paste, daemon=True).start()
    text: str | None = None
    if server.listening or callbacks.on_manual_code is not None:
        try:
            kind, text = server.codes.get(timeout=timeout)
        except queue.Empty:
            text = None
        else:
            if kind == "callback":
                return text
    if text is None:
        text = callbacks.on_prompt(
            "Paste the authorization code (or the full redirect URL):", False
        )
    code, state = parse_pasted(text)
    if state is not None and state != server.state:
        raise OAuthError(f"{who}: state mismatch: the pasted redirect is not from this login")
    if not code:
        raise OAuthError(f"{who}: no authorization code")
    return code


def authorize_in_browser(
    callbacks: LoginCallbacks,
    *,
    who: str,
    url: Callable[[str], str],
    path: str,
    port: int,
    state: str,
    timeout: float,
    instructions: str = "A browser window should open. Complete login to finish.",
) -> tuple[str, str]:
    """Listen on ``127.0.0.1:port`` for ``path``, show ``url(redirect_uri)`` and return
    ``(code, redirect_uri)``: the browser's code, or a pasted one (see :func:`wait_for_code`).
    The redirect URI names ``localhost``, the host the providers register for desktop apps."""
    server = CallbackServer(path, state, port)
    try:
        redirect = f"http://localhost:{server.port}{path}"
        callbacks.on_auth(url(redirect), instructions)
        return wait_for_code(server, callbacks, who, timeout), redirect
    finally:
        server.close()
