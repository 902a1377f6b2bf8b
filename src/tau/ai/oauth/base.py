"""What every subscription login shares: credentials, the login callbacks, the provider base
class, PKCE and the small HTTP helpers the flows use.

The flows follow pi's ``packages/ai/src/utils/oauth/*``. They are synchronous: a login waits on
a person, and a refresh happens at most once an hour per provider, before a request is built.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from tau.ai.core.errors import ProviderError

__all__ = [
    "LoginCallbacks",
    "OAuthCredentials",
    "OAuthError",
    "OAuthProvider",
    "Pkce",
    "post_form",
    "request_json",
]


class OAuthError(ProviderError):
    """A login or refresh failed: the message names the provider and never holds a token."""


@dataclass(frozen=True, slots=True)
class OAuthCredentials:
    """What a login stores: the short-lived access token, the token that renews it, and when
    the access token expires (seconds since the epoch)."""

    access: str
    """The token sent with requests."""
    refresh: str
    """The token a refresh trades for a new access token."""
    expires: float
    """When ``access`` stops working, in seconds since the epoch."""
    extra: Mapping[str, Any] = field(default_factory=dict)
    """Provider details kept beside the tokens (Codex's ``accountId``, Copilot's
    ``enterpriseUrl``, Google's ``projectId``), under pi's names."""

    def expires_within(self, seconds: float, now: float | None = None) -> bool:
        """Whether the access token expires in less than ``seconds``."""
        return self.expires - (time.time() if now is None else now) < seconds

    def to_json(self) -> dict[str, Any]:
        """The stored form (pi's ``auth.json`` entry: ``expires`` in milliseconds)."""
        return {
            "type": "oauth",
            **self.extra,
            "access": self.access,
            "refresh": self.refresh,
            "expires": int(self.expires * 1000),
        }

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> OAuthCredentials:
        """Read a stored entry; a malformed one is a :class:`ValueError`."""
        access, refresh, expires = raw.get("access"), raw.get("refresh"), raw.get("expires")
        if not isinstance(access, str) or not isinstance(refresh, str):
            raise ValueError("an OAuth entry needs string 'access' and 'refresh'")
        if not isinstance(expires, int | float) or isinstance(expires, bool):
            raise ValueError("an OAuth entry needs a numeric 'expires'")
        extra = {k: v for k, v in raw.items() if k not in ("type", "access", "refresh", "expires")}
        return cls(access, refresh, expires / 1000, extra)


def _print_progress(message: str) -> None:
    del message


@dataclass(slots=True)
class LoginCallbacks:
    """How a login talks to the person logging in."""

    on_auth: Callable[[str, str | None], None]
    """``(url, instructions)``: open this URL (and, for a device code, enter this code)."""
    on_prompt: Callable[[str, bool], str]
    """``(message, allow_empty) -> answer``: ask for text (an enterprise domain, a pasted
    code)."""
    on_progress: Callable[[str], None] = _print_progress
    """A line of progress (``Waiting for authorization…``)."""
    on_manual_code: Callable[[], str] | None = None
    """Asked alongside a callback server: a pasted code or redirect URL, for when the browser
    cannot reach the callback (the first of the two to arrive wins)."""


class OAuthProvider(ABC):
    """One subscription login: ``login``, ``refresh`` and ``api_key`` of its credentials.

    Every endpoint is a constructor argument of the subclass, defaulting to the real one
    (tests point them at 127.0.0.1).
    """

    id: str = ""
    """The provider id models use (``github-copilot``)."""
    name: str = ""
    """What a picker shows."""
    uses_callback_server: bool = False
    """Whether :meth:`login` listens on 127.0.0.1 for the browser's redirect."""

    @abstractmethod
    def login(self, callbacks: LoginCallbacks) -> OAuthCredentials:
        """Run the login flow with a person; returns the credentials to store."""

    @abstractmethod
    def refresh(self, credentials: OAuthCredentials) -> OAuthCredentials:
        """New credentials for expired (or expiring) ones; :class:`OAuthError` when refused."""

    def api_key(self, credentials: OAuthCredentials) -> str:
        """The key requests send (the access token, or a provider's packing of it)."""
        return credentials.access

    def base_url(self, credentials: OAuthCredentials) -> str | None:
        """The API base the credentials name, where it differs per account (Copilot's)."""
        del credentials
        return None

    def account(self, credentials: OAuthCredentials) -> str:
        """Who is logged in, for ``tau auth list`` (never a token)."""
        for key in ("email", "accountId", "projectId", "enterpriseUrl"):
            value = credentials.extra.get(key)
            if isinstance(value, str) and value:
                return value
        return ""

    def tokens(
        self, status: int, answer: Mapping[str, Any], who: str, *, refreshing: bool
    ) -> tuple[str, str, float]:
        """``(access, refresh, expires_in)`` of a token endpoint's answer (a code exchange, or
        a refresh when ``refreshing``); :class:`OAuthError` for a refusal or missing fields."""
        if status >= 400:
            error = answer.get("error")
            if isinstance(error, Mapping):  # Anthropic: {"error": {"type": ...}}
                error = error.get("type")
            detail = error if isinstance(error, str) and error else f"HTTP {status}"
            if refreshing:
                raise self.refused(detail)
            raise OAuthError(f"{who} login: the code exchange was refused ({detail})")
        access, refresh, expires_in = (
            answer.get("access_token"),
            answer.get("refresh_token"),
            answer.get("expires_in"),
        )
        if not (
            isinstance(access, str)
            and isinstance(refresh, str)
            and isinstance(expires_in, int | float)
        ):
            raise OAuthError(f"{who}: the token answer lacks access_token/refresh_token/expires_in")
        return access, refresh, float(expires_in)

    def refused(self, detail: str) -> OAuthError:
        """The error of a refresh the server refused: names the provider, says to log in."""
        return OAuthError(
            f"{self.name or self.id}: the stored login was refused ({detail}); "
            f"log in again with `tau login {self.id}`"
        )


@dataclass(frozen=True, slots=True)
class Pkce:
    """A PKCE pair (RFC 7636, S256): the verifier kept, the challenge sent."""

    verifier: str
    challenge: str

    @classmethod
    def new(cls) -> Pkce:
        """A fresh random verifier and its SHA-256 challenge, base64url without padding."""
        verifier = _b64url(secrets.token_bytes(32))
        return cls(verifier, challenge_of(verifier))


def challenge_of(verifier: str) -> str:
    """The S256 challenge of ``verifier``."""
    return _b64url(hashlib.sha256(verifier.encode("ascii")).digest())


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def decode_jwt(token: str) -> dict[str, Any] | None:
    """The payload of a JWT (unverified: only read for the account id it names), or None."""
    parts = token.split(".")
    if len(parts) != 3:
        return None
    try:
        raw = base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4))
        payload = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        return None
    return payload if isinstance(payload, dict) else None


_TIMEOUT = 30.0


def request_json(
    method: str,
    url: str,
    *,
    who: str,
    headers: Mapping[str, str] | None = None,
    form: Mapping[str, str] | None = None,
    body: Any = None,
    accept_errors: bool = False,
) -> tuple[int, dict[str, Any]]:
    """Send one request, return ``(status, JSON object)``.

    A transport failure, a non-object body, or (unless ``accept_errors``) an error status is an
    :class:`OAuthError` naming ``who`` and the status: the body is not quoted, as it may echo a
    token.
    """
    import httpx2

    try:
        response = httpx2.request(
            method,
            url,
            headers=dict(headers or {}),
            data=dict(form) if form is not None else None,
            json=body,
            timeout=_TIMEOUT,
        )
    except httpx2.HTTPError as exc:
        raise OAuthError(f"{who}: cannot reach {_origin(url)} ({type(exc).__name__})") from None
    status = response.status_code
    if status >= 400 and not accept_errors:
        raise OAuthError(f"{who}: {_origin(url)} answered HTTP {status}")
    try:
        data = response.json()
    except ValueError:
        data = None
    if not isinstance(data, dict):
        if status >= 400:
            return status, {}
        raise OAuthError(f"{who}: {_origin(url)} answered HTTP {status} without a JSON object")
    return status, data


def post_form(
    url: str, form: Mapping[str, str], *, who: str, **kw: Any
) -> tuple[int, dict[str, Any]]:
    """POST ``form`` url-encoded, asking for JSON (see :func:`request_json`)."""
    headers = {"Accept": "application/json", **kw.pop("headers", {})}
    return request_json("POST", url, who=who, form=form, headers=headers, **kw)


def _origin(url: str) -> str:
    scheme, _, rest = url.partition("://")
    return f"{scheme}://{rest.split('/', 1)[0]}"
