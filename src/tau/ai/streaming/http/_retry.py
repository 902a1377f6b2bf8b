"""When a failed request is tried again, and after how long.

Retries happen only before the first byte of a body: 429/500/502/503/504/529, bodies that say
"overloaded", and connections that failed. The server's ``Retry-After`` / ``retry-after-ms``
is honoured (up to ``max_retry_delay_ms``), and so is a delay named in the error body (Google's
``RetryInfo.retryDelay``, Cloud Code Assist's "reset after 3s"); otherwise the delay backs off
exponentially, with jitter.
"""

from __future__ import annotations

import email.utils
import random
import re
import time
from collections.abc import Mapping

DEFAULT_MAX_RETRIES = 3
DEFAULT_MAX_RETRY_DELAY_MS = 60_000
RETRYABLE_STATUSES = frozenset({429, 500, 502, 503, 504, 529})
BACKOFF_BASE_S = 0.5
"""First backoff delay when the server names none; doubles per attempt, up to BACKOFF_MAX_S."""
BACKOFF_MAX_S = 8.0


def retry_delay_from_headers(headers: Mapping[str, str]) -> float | None:
    """Seconds the server asks to wait (``retry-after-ms``, ``Retry-After`` seconds or date)."""
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    after = headers.get("retry-after")
    if after:
        try:
            return max(0.0, float(after))
        except ValueError:
            pass
        try:
            when = email.utils.parsedate_to_datetime(after)
        except (TypeError, ValueError):
            return None
        return max(0.0, when.timestamp() - time.time())
    return None


_BODY_DELAYS = (
    # google.rpc.RetryInfo, as JSON: "retryDelay": "3.5s" (or "350ms").
    re.compile(rb'"retryDelay"\s*:\s*"(?P<s>[0-9.]+)(?P<unit>ms|s)"'),
    re.compile(rb"(?i)please retry in (?P<s>[0-9.]+)(?P<unit>ms|s)\b"),
    re.compile(rb"(?i)reset after (?:(?P<h>\d+)h)?(?:(?P<m>\d+)m)?(?P<s>[0-9.]+)s\b"),
)


def retry_delay_from_body(body: bytes) -> float | None:
    """Seconds an error body asks to wait, where it names a delay (Google's ``RetryInfo``,
    "Please retry in 2s", "reset after 1m3s"), else None."""
    for pattern in _BODY_DELAYS:
        found = pattern.search(body[:65536])
        if found is None:
            continue
        try:
            seconds = float(found["s"])
        except ValueError:
            continue
        groups = found.groupdict()
        if groups.get("unit") == b"ms":
            seconds /= 1000
        seconds += 3600 * int(groups.get("h") or 0) + 60 * int(groups.get("m") or 0)
        return seconds if seconds > 0 else None
    return None


def backoff(attempt: int) -> float:
    """Seconds to wait before retry number ``attempt + 1`` when the server names no delay."""
    # Jitter keeps many clients that failed together from retrying together.
    delay: float = min(BACKOFF_BASE_S * 2.0**attempt, BACKOFF_MAX_S)
    return delay * (1 - 0.25 * random.random())


def is_retryable(status: int, headers: Mapping[str, str], body: bytes) -> bool:
    """Whether an error answer is worth another attempt (``x-should-retry`` decides first)."""
    should = headers.get("x-should-retry")
    if should == "true":
        return True
    if should == "false":
        return False
    return status in RETRYABLE_STATUSES or b"overloaded" in body.lower()
