"""``short_hash``: pi-ai's deterministic short string hash, bit for bit."""

from __future__ import annotations

_MASK = 0xFFFFFFFF
_DIGITS = "0123456789abcdefghijklmnopqrstuvwxyz"


def _imul(a: int, b: int) -> int:
    """JavaScript's ``Math.imul`` on unsigned 32-bit inputs, as an unsigned 32-bit result."""
    return (a * b) & _MASK


def _base36(n: int) -> str:
    out = ""
    while True:
        n, r = divmod(n, 36)
        out = _DIGITS[r] + out
        if not n:
            return out


def short_hash(text: str) -> str:
    """A cyrb53-style 2×32-bit hash of ``text``, in base 36; equal to pi-ai's ``shortHash``.

    JavaScript hashes UTF-16 code units, so characters outside the BMP count as two units.
    """
    h1 = 0xDEADBEEF
    h2 = 0x41C6CE57
    data = text.encode("utf-16-le", "surrogatepass")
    for i in range(0, len(data), 2):
        unit = data[i] | (data[i + 1] << 8)
        h1 = _imul(h1 ^ unit, 2654435761)
        h2 = _imul(h2 ^ unit, 1597334677)
    h1 = _imul(h1 ^ (h1 >> 16), 2246822507) ^ _imul(h2 ^ (h2 >> 13), 3266489909)
    h2 = _imul(h2 ^ (h2 >> 16), 2246822507) ^ _imul(h1 ^ (h1 >> 13), 3266489909)
    return _base36(h2) + _base36(h1)
