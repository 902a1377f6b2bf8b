"""Fake OAuth servers on 127.0.0.1 that check what the real ones check.

* :class:`FakeGitHub`: the device-code flow (``authorization_pending`` and ``slow_down`` as
  scripted, the device code and client id checked) and the Copilot token exchange (the GitHub
  token checked, a revoked one refused with 401).
* :class:`FakeOpenAIAuth`: PKCE (the verifier checked against the challenge the authorize
  request sent), redirects only to a localhost URI, one use per code, and refresh tokens that
  rotate (an old or revoked one refused with ``invalid_grant``).
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit


class FakeServer:
    """A threaded HTTP server on 127.0.0.1 dispatching to ``handle(method, path, query, form,
    headers) -> (status, body, extra headers)``."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def _run(self, method: str) -> None:
                url = urlsplit(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length).decode() if length else ""
                if raw.startswith("{"):
                    form = {k: str(v) for k, v in json.loads(raw).items() if v is not None}
                else:
                    form = {k: v[0] for k, v in parse_qs(raw).items()}
                query = {k: v[0] for k, v in parse_qs(url.query).items()}
                status, body, extra = owner.handle(
                    method, url.path, query, form, {k.lower(): v for k, v in self.headers.items()}
                )
                data = body if isinstance(body, bytes) else json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", extra.pop("Content-Type", "application/json"))
                self.send_header("Content-Length", str(len(data)))
                for k, v in extra.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                self._run("GET")

            def do_POST(self) -> None:
                self._run("POST")

            def log_message(self, format: str, *args: object) -> None:
                del format, args

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def handle(
        self,
        method: str,
        path: str,
        query: dict[str, str],
        form: dict[str, str],
        headers: dict[str, str],
    ) -> tuple[int, Any, dict[str, str]]:
        raise NotImplementedError

    @contextmanager
    def running(self) -> Iterator[Any]:
        self.thread.start()
        try:
            yield self
        finally:
            self.server.shutdown()
            self.server.server_close()


COPILOT_CLIENT_ID = "Iv1.b507a08c87ecfe98"


class FakeGitHub(FakeServer):
    """github.com's device flow and api.github.com's Copilot token, on one port."""

    def __init__(
        self, polls: list[str] | None = None, slow_down_interval: int | None = 10, interval: int = 5
    ) -> None:
        super().__init__()
        self.interval = interval
        self.chat_auth: list[str] = []
        self.polls = list(
            polls or []
        )  # answers before the token: "authorization_pending"/"slow_down"
        self.slow_down_interval = slow_down_interval
        self.device_code = secrets.token_hex(8)
        self.github_token = "gho_" + secrets.token_hex(12)
        self.revoked: set[str] = set()
        self.poll_count = 0
        self.exchanges = 0
        self.api_host = "proxy.business.githubcopilot.com"

    def handle(self, method, path, query, form, headers):  # type: ignore[no-untyped-def]
        if path == "/login/device/code" and method == "POST":
            if form.get("client_id") != COPILOT_CLIENT_ID or form.get("scope") != "read:user":
                return 400, {"error": "invalid_client"}, {}
            return (
                200,
                {
                    "device_code": self.device_code,
                    "user_code": "ABCD-1234",
                    "verification_uri": "https://github.com/login/device",
                    "interval": self.interval,
                    "expires_in": 900,
                },
                {},
            )
        if path == "/login/oauth/access_token" and method == "POST":
            if form.get("grant_type") != "urn:ietf:params:oauth:grant-type:device_code":
                return 200, {"error": "unsupported_grant_type"}, {}
            if form.get("device_code") != self.device_code:
                return 200, {"error": "bad_verification_code"}, {}
            with self.lock:
                self.poll_count += 1
                answer = self.polls.pop(0) if self.polls else None
            if answer == "slow_down":
                body: dict[str, Any] = {"error": "slow_down"}
                if self.slow_down_interval:
                    body["interval"] = self.slow_down_interval
                return 200, body, {}
            if answer is not None:
                return 200, {"error": answer}, {}
            return 200, {"access_token": self.github_token, "token_type": "bearer"}, {}
        if path == "/copilot_internal/v2/token" and method == "GET":
            auth = headers.get("authorization", "")
            token = auth.removeprefix("Bearer ")
            if token != self.github_token or token in self.revoked:
                return 401, {"message": "Bad credentials"}, {}
            if headers.get("editor-version") is None:
                return 400, {"message": "missing editor version"}, {}
            with self.lock:
                self.exchanges += 1
                n = self.exchanges
            return (
                200,
                {
                    "token": f"tid=t{n};exp=1;sku=x;proxy-ep={self.api_host};8kp=1:sig{n}",
                    "expires_at": int(time.time()) + 1800,
                    "refresh_in": 1500,
                },
                {},
            )
        if path == "/chat/completions" and method == "POST":
            # The Copilot API: answers only the latest Copilot token this server issued.
            auth = headers.get("authorization", "").removeprefix("Bearer ")
            self.chat_auth.append(auth)
            if not auth.startswith(f"tid=t{self.exchanges};") or not headers.get(
                "copilot-integration-id"
            ):
                return 401, {"error": {"message": "unauthorized"}}, {}
            chunks = [
                {"id": "c1", "choices": [{"index": 0, "delta": {"role": "assistant", "content": "Hello from Copilot"}}]},
                {"id": "c1", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
                 "usage": {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8}},
            ]  # fmt: skip
            text = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
            return 200, text.encode(), {"Content-Type": "text/event-stream"}
        return 404, {"error": "not_found"}, {}


def make_jwt(claims: dict[str, Any]) -> str:
    def part(obj: Any) -> str:
        return base64.urlsafe_b64encode(json.dumps(obj).encode()).rstrip(b"=").decode()

    return f"{part({'alg': 'none'})}.{part(claims)}.sig"


CODEX_CLIENT_ID = "app_EMoamEEZ73f0CkXaXp7hrann"


class FakeOpenAIAuth(FakeServer):
    """auth.openai.com's authorize and token endpoints."""

    def __init__(self, expires_in: int = 3600, refresh_delay: float = 0.0) -> None:
        super().__init__()
        self.expires_in = expires_in
        self.refresh_delay = refresh_delay
        self.codes: dict[str, tuple[str, str]] = {}  # code -> (challenge, redirect_uri)
        self.valid_refresh: set[str] = set()
        self.refreshes = 0
        self.issued = 0
        self.account = "acct-" + secrets.token_hex(4)

    def _issue(self) -> dict[str, Any]:
        self.issued += 1
        refresh = f"rt_{self.issued}_{secrets.token_hex(6)}"
        self.valid_refresh.add(refresh)
        access = make_jwt(
            {"https://api.openai.com/auth": {"chatgpt_account_id": self.account}, "n": self.issued}
        )
        return {"access_token": access, "refresh_token": refresh, "expires_in": self.expires_in}

    def handle(self, method, path, query, form, headers):  # type: ignore[no-untyped-def]
        if path == "/oauth/authorize" and method == "GET":
            redirect = query.get("redirect_uri", "")
            host = urlsplit(redirect).hostname
            if (
                query.get("client_id") != CODEX_CLIENT_ID
                or query.get("response_type") != "code"
                or query.get("code_challenge_method") != "S256"
                or not query.get("code_challenge")
                or not query.get("state")
            ):
                return 400, {"error": "invalid_request"}, {}
            if host not in ("localhost", "127.0.0.1") or urlsplit(redirect).scheme != "http":
                return 400, {"error": "invalid_redirect_uri"}, {}
            code = "ac_" + secrets.token_hex(8)
            with self.lock:
                self.codes[code] = (query["code_challenge"], redirect)
            location = f"{redirect}?{urlencode({'code': code, 'state': query['state']})}"
            return 302, b"", {"Location": location}
        if path == "/oauth/token" and method == "POST":
            if form.get("client_id") != CODEX_CLIENT_ID:
                return 401, {"error": "invalid_client"}, {}
            grant = form.get("grant_type")
            with self.lock:
                if grant == "authorization_code":
                    found = self.codes.pop(form.get("code", ""), None)
                    if found is None:
                        return 400, {"error": "invalid_grant"}, {}
                    challenge, redirect = found
                    verifier = form.get("code_verifier", "")
                    made = (
                        base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest())
                        .rstrip(b"=")
                        .decode()
                    )
                    if made != challenge or form.get("redirect_uri") != redirect:
                        return 400, {"error": "invalid_grant"}, {}
                    return 200, self._issue(), {}
                if grant == "refresh_token":
                    token = form.get("refresh_token", "")
                    if token not in self.valid_refresh:
                        return 400, {"error": "invalid_grant"}, {}
                    self.valid_refresh.discard(token)  # rotation: one use each
                    self.refreshes += 1
                    if self.refresh_delay:
                        time.sleep(self.refresh_delay)
                    return 200, self._issue(), {}
            return 400, {"error": "unsupported_grant_type"}, {}
        return 404, {"error": "not_found"}, {}


def s256(verifier: str) -> str:
    return (
        base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    )


class FakeGoogle(FakeServer):
    """accounts.google.com, oauth2.googleapis.com, userinfo and Cloud Code Assist's project
    calls: ``project`` "existing" (the account has one) or "new" (onboarded, polled once)."""

    def __init__(self, client_id: str, client_secret: str, project: str = "existing") -> None:
        super().__init__()
        self.client_id = client_id
        self.client_secret = client_secret
        self.project = project
        self.codes: dict[str, tuple[str, str]] = {}
        self.revoked: set[str] = set()
        self.polls = 0
        self.load_bodies: list[dict[str, str]] = []

    def handle(self, method, path, query, form, headers):  # type: ignore[no-untyped-def]
        if path == "/auth":
            redirect = query.get("redirect_uri", "")
            if (
                query.get("client_id") != self.client_id
                or query.get("code_challenge_method") != "S256"
                or query.get("access_type") != "offline"
                or urlsplit(redirect).hostname not in ("localhost", "127.0.0.1")
            ):
                return 400, {"error": "invalid_request"}, {}
            code = "4/" + secrets.token_hex(6)
            self.codes[code] = (query["code_challenge"], redirect)
            location = f"{redirect}?{urlencode({'code': code, 'state': query['state']})}"
            return 302, b"", {"Location": location}
        if path == "/token":
            if (
                form.get("client_id") != self.client_id
                or form.get("client_secret") != self.client_secret
            ):
                return 401, {"error": "invalid_client"}, {}
            if form.get("grant_type") == "authorization_code":
                found = self.codes.pop(form.get("code", ""), None)
                if (
                    found is None
                    or s256(form.get("code_verifier", "")) != found[0]
                    or form.get("redirect_uri") != found[1]
                ):
                    return 400, {"error": "invalid_grant"}, {}
                return (
                    200,
                    {
                        "access_token": "ya29.first",
                        "refresh_token": "1//refresh",
                        "expires_in": 3599,
                    },
                    {},
                )
            if form.get("grant_type") == "refresh_token":
                if form.get("refresh_token") in self.revoked:
                    return (
                        400,
                        {
                            "error": "invalid_grant",
                            "error_description": "Token has been expired or revoked.",
                        },
                        {},
                    )
                return 200, {"access_token": "ya29.renewed", "expires_in": 3599}, {}
            return 400, {"error": "unsupported_grant_type"}, {}
        if headers.get("authorization") != "Bearer ya29.first":
            return 401, {"error": {"code": 401, "status": "UNAUTHENTICATED"}}, {}
        if path == "/userinfo":
            return 200, {"email": "someone@example.com"}, {}
        if path == "/v1internal:loadCodeAssist":
            self.load_bodies.append(form)
            if self.project == "existing":
                return (
                    200,
                    {
                        "currentTier": {"id": "free-tier"},
                        "cloudaicompanionProject": "proj-existing",
                    },
                    {},
                )
            return 200, {"allowedTiers": [{"id": "free-tier", "isDefault": True}]}, {}
        if path == "/v1internal:onboardUser":
            if form.get("tierId") != "free-tier":
                return 400, {"error": {"message": "bad tier"}}, {}
            return 200, {"name": "operations/op-1", "done": False}, {}
        if path == "/v1internal/operations/op-1":
            self.polls += 1
            done = self.polls >= 2
            body: dict[str, Any] = {"name": "operations/op-1", "done": done}
            if done:
                body["response"] = {"cloudaicompanionProject": {"id": "proj-new"}}
            return 200, body, {}
        return 404, {"error": "not_found"}, {}


ANTHROPIC_CLIENT_ID = "9d1c250a-e61b-44d9-88ed-5944d1962f5e"


class FakeAnthropic(FakeServer):
    """claude.ai's authorize page and the JSON token endpoint (state is the verifier)."""

    def __init__(self) -> None:
        super().__init__()
        self.codes: dict[str, tuple[str, str, str]] = {}
        self.valid_refresh: set[str] = set()

    def handle(self, method, path, query, form, headers):  # type: ignore[no-untyped-def]
        if path == "/oauth/authorize":
            redirect = query.get("redirect_uri", "")
            if query.get("client_id") != ANTHROPIC_CLIENT_ID or query.get("code") != "true":
                return 400, {"error": "invalid_request"}, {}
            if urlsplit(redirect).hostname not in ("localhost", "127.0.0.1"):
                return 400, {"error": "invalid_redirect_uri"}, {}
            code = "code_" + secrets.token_hex(6)
            self.codes[code] = (query["code_challenge"], redirect, query["state"])
            location = f"{redirect}?{urlencode({'code': code, 'state': query['state']})}"
            return 302, b"", {"Location": location}
        if path == "/v1/oauth/token" and headers.get("content-type", "").startswith(
            "application/json"
        ):
            if form.get("client_id") != ANTHROPIC_CLIENT_ID:
                return 401, {"error": {"type": "invalid_client"}}, {}
            grant = form.get("grant_type")
            if grant == "authorization_code":
                found = self.codes.pop(form.get("code", ""), None)
                if (
                    found is None
                    or s256(form.get("code_verifier", "")) != found[0]
                    or form.get("redirect_uri") != found[1]
                    or form.get("state") != found[2]
                ):
                    return 400, {"error": {"type": "invalid_grant"}}, {}
            elif grant == "refresh_token":
                if form.get("refresh_token") not in self.valid_refresh:
                    return 400, {"error": {"type": "invalid_grant"}}, {}
                self.valid_refresh.discard(form["refresh_token"])
            else:
                return 400, {"error": {"type": "unsupported_grant_type"}}, {}
            refresh = "sk-ant-ort01-" + secrets.token_hex(6)
            self.valid_refresh.add(refresh)
            return (
                200,
                {
                    "access_token": "sk-ant-oat01-" + secrets.token_hex(6),
                    "refresh_token": refresh,
                    "expires_in": 28800,
                },
                {},
            )
        return 404, {"error": "not_found"}, {}
