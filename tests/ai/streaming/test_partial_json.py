"""Partial JSON for streamed tool-call arguments: every prefix, every split, every parser path."""

from __future__ import annotations

import itertools
import json
import math
from typing import Any

import jiter
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tau.ai import ToolCall
from tau.ai.streaming.partial_json import IncrementalJsonParser, parse_streaming_json


class TokenByToken(IncrementalJsonParser):
    """Never uses the C scanner and parses after every delta: the pure state machine."""

    descend_threshold = -1
    feed_batch = 0


class EagerDescent(IncrementalJsonParser):
    """Tries the scanner, enters any unfinished container at once, parses after every delta."""

    descend_threshold = 0
    feed_batch = 1


PARSERS: list[type[IncrementalJsonParser]] = [IncrementalJsonParser, TokenByToken, EagerDescent]

TRICKY = [
    '{"a": 1, "b": "hel\\"lo\\n\\u00e9\\ud83d\\ude00", "c": [1, -1.5e-3, true, false, null]}',
    '{ "path" : "/a/b" ,\n "content": "line1\\nline2\\t\\\\ \\"q\\" \\u2603 café 😀 日本" }',
    '{"escapes": "\\\\\\"\\/\\b\\f\\n\\r\\t\\u0000\\u001f\\uFFFF", "bs": "\\\\", "q": "\\""}',
    '{"nums": [0, -0, 1, -1, 12.5, -1.5e-3, 1E5, 2e+10, 3.0e-0, 123456789012345678901234567890]}',
    '{"empty": {}, "list": [], "nested": [[], [{}], {"x": [[[]]]}], "": ""}',
    '{"a":[{"b":{"c":[1,2,{"d":"\\\\"}]}}],"e":{"f":{"g":{}}}}',
    '{\n  "indented": [\n    1,\n    {\n      "k": "v"\n    }\n  ],\n  "t": true\n}\n',
    '{"emoji": "😀👍🏽🇩🇪", "pair": "\\ud83d\\ude00\\ud83d\\udc4d", "lone_low": "x"}',
    '{"lit": [true, false, null], "after": "x", "t":true,"f":false,"n":null}',
    "{}",
    "   {   }   ",
    '{"k": "a string with a closing-looking \\\\\\" inside and a real end"}',
]


def reference(prefix: str) -> dict[str, Any]:
    """jiter's partial parse of a prefix, as a dict (``{}`` for nothing, or not an object)."""
    try:
        value = jiter.from_json(prefix.encode(), partial_mode="trailing-strings")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


# --------------------------------------------------------------------------- pi's examples


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a": 1, "b": "hel', {"a": 1, "b": "hel"}),
        ('{"a": [1, 2', {"a": [1, 2]}),
        ("garbage", {}),
        ('{"a":1}}', {"a": 1}),
        ("", {}),
        ("   \n", {}),
        ("[1, 2]", {}),
        ('"a string"', {}),
        ("42", {}),
        ("null", {}),
        ('{"a": 1, x', {"a": 1}),
        ('{"a": 1} trailing words', {"a": 1}),
        ('{"a": "x\ny"}', {"a": "x\ny"}),  # a raw newline: invalid JSON, kept best effort
        ('{"a": "ok", "b": "bad \\x escape"}', {"a": "ok", "b": "bad "}),
        ('{"a": tru}', {}),
        ('{"a": 01}', {"a": 0}),
    ],
)
def test_parse_streaming_json_examples(text: str, expected: dict[str, Any]) -> None:
    assert parse_streaming_json(text) == expected
    parser = IncrementalJsonParser()
    parser.feed(text)
    assert parser.final() == expected


# --------------------------------------------------------------------------- every prefix


@pytest.mark.parametrize("cls", PARSERS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("doc", TRICKY)
def test_every_prefix_matches_jiter(cls: type[IncrementalJsonParser], doc: str) -> None:
    expected = json.loads(doc)
    for i in range(len(doc) + 1):
        prefix = doc[:i]
        parser = cls()
        parser.feed(prefix)
        value = parser.value()
        assert isinstance(value, dict)
        assert value == reference(prefix), prefix
        assert parse_streaming_json(prefix) == reference(prefix), prefix
    parser = cls()
    parser.feed(doc)
    assert parser.value() == expected
    assert parser.final() == expected


@pytest.mark.parametrize("cls", PARSERS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("doc", TRICKY)
def test_char_by_char_with_value_after_each(cls: type[IncrementalJsonParser], doc: str) -> None:
    parser = cls()
    for i, ch in enumerate(doc):
        parser.feed(ch)
        assert parser.value() == reference(doc[: i + 1]), doc[: i + 1]
    assert parser.value() == json.loads(doc)
    assert parser.final() == json.loads(doc)
    assert parser.text == doc


@pytest.mark.parametrize("cls", PARSERS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("doc", TRICKY)
def test_char_by_char_value_only_at_end(cls: type[IncrementalJsonParser], doc: str) -> None:
    parser = cls()
    for ch in doc:
        parser.feed(ch)
    assert parser.value() == json.loads(doc)
    assert parser.final() == json.loads(doc)


def test_surrogate_pair_split_across_deltas() -> None:
    parser = IncrementalJsonParser()
    for delta in ['{"a": "x', "\\ud8", "3d", "\\u", "de00", ' y"}']:
        parser.feed(delta)
        text = parser.value().get("a", "")
        # A half pair is never shown: the text stays encodable.
        text.encode()
    assert parser.final() == {"a": "x😀 y"}


def test_high_surrogate_held_back_until_its_pair() -> None:
    parser = TokenByToken()
    parser.feed('{"a": "x\\ud83d')
    assert parser.value() == {"a": "x"}
    parser.feed("\\ude00")
    assert parser.value() == {"a": "x😀"}
    parser.feed('"}')
    assert parser.final() == {"a": "x😀"}


def test_lone_surrogate_escape_matches_json_loads() -> None:
    doc = '{"a": "\\ud800", "b": "\\udc00x"}'
    parser = IncrementalJsonParser()
    for ch in doc:
        parser.feed(ch)
    assert parser.final() == json.loads(doc)


def test_long_string_streams_as_prefix() -> None:
    body = 'line with \\"quotes\\" and \\\\ back\\\\slashes and é 😀\\n' * 500
    doc = '{"path": "/x", "content": "' + body + '"}'
    expected = json.loads(doc)
    parser = IncrementalJsonParser()
    seen = 0
    for i in range(0, len(doc), 37):
        parser.feed(doc[i : i + 37])
        content = parser.value().get("content", "")
        assert expected["content"].startswith(content)
        assert len(content) >= seen
        seen = len(content)
    assert parser.final() == expected


def test_structured_list_streams_element_by_element() -> None:
    items = [{"id": i, "name": f"n{i}", "tags": ["a", "b"], "ok": i % 2 == 0} for i in range(400)]
    doc = json.dumps({"items": items})
    parser = IncrementalJsonParser()
    counts = []
    for i in range(0, len(doc), 50):
        parser.feed(doc[i : i + 50])
        value = parser.value()
        counts.append(len(value.get("items", [])))
        assert value.get("items", []) == [
            dict(item) for item in reference(doc[: i + 50]).get("items", [])
        ]
    assert counts == sorted(counts)
    assert parser.final() == {"items": items}


def test_value_is_cached_until_next_delta() -> None:
    parser = IncrementalJsonParser()
    parser.feed('{"a": [1, 2')
    first = parser.value()
    assert parser.value() is first
    parser.feed(", 3]}")
    assert parser.value() == {"a": [1, 2, 3]}


def test_incomplete_numbers_and_literals_are_left_out() -> None:
    for text, expected in [
        ('{"a": -', {}),
        ('{"a": 1.', {}),
        ('{"a": 1e', {}),
        ('{"a": 1e+', {}),
        ('{"a": 12', {"a": 12}),
        ('{"a": -1.5e-3', {"a": -1.5e-3}),
        ('{"a": tr', {}),
        ('{"a": [1, 2.', {"a": [1]}),
        ('{"a": [fals', {"a": []}),
        ('{"a": nul', {}),
    ]:
        for cls in PARSERS:
            parser = cls()
            parser.feed(text)
            assert parser.value() == expected, (cls, text)


def test_number_shown_then_withdrawn_while_it_grows() -> None:
    parser = TokenByToken()
    parser.feed('{"a": [1')
    assert parser.value() == {"a": [1]}
    parser.feed(".")
    assert parser.value() == {"a": []}
    parser.feed("5]")
    assert parser.value() == {"a": [1.5]}


def test_nan_and_infinity_like_json_loads() -> None:
    doc = '{"a": NaN, "b": Infinity, "c": -Infinity, "d": [NaN]}'
    for cls in PARSERS:
        parser = cls()
        for ch in doc:
            parser.feed(ch)
            parser.value()
        value = parser.value()
        assert math.isnan(value["a"]) and value["b"] == math.inf and value["c"] == -math.inf
        assert math.isnan(parser.final()["d"][0])


def test_deep_nesting_never_raises() -> None:
    depth = 50_000
    doc = '{"a": ' + "[" * depth + "]" * depth + "}"
    parser = IncrementalJsonParser()
    for i in range(0, len(doc), 1000):
        parser.feed(doc[i : i + 1000])
        assert isinstance(parser.value(), dict)
    result = parser.final()  # json.loads gives up with RecursionError here
    assert isinstance(result, dict) and isinstance(result["a"], list)


def test_pathological_long_tokens_do_not_break() -> None:
    key = "k" * 100_000
    number = "1" * 3000
    doc = '{"' + key + '": ' + number + ', "b": "' + "\\\\" * 50_000 + '"}'
    parser = IncrementalJsonParser()
    for i in range(0, len(doc), 100):
        parser.feed(doc[i : i + 100])
    assert parser.final() == json.loads(doc)


def test_huge_integer_beyond_int_limit_is_best_effort() -> None:
    doc = '{"a": 1, "b": ' + "9" * 5000 + "}"
    assert parse_streaming_json(doc) == {"a": 1}


def test_text_is_everything_fed() -> None:
    parser = IncrementalJsonParser()
    for piece in ['{"a"', ": 1}", "  junk"]:
        parser.feed(piece)
    assert parser.text == '{"a": 1}  junk'
    assert parser.final() == {"a": 1}


def test_tool_call_arguments_while_streaming() -> None:
    call = ToolCall("id1", "write")
    assert call.arguments == {}
    call.feed_arguments('{"path": "/tmp/x", "content": "hel')
    assert call.arguments == {"path": "/tmp/x", "content": "hel"}
    call.feed_arguments('lo"}')
    assert call.arguments_text == '{"path": "/tmp/x", "content": "hello"}'
    call.finish_arguments()
    assert call.arguments == {"path": "/tmp/x", "content": "hello"}


# --------------------------------------------------------------------------- properties

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: (
        st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=8), children, max_size=5)
    ),
    max_leaves=25,
)
json_objects = st.dictionaries(st.text(max_size=8), json_values, max_size=6)


@st.composite
def dumped(draw: st.DrawFn) -> str:
    obj = draw(json_objects)
    return json.dumps(
        obj,
        ensure_ascii=draw(st.booleans()),
        indent=draw(st.sampled_from([None, 0, 2])),
        separators=draw(st.sampled_from([None, (",", ":"), (" , ", " : ")])),
    )


def split_points(text: str, cuts: list[int]) -> list[str]:
    points = sorted({c % (len(text) + 1) for c in cuts} | {0, len(text)})
    return [text[a:b] for a, b in itertools.pairwise(points)]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(doc=dumped(), cuts=st.lists(st.integers(min_value=0), max_size=30), which=st.integers(0, 2))
def test_any_split_gives_json_loads(doc: str, cuts: list[int], which: int) -> None:
    parser = PARSERS[which]()
    for piece in split_points(doc, cuts):
        parser.feed(piece)
    assert parser.final() == json.loads(doc)
    assert parser.value() == json.loads(doc)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(doc=dumped(), cuts=st.lists(st.integers(min_value=0), max_size=30), which=st.integers(0, 2))
def test_every_split_point_is_a_dict_matching_jiter(doc: str, cuts: list[int], which: int) -> None:
    parser = PARSERS[which]()
    fed = ""
    for piece in split_points(doc, cuts):
        parser.feed(piece)
        fed += piece
        value = parser.value()
        assert isinstance(value, dict)
        assert value == reference(fed), fed
    assert parser.final() == json.loads(doc)


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(doc=dumped())
def test_every_prefix_is_a_dict(doc: str) -> None:
    for i in range(len(doc) + 1):
        value = parse_streaming_json(doc[:i])
        assert isinstance(value, dict)
        assert value == reference(doc[:i]), doc[:i]


@settings(max_examples=300, deadline=None)
@given(text=st.text(alphabet=st.sampled_from('{}[]":,\\ u0123456789.eE-+tfnrsalNI\n'), max_size=60))
def test_garbage_never_raises(text: str) -> None:
    for cls in PARSERS:
        parser = cls()
        for ch in text:
            parser.feed(ch)
            assert isinstance(parser.value(), dict)
        assert isinstance(parser.final(), dict)
    assert isinstance(parse_streaming_json(text), dict)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(doc=dumped(), data=st.data())
def test_corrupted_json_never_raises(doc: str, data: st.DataObject) -> None:
    i = data.draw(st.integers(0, len(doc)))
    junk = data.draw(st.text(max_size=3))
    bad = doc[:i] + junk + doc[i + 1 :]
    parser = PARSERS[data.draw(st.integers(0, 2))]()
    for ch in bad:
        parser.feed(ch)
        assert isinstance(parser.value(), dict)
    assert isinstance(parser.final(), dict)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=json_values, cuts=st.lists(st.integers(min_value=0), max_size=20))
def test_any_json_value_every_prefix_is_a_dict(value: Any, cuts: list[int]) -> None:
    """Top-level arrays, strings, numbers and literals give ``{}``; objects give themselves."""
    doc = json.dumps(value)
    expected = value if isinstance(value, dict) else {}
    for i in range(len(doc) + 1):
        assert isinstance(parse_streaming_json(doc[:i]), dict)
    parser = IncrementalJsonParser()
    for piece in split_points(doc, cuts):
        parser.feed(piece)
        assert isinstance(parser.value(), dict)
    assert parser.final() == expected == parse_streaming_json(doc)


@pytest.mark.parametrize(
    ("text", "cut"),
    [
        ('{"a": 1}', False),
        ('{"a": "hel', True),  # inside a string
        ('{"a": "x\\', True),  # inside an escape
        ('{"a": 12', True),  # a number that may go on
        ('{"a": tr', True),
        ('{"a"', True),  # a key without its value
        ('{"a": [1, {"b": 2}', True),
        ("{", True),
        ('{"a": 1}}', False),  # closed, then junk: malformed, not cut
        ('{"a" 1}', False),  # malformed
        ("[1, 2", False),  # not an object: nothing of the arguments was opened
        ("", False),
        ("  ", False),
    ],
)
def test_cut_off_tells_a_cut_stream_from_a_finished_or_malformed_one(text: str, cut: bool) -> None:
    for parser_class in PARSERS:
        parser = parser_class()
        parser.feed(text)
        parser.final()
        assert parser.cut_off is cut, (parser_class, text)
    call = ToolCall("c", "f")
    call.feed_arguments(text)
    assert call.finish_arguments() is not cut


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    value=st.dictionaries(st.text(max_size=5), json_values, min_size=1, max_size=4), data=st.data()
)
def test_every_proper_prefix_of_an_object_is_cut_off(
    value: dict[str, Any], data: st.DataObject
) -> None:
    doc = json.dumps(value)
    i = data.draw(st.integers(1, len(doc) - 1))
    parser = PARSERS[data.draw(st.integers(0, len(PARSERS) - 1))]()
    for piece in split_points(doc[:i], data.draw(st.lists(st.integers(min_value=0), max_size=5))):
        parser.feed(piece)
    parser.final()
    assert parser.cut_off
    parser = IncrementalJsonParser()
    parser.feed(doc)
    parser.final()
    assert not parser.cut_off
