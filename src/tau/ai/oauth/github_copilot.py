"""GitHub Copilot: the device-code login, and the GitHub token traded for a Copilot token.

Reference: pi's ``packages/ai/src/utils/oauth/github-copilot.ts``. The GitHub token (kept as the
``refresh`` token) never expires by itself; the Copilot token made from it lasts about 30
minutes and names the API host it is for (``proxy-ep=proxy.<plan>.githubcopilot.com``).
"""

from __future__ import annotations

import base64
import re
import time
from collections.abc import Callable
from urllib.parse import urlsplit

from tau.ai.oauth.base import (
    LoginCallbacks,
    OAuthCredentials,
    OAuthError,
    OAuthProvider,
    post_form,
    request_json,
)

__all__ = ["GitHubCopilotOAuth", "copilot_base_url", "normalize_domain"]

# The Copilot editor plugin's OAuth app (public: every copy of the plugin ships it).
_CLIENT_ID = base64.b64decode("SXYxLmI1MDdhMDhjODdlY2ZlOTg=").decode()
_USER_AGENT = "GitHubCopilotChat/0.35.0"
_COPILOT_HEADERS = {
    "User-Agent": _USER_AGENT,
    "Editor-Version": "vscode/1.107.0",
    "Editor-Plugin-Version": "copilot-chat/0.35.0",
    "Copilot-Integration-Id": "vscode-chat",
}
# pi's pacing: wait a little over the interval GitHub names, more after a slow_down.
_FIRST_WAIT = 1.2
_SLOW_WAIT = 1.4
# The Copilot token is treated as expiring 5 minutes early, as pi does.
_EARLY = 300.0
_PROXY_EP = re.compile(r"proxy-ep=([^;]+)")


def normalize_domain(text: str) -> str | None:
    """The host of a GitHub Enterprise URL or domain (``https://ghe.corp/x`` -> ``ghe.corp``);
    None for blank or unparsable input."""
    text = text.strip()
    if not text:
        return None
    host = urlsplit(text if "://" in text else f"https://{text}").hostname
    return host or None


def copilot_base_url(token: str | None, enterprise_domain: str | None = None) -> str:
    """The API base a Copilot token is for (its ``proxy-ep`` with ``proxy.`` made ``api.``),
    else the enterprise's, else the individual plan's."""
    if token:
        found = _PROXY_EP.search(token)
        if found:
            return "https://" + re.sub(r"^proxy\.", "api.", found.group(1))
    if enterprise_domain:
        return f"https://copilot-api.{enterprise_domain}"
    return "https://api.individual.githubcopilot.com"


class GitHubCopilotOAuth(OAuthProvider):
    """GitHub Copilot's login (device code) and its Copilot token exchange.

    ``github_url``/``api_url`` are github.com's web and API roots (an enterprise domain typed
    at login replaces both); ``api_base`` fixes the Copilot API base instead of reading it
    from the token. ``sleep`` and ``clock`` pace the device-code polling.
    """

    id = "github-copilot"
    name = "GitHub Copilot"

    def __init__(
        self,
        *,
        github_url: str = "https://github.com",
        api_url: str = "https://api.github.com",
        api_base: str | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.github_url = github_url.rstrip("/")
        self.api_url = api_url.rstrip("/")
        self.api_base = api_base
        self._sleep = sleep
        self._clock = clock

    def _roots(self, domain: str | None) -> tuple[str, str]:
        if domain:
            return f"https://{domain}", f"https://api.{domain}"
        return self.github_url, self.api_url

    def login(self, callbacks: LoginCallbacks) -> OAuthCredentials:
        """Ask for an enterprise domain (blank: github.com), show the device code, poll until
        it is authorized, then trade the GitHub token for a Copilot token."""
        answer = callbacks.on_prompt("GitHub Enterprise URL/domain (blank for github.com)", True)
        domain = normalize_domain(answer)
        if answer.strip() and domain is None:
            raise OAuthError("GitHub Copilot: not a valid GitHub Enterprise URL or domain")
        web, _ = self._roots(domain)
        _, device = post_form(
            f"{web}/login/device/code",
            {"client_id": _CLIENT_ID, "scope": "read:user"},
            who="GitHub Copilot login",
            headers={"User-Agent": _USER_AGENT},
        )
        code, user_code = device.get("device_code"), device.get("user_code")
        uri, interval, expires_in = (
            device.get("verification_uri"),
            device.get("interval"),
            device.get("expires_in"),
        )
        if not (
            isinstance(code, str)
            and isinstance(user_code, str)
            and isinstance(uri, str)
            and isinstance(interval, int | float)
            and isinstance(expires_in, int | float)
        ):
            raise OAuthError("GitHub Copilot login: the device code answer lacks its fields")
        callbacks.on_auth(uri, f"Enter code: {user_code}")
        callbacks.on_progress("Waiting for authorization…")
        github_token = self._poll(web, code, float(interval), float(expires_in))
        credentials = self._exchange(github_token, domain)
        callbacks.on_progress("Logged in to GitHub Copilot.")
        return credentials

    def _poll(self, web: str, device_code: str, interval: float, expires_in: float) -> str:
        deadline = self._clock() + expires_in
        wait = max(1.0, interval)
        factor = _FIRST_WAIT
        slowed = False
        while self._clock() < deadline:
            self._sleep(min(wait * factor, max(0.0, deadline - self._clock())))
            _, answer = post_form(
                f"{web}/login/oauth/access_token",
                {
                    "client_id": _CLIENT_ID,
                    "device_code": device_code,
                    "grant_type": "urn:ietf:params:oauth:grant-type:device_code",
                },
                who="GitHub Copilot login",
                headers={"User-Agent": _USER_AGENT},
            )
            token = answer.get("access_token")
            if isinstance(token, str) and token:
                return token
            error = answer.get("error")
            if error == "authorization_pending":
                continue
            if error == "slow_down":
                slowed = True
                named = answer.get("interval")
                wait = float(named) if isinstance(named, int | float) and named > 0 else wait + 5
                factor = _SLOW_WAIT
                continue
            detail = answer.get("error_description")
            raise OAuthError(
                f"GitHub Copilot login failed: {error or 'no token in the answer'}"
                + (f": {detail}" if isinstance(detail, str) and detail else "")
            )
        if slowed:
            raise OAuthError(
                "GitHub Copilot login timed out after slow_down answers (often a drifting "
                "clock in a VM or WSL: sync it and try again)"
            )
        raise OAuthError("GitHub Copilot login timed out: the code was not entered in time")

    def _exchange(self, github_token: str, domain: str | None) -> OAuthCredentials:
        _, api = self._roots(domain)
        status, answer = request_json(
            "GET",
            f"{api}/copilot_internal/v2/token",
            who="GitHub Copilot",
            headers={
                "Accept": "application/json",
                "Authorization": f"Bearer {github_token}",
                **_COPILOT_HEADERS,
            },
            accept_errors=True,
        )
        if status in (401, 403, 404):
            raise self.refused(f"HTTP {status}")
        if status >= 400:
            raise OAuthError(f"GitHub Copilot: the token exchange answered HTTP {status}")
        token, expires_at = answer.get("token"), answer.get("expires_at")
        if not isinstance(token, str) or not isinstance(expires_at, int | float):
            raise OAuthError("GitHub Copilot: the token exchange answer lacks token/expires_at")
        extra = {"enterpriseUrl": domain} if domain else {}
        return OAuthCredentials(token, github_token, float(expires_at) - _EARLY, extra)

    def refresh(self, credentials: OAuthCredentials) -> OAuthCredentials:
        """A new Copilot token from the stored GitHub token."""
        domain = credentials.extra.get("enterpriseUrl")
        return self._exchange(credentials.refresh, domain if isinstance(domain, str) else None)

    def base_url(self, credentials: OAuthCredentials) -> str | None:
        """The API base the Copilot token names (or ``api_base`` when set)."""
        if self.api_base:
            return self.api_base
        domain = credentials.extra.get("enterpriseUrl")
        return copilot_base_url(credentials.access, domain if isinstance(domain, str) else None)
