"""What the proxy server takes out of an upstream error before a client sees it.

An upstream error can echo the key it was sent (``Incorrect API key provided: sk-…``), and the
transport's errors name the upstream host. The client of a proxy must learn neither: the
server's own keys (the ones it resolves for the model it serves, the ``api_key`` and header
values it adds) are replaced wherever they appear, then anything shaped like a key or a
bearer token, then every URL, the model's host and any IP address or ``host:port``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import urlsplit

from tau.ai import Model, get_env_api_key

__all__ = ["REDACTED", "UPSTREAM", "Redactor", "model_hosts", "server_secrets"]

REDACTED = "[redacted]"
UPSTREAM = "[upstream]"

_MIN_SECRET = 6
"""Shorter values are not looked for: they would match ordinary words."""

# Keys by their shapes: OpenAI/Anthropic/DeepSeek (sk-…), Google API keys (AIza…), Google
# OAuth tokens (ya29.…), AWS access key ids, GitHub tokens, Hugging Face tokens, bearer
# tokens, and a value named as a key or token.
_KEY_SHAPES = re.compile(
    r"\b(?:sk|pk|rk)-[A-Za-z0-9_*.\-]{6,}"
    r"|\bAIza[0-9A-Za-z_\-]{10,}"
    r"|\bya29\.[0-9A-Za-z_\-.]+"
    r"|\b(?:AKIA|ASIA)[0-9A-Z]{12,}"
    r"|\bgh[pousr]_[A-Za-z0-9]{10,}"
    r"|\bhf_[A-Za-z0-9]{10,}"
)
_LABELLED = re.compile(
    r"(?i)(\b(?:bearer|basic)\s+"
    r"|\b(?:api[-_ ]?key|x-api-key|x-goog-api-key|token|secret|password)[\"']?\s*[:=]\s*[\"']?)"
    r"((?!\[)[^\s\"',;)\]}]{6,})"
)
_URL = re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.\-]*://[^\s\"'<>)\]}]+")
_IP = re.compile(r"\b\d{1,3}(?:\.\d{1,3}){3}(?::\d{1,5})?\b|\[[0-9a-fA-F:]+\](?::\d{1,5})?")
_HOST = re.compile(
    r"\blocalhost(?::\d{1,5})?\b"
    r"|\b(?:[a-zA-Z0-9\-]+\.)+(?:com|net|org|io|ai|dev|app|cloud|co|us|eu|internal|local)"
    r"(?::\d{1,5})?\b"
)


class Redactor:
    """Replaces ``secrets`` and key shapes with :data:`REDACTED`, and ``hosts``, URLs and
    addresses with :data:`UPSTREAM`, in a message."""

    __slots__ = ("_hosts", "_secrets")

    def __init__(self, secrets: Iterable[str], hosts: Iterable[str] = ()) -> None:
        self._secrets = _alternatives(secrets)
        self._hosts = _alternatives(hosts)

    def __call__(self, text: str) -> str:
        """``text`` with nothing of the server's left in it."""
        if self._secrets is not None:
            text = self._secrets.sub(REDACTED, text)
        text = _KEY_SHAPES.sub(REDACTED, text)
        text = _LABELLED.sub(_keep_label, text)
        text = _URL.sub(UPSTREAM, text)
        if self._hosts is not None:
            text = self._hosts.sub(UPSTREAM, text)
        text = _IP.sub(UPSTREAM, text)
        return _HOST.sub(UPSTREAM, text)


def _keep_label(match: re.Match[str]) -> str:
    return f"{match.group(1)}{REDACTED}"


def _alternatives(values: Iterable[str]) -> re.Pattern[str] | None:
    # Longest first, so a key that contains another is replaced whole.
    found = sorted({v for v in values if len(v) >= _MIN_SECRET}, key=len, reverse=True)
    return re.compile("|".join(map(re.escape, found))) if found else None


_CREDENTIAL_VARS = (
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_BEARER_TOKEN_BEDROCK",
    "GOOGLE_CLOUD_API_KEY",
)


def server_secrets(model: Model, options: Mapping[str, Any]) -> list[str]:
    """The keys the server uses to serve ``model`` with ``options``: the key from its
    environment, the credentials of the AWS and Google chains, and the ``api_key`` and
    header values it adds (the model's own headers included)."""
    secrets = [os.environ.get(name, "") for name in _CREDENTIAL_VARS]
    key = get_env_api_key(model.provider)
    if key:
        secrets.append(key)
    given = options.get("api_key")
    if isinstance(given, str):
        secrets.append(given)
    for headers in (model.headers, options.get("headers")):
        if isinstance(headers, Mapping):
            for value in headers.values():
                if isinstance(value, str):
                    secrets.append(value)
                    # "Bearer <token>": the token alone may be echoed too.
                    secrets.append(value.rpartition(" ")[2])
    return secrets


def model_hosts(model: Model) -> list[str]:
    """The upstream address of ``model``, as a URL's host and as ``host:port``."""
    parts = urlsplit(model.base_url)
    return [h for h in (parts.netloc, parts.hostname or "") if h]
