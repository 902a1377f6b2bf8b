"""Removing lone UTF-16 surrogates, which providers reject in JSON ("no low surrogate")."""

from __future__ import annotations

import re

_SURROGATE = re.compile("[\ud800-\udfff]")


def sanitize_surrogates(text: str) -> str:
    """``text`` without lone surrogate code points; returned unchanged (same object) if none.

    A Python ``str`` holds code points, so a valid pair such as an emoji is one astral code
    point, never two surrogates: every surrogate code point in a ``str`` is a lone one (from a
    ``\\ud83d`` escape without its pair, or from ``surrogateescape`` decoding).
    """
    if text.isascii() or _SURROGATE.search(text) is None:
        return text
    return _SURROGATE.sub("", text)
