"""Seams for instrumentation: how an observer (``tau.telemetry``) watches LLM calls.

Nothing here is active until an observer is installed, and what is off costs nothing per event:

* :func:`set_call_observer` installs one :class:`CallObserver` for the whole process. The entry
  points (:func:`~tau.ai.stream`, :func:`~tau.ai.stream_simple` and what calls them) test it
  for None once per call; when set, it is handed the call and starts it itself, so it can
  make its own context current for the call's task and watch the stream with
  :meth:`~tau.ai.EventStream.tap`.
* :data:`http_observer` is a context variable an observer sets around starting a call; the
  HTTP layer reads it once per request and reports each attempt and each retry to it.

It also holds the logging helpers of the HTTP layer, which must never write a secret:
:func:`loggable_url` and :func:`scrub_secrets`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Mapping
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from tau.ai.core.types import Context, Model
    from tau.ai.streaming.event_stream import AssistantMessageEventStream

__all__ = [
    "CallObserver",
    "HttpObserver",
    "StartCall",
    "get_call_observer",
    "http_observer",
    "loggable_url",
    "request_report",
    "scrub_secrets",
    "set_call_observer",
]

StartCall = Callable[["Model", "Context", Mapping[str, Any]], "AssistantMessageEventStream"]
"""Starts the call as the adapter would: ``(model, context, options) -> stream``."""


class CallObserver(Protocol):
    """Watches every LLM call made through the entry points.

    It must call ``start(model, context, options)`` exactly once and return that stream (it
    may tap it). Whatever it raises reaches the caller, so it should not raise.
    """

    def __call__(
        self,
        start: StartCall,
        model: Model,
        context: Context,
        options: Mapping[str, Any],
    ) -> AssistantMessageEventStream: ...


call_observer: CallObserver | None = None
"""The installed observer, read by the entry points (set it with :func:`set_call_observer`)."""


def set_call_observer(observer: CallObserver | None) -> CallObserver | None:
    """Install ``observer`` for every later call (None removes it); returns the previous one."""
    global call_observer
    previous, call_observer = call_observer, observer
    return previous


def get_call_observer() -> CallObserver | None:
    """The installed call observer, or None."""
    return call_observer


class HttpObserver(Protocol):
    """Told about the HTTP requests of one call (see :data:`http_observer`)."""

    def request(self, method: str, url: str) -> None:
        """An attempt is about to be sent (``url`` as :func:`loggable_url` writes it)."""

    def retry(self, attempt: int, delay: float, reason: str, status: int | None) -> None:
        """Attempt ``attempt`` (1 for the first retry) follows in ``delay`` seconds because of
        ``reason`` (an HTTP ``status``, or a connection failure when None)."""


http_observer: ContextVar[HttpObserver | None] = ContextVar("tau_http_observer", default=None)
"""Set by a call observer while it starts a call: the call's task inherits it."""


# --------------------------------------------------------------------------- secrets in logs

_SECRET_WORDS = ("key", "token", "secret", "sig", "auth", "pass", "cred", "code")
"""A query parameter whose name contains one of these (in any case) holds a secret."""


def _secret_name(name: str) -> bool:
    # Substrings, not a compiled pattern: compiling one cost ``import tau.ai`` 0.3 ms.
    lowered = name.lower()
    return any(word in lowered for word in _SECRET_WORDS)


SECRET_HEADERS = frozenset(
    {
        "authorization",
        "proxy-authorization",
        "x-api-key",
        "api-key",
        "x-goog-api-key",
        "cookie",
        "x-amz-security-token",
    }
)
"""Headers whose values are credentials."""


def loggable_url(url: str) -> str:
    """``url`` without credentials: no user info, and the values of query parameters whose name
    looks like a secret (``key``, ``token``, ``sig``…) replaced by ``***``."""
    # Imported here: urllib.parse (and the ipaddress it loads) serve only HTTP logging, not
    # ``import tau.ai``.
    from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

    parts = urlsplit(url)
    netloc = parts.netloc.rpartition("@")[2]
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        query = urlencode(
            [(name, "***" if _secret_name(name) else value) for name, value in pairs],
            safe="*",
        )
    return urlunsplit((parts.scheme, netloc, parts.path, query, ""))


def secrets_of(headers: Mapping[str, str], url: str) -> list[str]:
    """The credential values in a request's headers and URL (for :func:`scrub_secrets`)."""
    from urllib.parse import parse_qsl, urlsplit

    found: list[str] = []
    for name, value in headers.items():
        if name.lower() in SECRET_HEADERS and value:
            found.append(value)
            scheme, _, token = value.partition(" ")
            if token and scheme.isalpha():
                found.append(token)  # "Bearer sk-…": the bare token too
    for name, value in parse_qsl(urlsplit(url).query, keep_blank_values=True):
        if value and _secret_name(name):
            found.append(value)
    return found


def scrub_secrets(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every occurrence of each secret (4 characters or more) replaced by ``***``."""
    for secret in sorted(secrets, key=len, reverse=True):
        if len(secret) >= 4:
            text = text.replace(secret, "***")
    return text


# --------------------------------------------------------------------------- one HTTP request

_http_log = logging.getLogger("tau.ai.http")


class RequestReport:
    """The DEBUG lines and observer notices of one HTTP request, over all its attempts.

    Lines name the method and the URL without credentials; the retry reason is the error
    text with this request's credential values scrubbed out (a server may echo a key).
    """

    __slots__ = ("_log", "_method", "_observer", "_secrets", "_sent", "_url", "_url_text")

    def __init__(
        self,
        method: str,
        url: str,
        headers: Mapping[str, str],
        observer: HttpObserver | None,
        log: bool,
    ) -> None:
        self._method = method
        self._url = url
        self._url_text = loggable_url(url)
        self._observer = observer
        self._log = log
        self._secrets = secrets_of(headers, url)
        self._sent = 0.0

    def attempt(self) -> None:
        """An attempt is being sent."""
        self._sent = time.perf_counter()
        if self._observer is not None:
            self._observer.request(self._method, self._url_text)

    def answered(self, status: int) -> None:
        """The server answered the attempt with ``status``."""
        if self._log:
            elapsed = time.perf_counter() - self._sent
            _http_log.debug("%s %s -> %d (%.3f s)", self._method, self._url_text, status, elapsed)

    def retry(self, attempt: int, max_retries: int, delay: float, failure: BaseException) -> None:
        """Retry number ``attempt`` of ``max_retries`` follows in ``delay`` s after ``failure``."""
        reason = scrub_secrets(str(failure), self._secrets)
        status = getattr(failure, "status", None)
        if self._log:
            _http_log.debug(
                "retry %d/%d of %s %s in %.2f s: %s",
                attempt, max_retries, self._method, self._url_text, delay, reason,
            )  # fmt: skip
        if self._observer is not None:
            self._observer.retry(
                attempt, delay, reason, status if isinstance(status, int) else None
            )


def request_report(method: str, url: str, headers: Mapping[str, str]) -> RequestReport | None:
    """A :class:`RequestReport` when DEBUG logging or an :data:`http_observer` listens, else
    None (so a request nobody watches pays one level check and one context-variable read)."""
    observer = http_observer.get()
    log = _http_log.isEnabledFor(logging.DEBUG)
    if observer is None and not log:
        return None
    return RequestReport(method, url, headers, observer, log)
