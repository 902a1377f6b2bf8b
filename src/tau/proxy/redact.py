"""What the proxy server takes out of an upstream error before a client sees it.

An upstream error can echo the key it was sent (``Incorrect API key provided: sk-…``), and the
transport's errors name the upstream host. The client of a proxy must learn neither: the
server's own keys (the ones it resolves for the model it serves, the ``api_key`` and header
values it adds) are replaced wherever they appear, then anything shaped like a key or a
bearer token, then every URL, the model's host and any IP address or ``host:port``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import urlsplit

from tau.ai import Model, get_env_api_key, redact_secrets
from tau.ai.adapters import REDACTED

__all__ = ["REDACTED", "UPSTREAM", "Redactor", "model_hosts", "server_secrets"]

UPSTREAM = "[upstream]"

_MIN_HOST = 6
"""Shorter host names are not looked for: they would match ordinary words."""

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
        self._secrets = list(secrets)
        self._hosts = _alternatives(hosts)

    def __call__(self, text: str) -> str:
        """``text`` with nothing of the server's left in it."""
        # Keys: tau's one rule (tau.ai.redact_secrets), with this server's own keys added.
        text = redact_secrets(text, self._secrets)
        text = _URL.sub(UPSTREAM, text)
        if self._hosts is not None:
            text = self._hosts.sub(UPSTREAM, text)
        text = _IP.sub(UPSTREAM, text)
        return _HOST.sub(UPSTREAM, text)


def _alternatives(values: Iterable[str]) -> re.Pattern[str] | None:
    # Longest first, so a name that contains another is replaced whole.
    found = sorted({v for v in values if len(v) >= _MIN_HOST}, key=len, reverse=True)
    return re.compile("|".join(map(re.escape, found))) if found else None


def server_secrets(model: Model, options: Mapping[str, Any]) -> list[str]:
    """The keys the server uses to serve ``model`` with ``options``: the key from its
    environment, and the ``api_key`` and header values it adds (the model's own headers
    included). The credential variables of the environment (the AWS and Google chains') are
    in :func:`tau.ai.redact_secrets`'s rule already."""
    secrets: list[str] = []
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
