"""Lone-surrogate removal."""

from __future__ import annotations

import json

from tau.ai.streaming.sanitize import sanitize_surrogates


def test_lone_surrogates_are_removed_pairs_kept() -> None:
    text = json.loads('"a\\ud800b\\udc00c\\ud83d\\ude00d"')  # two lone halves and a real pair
    assert sanitize_surrogates(text) == "abc😀d"
    assert sanitize_surrogates("x\udfff") == "x"
    sanitize_surrogates(text).encode()  # now encodable as UTF-8


def test_clean_text_is_returned_as_is() -> None:
    for text in ["plain ascii", "café 😀 日本", "", "x" * 1000]:
        assert sanitize_surrogates(text) is text
