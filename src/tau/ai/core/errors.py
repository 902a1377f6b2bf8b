"""How a call fails: the exceptions adapters raise and the texts that end up in messages.

This module is the bottom of :mod:`tau.ai`: it imports nothing of tau, so the HTTP layer, the
key lookup and the agent can raise and describe errors without loading the event machinery.
Whatever an adapter raises ends its stream as an ``error`` event whose ``error_message`` is
:func:`describe_error` of the exception.
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = [
    "ABORTED_MESSAGE",
    "UNKNOWN_ERROR_MESSAGE",
    "ProviderConnectionError",
    "ProviderError",
    "ProviderHTTPError",
    "ProviderTimeoutError",
    "describe_error",
    "excerpt",
    "one_line",
]

ABORTED_MESSAGE = "Request was aborted"
"""The ``error_message`` of a call aborted without a reason of its own."""
UNKNOWN_ERROR_MESSAGE = "An unknown error occurred"
"""The ``error_message`` when a failure carried no text at all."""
MESSAGE_LIMIT = 500
"""The longest one-line message :func:`one_line` keeps (an error body can be megabytes)."""


class ProviderError(Exception):
    """A failure an adapter reports; its text becomes the message's ``error_message``.

    ``status`` is the HTTP status the provider gave for the failure, on the response or inside
    an error event of a streamed one (None when it gave none). ``retry_after`` is how many
    seconds the provider asked to wait before another request (its ``Retry-After``), when it
    named a delay: a scheduler that sends many requests slows down by it.
    """

    def __init__(
        self, *args: object, status: int | None = None, retry_after: float | None = None
    ) -> None:
        super().__init__(*args)
        self.status = status
        self.retry_after = retry_after


class ProviderConnectionError(ProviderError):
    """The request got no answer: no connection, or the connection broke."""


class ProviderTimeoutError(ProviderError):
    """Nothing arrived in time: the first byte, or the next chunk (the ``timeout`` option)."""


class ProviderHTTPError(ProviderError):
    """A non-2xx answer (after retries); the text is ``"<status> <provider's message>"``.

    ``body`` is the answer's body as text (at most about 1 MB of it) and ``headers`` its
    headers, for adapters that explain a status better than the generic text does.
    """

    status: int

    def __init__(
        self,
        message: str,
        status: int,
        body: str = "",
        headers: Mapping[str, str] | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message, status=status, retry_after=retry_after)
        self.body = body
        self.headers: Mapping[str, str] = headers if headers is not None else {}


def describe_error(exc: BaseException) -> str:
    """A one-line message for an exception: its text, else its type name."""
    text = str(exc).strip()
    return text if text else type(exc).__name__


def one_line(text: str, limit: int = MESSAGE_LIMIT) -> str:
    """``text`` with its white space folded to single spaces, cut at ``limit`` characters."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def excerpt(text: str, limit: int = 200) -> str:
    """The start of ``text`` for an error message about it (``…`` marks a cut)."""
    return text if len(text) <= limit else text[: limit - 1] + "…"
