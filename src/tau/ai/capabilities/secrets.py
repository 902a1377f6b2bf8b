"""The one redaction rule for text that leaves the process: error messages in trace spans,
session files, exports, ``--json`` and RPC events, and the proxy's responses.

A provider error can repeat the key it was sent (``Incorrect API key provided: sk-…``). Before
such text is written anywhere, :func:`redact_secrets` replaces

* the exact keys in use: credential variables of the environment, every ``api_key`` and header
  value a call was given (so the keys ``get_api_key`` and ``models.json`` supplied, which arrive
  as options), values handed to :func:`remember_secret`, and what each registered
  :data:`SecretSource` yields (an OAuth token store plugs in with :func:`add_secret_source`);
* anything shaped like a key (``sk-…``, ``AIza…``, ``ya29.…``, AWS key ids, GitHub and
  Hugging Face tokens) or labelled as one (``Bearer …``, ``api_key=…``).

The message a caller holds in memory is left as the provider sent it; only what is written or
sent on is redacted.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

__all__ = [
    "REDACTED",
    "SecretSource",
    "add_secret_source",
    "redact_secrets",
    "remember_options_secrets",
    "remember_secret",
]

REDACTED = "[redacted]"
"""What a redacted secret is replaced with in every message that leaves the process."""

SecretSource = Callable[[], Iterable[str]]
"""A callable returning the secrets it holds now (an OAuth store's access and refresh tokens)."""

_MIN_SECRET = 6
"""Shorter values are not looked for: they would match ordinary words."""
_MIN_ENV_SECRET = 8
"""Environment values are only guessed to be secrets by their variable's name: a longer floor."""
_MAX_REMEMBERED = 256
"""Keys in use are remembered up to this many (the oldest forgotten first): memory stays bounded."""

# Keys by their shapes: OpenAI/Anthropic/DeepSeek (sk-…), Google API keys (AIza…), Google
# OAuth tokens (ya29.…), AWS access key ids, GitHub tokens, Hugging Face tokens.
_KEY_SHAPES = re.compile(
    r"\b(?:sk|pk|rk)-[A-Za-z0-9_*.\-]{6,}"
    r"|\bAIza[0-9A-Za-z_\-]{10,}"
    r"|\bya29\.[0-9A-Za-z_\-.]+"
    r"|\b(?:AKIA|ASIA)[0-9A-Z]{12,}"
    r"|\bgh[pousr]_[A-Za-z0-9]{10,}"
    r"|\bhf_[A-Za-z0-9]{10,}"
)
# Bearer tokens and a value named as a key or token.
_LABELLED = re.compile(
    r"(?i)(\b(?:bearer|basic)\s+"
    r"|\b(?:api[-_ ]?key|x-api-key|x-goog-api-key|token|secret|password)[\"']?\s*[:=]\s*[\"']?)"
    r"((?!\[)[^\s\"',;)\]}]{6,})"
)
# Variables whose value is a credential: every provider's key variable ends like this
# (OPENAI_API_KEY, HF_TOKEN, …); the AWS pair and session token are named outright.
_CREDENTIAL_NAME = re.compile(r"(?i)(?:KEY|TOKEN|SECRET|PASSWORD|CREDENTIALS?)$")
_CREDENTIAL_VARS = frozenset({"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"})

_remembered: dict[str, None] = {}
_sources: list[SecretSource] = []


def remember_secret(value: str | None) -> None:
    """Redact ``value`` from now on (a key resolved outside the options of a call)."""
    if not value or len(value) < _MIN_SECRET or value in _remembered:
        return
    _remembered[value] = None
    if len(_remembered) > _MAX_REMEMBERED:
        del _remembered[next(iter(_remembered))]


def remember_options_secrets(options: Mapping[str, Any], headers: Any = None) -> None:
    """Remember the ``api_key`` and header values of one call's ``options`` (and the model's
    ``headers``): the keys from ``get_api_key``, ``models.json`` and the caller all arrive so."""
    key = options.get("api_key")
    if isinstance(key, str):
        remember_secret(key)
    for found in (headers, options.get("headers")):
        if isinstance(found, Mapping):
            for value in found.values():
                if isinstance(value, str):
                    remember_secret(value)
                    # "Bearer <token>": the token alone may be echoed too.
                    remember_secret(value.rpartition(" ")[2])


def add_secret_source(source: SecretSource) -> Callable[[], None]:
    """Redact what ``source()`` yields, asked each time text is redacted; returns a function
    that removes the source again. A source that raises is skipped."""
    _sources.append(source)

    def remove() -> None:
        if source in _sources:
            _sources.remove(source)

    return remove


def _environment_secrets() -> Iterable[str]:
    for name, value in os.environ.items():
        if len(value) >= _MIN_ENV_SECRET and (
            name in _CREDENTIAL_VARS or _CREDENTIAL_NAME.search(name)
        ):
            yield value


def _known(extra: Iterable[str]) -> list[str]:
    found: set[str] = set(_remembered)
    found.update(_environment_secrets())
    found.update(extra)
    for source in list(_sources):
        try:
            found.update(v for v in source() if isinstance(v, str))
        except Exception:
            continue  # a broken store must not stop an error from being reported
    # Longest first, so a key that contains another is replaced whole.
    return sorted((v for v in found if len(v) >= _MIN_SECRET), key=len, reverse=True)


def redact_secrets(text: str, extra: Iterable[str] = ()) -> str:
    """``text`` with every known key (and ``extra``), every key shape and every labelled
    credential replaced by :data:`REDACTED`."""
    if not text:
        return text
    secrets = _known(extra)
    if secrets:
        text = re.sub("|".join(map(re.escape, secrets)), REDACTED, text)
    text = _KEY_SHAPES.sub(REDACTED, text)
    return _LABELLED.sub(_keep_label, text)


def _keep_label(match: re.Match[str]) -> str:
    return f"{match.group(1)}{REDACTED}"
