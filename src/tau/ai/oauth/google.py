"""Google's logins for Cloud Code Assist: Gemini CLI and Antigravity (PKCE with a callback
server on 127.0.0.1, then the Cloud project the requests are billed to).

Reference: pi's ``packages/ai/src/utils/oauth/google-gemini-cli.ts`` and
``google-antigravity.ts``. Gemini CLI finds the user's Code Assist project and, for a new user,
onboards one (a long-running operation, polled); Antigravity asks its endpoints and falls back
to a shared default project. The key requests send is ``{"token", "projectId"}`` as JSON.
"""

from __future__ import annotations

import base64
import json
import os
import time
from abc import abstractmethod
from collections.abc import Callable
from typing import Any
from urllib.parse import urlencode

from tau.ai.oauth.base import (
    LoginCallbacks,
    OAuthCredentials,
    OAuthError,
    OAuthProvider,
    Pkce,
    post_form,
    request_json,
)
from tau.ai.oauth.callback import authorize_in_browser

__all__ = ["AntigravityOAuth", "GeminiCliOAuth", "GoogleOAuth"]

_SCOPES = (
    "https://www.googleapis.com/auth/cloud-platform",
    "https://www.googleapis.com/auth/userinfo.email",
    "https://www.googleapis.com/auth/userinfo.profile",
)
_METADATA = {
    "ideType": "IDE_UNSPECIFIED",
    "platform": "PLATFORM_UNSPECIFIED",
    "pluginType": "GEMINI",
}
_EARLY = 300.0  # Google's tokens count as expiring 5 minutes early, as pi does
_PROJECT_HINT = (
    "set GOOGLE_CLOUD_PROJECT (or GOOGLE_CLOUD_PROJECT_ID) to your project; see "
    "https://goo.gle/gemini-cli-auth-docs#workspace-gca"
)


def _public(encoded: str) -> str:
    # Installed-app client credentials: public by design (every copy of the app ships them).
    return base64.b64decode(encoded).decode()


class GoogleOAuth(OAuthProvider):
    """The Google login both subscriptions share; a subclass names its client and finds its
    project. ``auth_url``, ``token_url``, ``userinfo_url`` and ``code_assist_url`` are the
    endpoints (tests point them at 127.0.0.1)."""

    uses_callback_server = True
    client_id = ""
    client_secret = ""
    scopes: tuple[str, ...] = _SCOPES
    callback_path = ""
    default_port = 0

    def __init__(
        self,
        *,
        auth_url: str = "https://accounts.google.com/o/oauth2/v2/auth",
        token_url: str = "https://oauth2.googleapis.com/token",
        userinfo_url: str = "https://www.googleapis.com/oauth2/v1/userinfo?alt=json",
        code_assist_url: str = "https://cloudcode-pa.googleapis.com",
        callback_port: int | None = None,
        timeout: float = 300.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.auth_url = auth_url
        self.token_url = token_url
        self.userinfo_url = userinfo_url
        self.code_assist_url = code_assist_url.rstrip("/")
        self.callback_port = self.default_port if callback_port is None else callback_port
        self.timeout = timeout
        self._sleep = sleep

    def login(self, callbacks: LoginCallbacks) -> OAuthCredentials:
        """Sign in with Google in the browser, then find (or set up) the Cloud project."""
        pkce = Pkce.new()

        def url(redirect: str) -> str:
            query = {
                "client_id": self.client_id,
                "response_type": "code",
                "redirect_uri": redirect,
                "scope": " ".join(self.scopes),
                "code_challenge": pkce.challenge,
                "code_challenge_method": "S256",
                "state": pkce.verifier,
                "access_type": "offline",
                "prompt": "consent",
            }
            return f"{self.auth_url}?{urlencode(query)}"

        code, redirect = authorize_in_browser(
            callbacks,
            who=f"{self.name} login",
            url=url,
            path=self.callback_path,
            port=self.callback_port,
            state=pkce.verifier,
            timeout=self.timeout,
            instructions="Complete the sign-in in your browser.",
        )
        callbacks.on_progress("Exchanging the authorization code…")
        status, answer = post_form(
            self.token_url,
            {
                "client_id": self.client_id,
                "client_secret": self.client_secret,
                "code": code,
                "grant_type": "authorization_code",
                "redirect_uri": redirect,
                "code_verifier": pkce.verifier,
            },
            who=f"{self.name} login",
            accept_errors=True,
        )
        if status >= 400:
            raise OAuthError(
                f"{self.name} login: the code exchange was refused ({_error(answer, status)})"
            )
        access, refresh = answer.get("access_token"), answer.get("refresh_token")
        if not isinstance(access, str) or not isinstance(refresh, str) or not refresh:
            raise OAuthError(f"{self.name} login: no refresh token was granted; try again")
        extra: dict[str, Any] = {}
        email = self._email(access)
        if email:
            extra["email"] = email
        extra["projectId"] = self.find_project(access, callbacks.on_progress)
        return OAuthCredentials(access, refresh, _expires(answer), extra)

    def refresh(self, credentials: OAuthCredentials) -> OAuthCredentials:
        """A new access token (Google keeps the refresh token unless it sends another)."""
        status, answer = post_form(
            self.token_url,
            {
                "client_id": self.client_id,
                "client_secret": self.client_secret,
                "refresh_token": credentials.refresh,
                "grant_type": "refresh_token",
            },
            who=self.name,
            accept_errors=True,
        )
        if status >= 400:
            raise self.refused(_error(answer, status))
        access = answer.get("access_token")
        if not isinstance(access, str):
            raise OAuthError(f"{self.name}: the refresh answer has no access_token")
        refresh = answer.get("refresh_token")
        return OAuthCredentials(
            access,
            refresh if isinstance(refresh, str) and refresh else credentials.refresh,
            _expires(answer),
            dict(credentials.extra),
        )

    def api_key(self, credentials: OAuthCredentials) -> str:
        """``{"token": <access token>, "projectId": <project>}``: what the
        ``google-gemini-cli`` adapter reads."""
        return json.dumps(
            {"token": credentials.access, "projectId": credentials.extra.get("projectId")}
        )

    @abstractmethod
    def find_project(self, access: str, progress: Callable[[str], None]) -> str:
        """The Cloud project requests are billed to."""

    def _email(self, access: str) -> str | None:
        try:
            _, answer = request_json(
                "GET",
                self.userinfo_url,
                who=self.name,
                headers={"Authorization": f"Bearer {access}"},
            )
        except OAuthError:
            return None  # the email only labels the login in `tau auth list`
        email = answer.get("email")
        return email if isinstance(email, str) else None

    def _code_assist(
        self, url: str, access: str, body: Any = None, method: str = "POST"
    ) -> tuple[int, dict[str, Any]]:
        headers = {
            "Authorization": f"Bearer {access}",
            "Content-Type": "application/json",
            "User-Agent": "google-api-nodejs-client/9.15.1",
            "X-Goog-Api-Client": "gl-node/22.17.0",
            "Client-Metadata": json.dumps(_METADATA, separators=(",", ":")),
        }
        return request_json(
            method, url, who=f"{self.name} login", headers=headers, body=body, accept_errors=True
        )


class GeminiCliOAuth(GoogleOAuth):
    """Gemini CLI's login (Google Cloud Code Assist, free or Workspace tier)."""

    id = "google-gemini-cli"
    name = "Google Cloud Code Assist (Gemini CLI)"
    client_id = _public(
        "NjgxMjU1ODA5Mzk1LW9vOGZ0Mm9wcmRybnA5ZTNhcWY2YXYzaG1kaWIxMzVqLmFwcHMuZ29vZ2xldXNlcmNvbnRlbnQuY29t"
    )
    client_secret = _public("R09DU1BYLTR1SGdNUG0tMW83U2stZ2VWNkN1NWNsWEZzeGw=")
    callback_path = "/oauth2callback"
    default_port = 8085

    def find_project(self, access: str, progress: Callable[[str], None]) -> str:
        """The user's Code Assist project: the one it has, else a newly onboarded one (the
        free tier's), else ``GOOGLE_CLOUD_PROJECT`` where the tier needs the user's own."""
        env_project = os.environ.get("GOOGLE_CLOUD_PROJECT") or os.environ.get(
            "GOOGLE_CLOUD_PROJECT_ID"
        )
        progress("Checking for an existing Cloud Code Assist project…")
        status, data = self._code_assist(
            f"{self.code_assist_url}/v1internal:loadCodeAssist",
            access,
            {
                "cloudaicompanionProject": env_project,
                "metadata": {**_METADATA, "duetProject": env_project},
            },
        )
        if status >= 400:
            details = (
                (data.get("error") or {}).get("details")
                if isinstance(data.get("error"), dict)
                else None
            )
            if isinstance(details, list) and any(
                isinstance(d, dict) and d.get("reason") == "SECURITY_POLICY_VIOLATED"
                for d in details
            ):
                data = {"currentTier": {"id": "standard-tier"}}  # VPC-SC: a standard-tier user
            else:
                raise OAuthError(f"{self.name} login: loadCodeAssist answered HTTP {status}")
        if data.get("currentTier"):
            project = data.get("cloudaicompanionProject")
            if isinstance(project, str) and project:
                return project
            if env_project:
                return env_project
            raise OAuthError(
                f"{self.name} login: this account needs its own project: {_PROJECT_HINT}"
            )
        tier = next(
            (
                t
                for t in data.get("allowedTiers") or []
                if isinstance(t, dict) and t.get("isDefault")
            ),
            {"id": "legacy-tier"},
        )
        tier_id = tier.get("id") or "free-tier"
        if tier_id != "free-tier" and not env_project:
            raise OAuthError(
                f"{self.name} login: this account needs its own project: {_PROJECT_HINT}"
            )
        progress("Provisioning a Cloud Code Assist project (this may take a moment)…")
        onboard: dict[str, Any] = {"tierId": tier_id, "metadata": dict(_METADATA)}
        if tier_id != "free-tier" and env_project:
            onboard["cloudaicompanionProject"] = env_project
            onboard["metadata"]["duetProject"] = env_project
        status, operation = self._code_assist(
            f"{self.code_assist_url}/v1internal:onboardUser", access, onboard
        )
        if status >= 400:
            raise OAuthError(f"{self.name} login: onboardUser answered HTTP {status}")
        attempt = 0
        while not operation.get("done") and isinstance(operation.get("name"), str):
            if attempt >= 60:
                raise OAuthError(f"{self.name} login: project provisioning did not finish")
            if attempt:  # pi's pacing: ask at once, then every 5 s
                progress(f"Waiting for project provisioning (attempt {attempt + 1})…")
                self._sleep(5.0)
            attempt += 1
            status, operation = self._code_assist(
                f"{self.code_assist_url}/v1internal/{operation['name']}", access, method="GET"
            )
            if status >= 400:
                raise OAuthError(f"{self.name} login: the provisioning poll answered HTTP {status}")
        response = operation.get("response")
        project = response.get("cloudaicompanionProject") if isinstance(response, dict) else None
        found = project.get("id") if isinstance(project, dict) else None
        if isinstance(found, str) and found:
            return found
        if env_project:
            return env_project
        raise OAuthError(
            f"{self.name} login: no Cloud project could be found or provisioned: {_PROJECT_HINT}"
        )


class AntigravityOAuth(GoogleOAuth):
    """Antigravity's login (Gemini 3, Claude and GPT-OSS through Google Cloud)."""

    id = "google-antigravity"
    name = "Antigravity (Gemini 3, Claude, GPT-OSS)"
    client_id = _public(
        "MTA3MTAwNjA2MDU5MS10bWhzc2luMmgyMWxjcmUyMzV2dG9sb2poNGc0MDNlcC5hcHBzLmdvb2dsZXVzZXJjb250ZW50LmNvbQ=="
    )
    client_secret = _public("R09DU1BYLUs1OEZXUjQ4NkxkTEoxbUxCOHNYQzR6NnFEQWY=")
    scopes = (
        *_SCOPES,
        "https://www.googleapis.com/auth/cclog",
        "https://www.googleapis.com/auth/experimentsandconfigs",
    )
    callback_path = "/oauth-callback"
    default_port = 51121
    default_project = "rising-fact-p41fc"
    """The project Antigravity falls back to when the account names none (pi's)."""

    def __init__(
        self,
        *,
        fallback_code_assist_url: str = "https://daily-cloudcode-pa.sandbox.googleapis.com",
        **endpoints: Any,
    ) -> None:
        super().__init__(**endpoints)
        self.fallback_code_assist_url = fallback_code_assist_url.rstrip("/")

    def find_project(self, access: str, progress: Callable[[str], None]) -> str:
        """The account's project from either endpoint, else the shared default."""
        progress("Checking for an existing project…")
        for base in (self.code_assist_url, self.fallback_code_assist_url):
            try:
                status, data = self._code_assist(
                    f"{base}/v1internal:loadCodeAssist", access, {"metadata": _METADATA}
                )
            except OAuthError:
                continue  # the next endpoint, then the default
            project = data.get("cloudaicompanionProject") if status < 400 else None
            if isinstance(project, dict):
                project = project.get("id")
            if isinstance(project, str) and project:
                return project
        progress("Using the default project…")
        return self.default_project


def _expires(answer: dict[str, Any]) -> float:
    expires_in = answer.get("expires_in")
    seconds = float(expires_in) if isinstance(expires_in, int | float) else 3600.0
    return time.time() + seconds - _EARLY


def _error(answer: dict[str, Any], status: int) -> str:
    error = answer.get("error")
    if isinstance(error, dict):
        error = error.get("status") or error.get("message")
    return error if isinstance(error, str) and error else f"HTTP {status}"
