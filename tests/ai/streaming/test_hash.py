"""short_hash against values computed by pi's JavaScript (node) for the same strings."""

from __future__ import annotations

import pytest

from tau.ai.streaming.hash import short_hash

# Reference values: pi-ai's shortHash run under node (Math.imul, UTF-16 code units).
NODE_VALUES = [
    ("abc", "y0biex7f9bbh"),
    ("", "k4n83c7h0j2b"),
    ("😀é", "lbk9325860g2"),  # an astral char is two UTF-16 units
    ("call_abc|fc_123", "jp01dsxufnom"),
    ("toolu_01ABCdef", "11th46g8nu9yr"),
    ("a" * 1000, "kli8eammh8ym"),
    ("日本語\x00x", "yrqh8bxrzj8f"),
]


@pytest.mark.parametrize(("text", "expected"), NODE_VALUES)
def test_matches_pi(text: str, expected: str) -> None:
    assert short_hash(text) == expected


def test_lone_surrogates_hash_as_their_code_unit() -> None:
    assert short_hash("\ud83d\ude00") == short_hash("😀")
    assert short_hash("\ud800") != short_hash("")
