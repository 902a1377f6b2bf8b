"""RFC 9535 paths, and the JSON text built from values that arrive at them."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tau.ai.streaming.json_path import JsonPathError, PathJsonWriter, parse_json_path


@pytest.mark.parametrize(
    ("path", "segments"),
    [
        ("$", []),
        ("$.a", ["a"]),
        ("$.foo.bar[0].data", ["foo", "bar", 0, "data"]),
        ("$['a b'][12]", ["a b", 12]),
        ('$["x\\"y"]', ['x"y']),
        ("$['it\\'s']", ["it's"]),
        ("$[ 'spaced' ][ 3 ]", ["spaced", 3]),
        ("$['tab\\there']", ["tab\there"]),
        ("$['\\u00e9\\ud83d\\ude00']", ["é😀"]),
        ("$.été._x1", ["été", "_x1"]),
    ],
)
def test_parse_singular_paths(path: str, segments: list[Any]) -> None:
    assert parse_json_path(path) == segments


@pytest.mark.parametrize(
    "path",
    [
        "a.b",
        "$..a",
        "$.*",
        "$[*]",
        "$[-1]",
        "$[01]",
        "$[1:2]",
        "$[?@.a]",
        "$.1a",
        "$['x\\q']",
        "$[",
    ],
)
def test_paths_that_select_no_single_value_are_refused(path: str) -> None:
    with pytest.raises(JsonPathError):
        parse_json_path(path)


def write(*values: tuple[str, Any] | tuple[str, Any, bool]) -> str:
    writer = PathJsonWriter()
    text = ""
    for value in values:
        path, scalar, *more = value
        text += writer.add(path, scalar, more=bool(more and more[0]))
    return text + writer.close()


def test_nested_objects_and_arrays() -> None:
    text = write(
        ("$.a.b[0].c", "x"),
        ("$.a.b[0].d", 1.5),
        ("$.a.b[1]", None),
        ("$.e", True),
        ("$.f[0][0]", 3),
        ("$.f[1]", False),
    )
    assert text == '{"a":{"b":[{"c":"x","d":1.5},null]},"e":true,"f":[[3],false]}'


def test_a_string_in_pieces_stays_inside_its_quotes() -> None:
    writer = PathJsonWriter()
    assert writer.add("$.s", 'say "', more=True) == '{"s":"say \\"'
    assert writer.open_string == "$.s"
    assert writer.add("$.s", "hi\n", more=True) == "hi\\n"
    assert writer.add("$.s", "", more=False) == '"'
    assert writer.open_string is None
    assert writer.close() == "}"


def test_a_new_path_closes_the_open_string() -> None:
    assert write(("$.s", "ab", True), ("$.n", 1)) == '{"s":"ab","n":1}'
    assert write(("$.s", "ab", True)) == '{"s":"ab"}'


def test_nothing_written_is_an_empty_object() -> None:
    assert PathJsonWriter().close() == "{}"


@pytest.mark.parametrize(
    "values",
    [
        [("$.a", 1), ("$.b", 2), ("$.a", 3)],  # a member again
        [("$.a.x", 1), ("$.b", 2), ("$.a.y", 3)],  # back into a closed object
        [("$.l[0]", 1), ("$.l[2]", 3)],  # an index skipped
        [("$.l[0]", 1), ("$.l.x", 2)],  # a name in an array
        [("$.o.x", 1), ("$.o[1]", 2)],  # an index on an object
        [("$", 1)],  # a value for the whole arguments
        [("$.n", float("nan"))],
        [("$.d", {"a": 1})],
    ],
)
def test_values_that_cannot_be_appended_are_refused(values: list[tuple[str, Any]]) -> None:
    with pytest.raises(JsonPathError):
        write(*values)


_scalar = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8)
)
# No empty containers: a path names a value, so {} and [] cannot be sent as one.
_tree = st.recursive(
    _scalar,
    lambda inner: (
        st.lists(inner, min_size=1, max_size=3)
        | st.dictionaries(st.text(max_size=4), inner, min_size=1, max_size=3)
    ),
    max_leaves=10,
)
json_arguments = st.dictionaries(st.text(max_size=4), _tree, min_size=1, max_size=4)
"""Tool arguments whose every container holds something (what values at paths can build)."""


def leaves(value: Any, path: str = "$") -> list[tuple[str, Any]]:
    """``(path, scalar)`` pairs in document order, names always in bracket notation."""
    if isinstance(value, dict):
        return [
            pair
            for key, child in value.items()
            for pair in leaves(child, f"{path}[{json.dumps(key)}]")
        ]
    if isinstance(value, list):
        return [pair for i, child in enumerate(value) for pair in leaves(child, f"{path}[{i}]")]
    return [(path, value)]


@settings(max_examples=150, deadline=None)
@given(arguments=json_arguments)
def test_written_text_is_the_compact_json_of_the_object(arguments: dict[str, Any]) -> None:
    text = write(*leaves(arguments))
    assert text == json.dumps(arguments, ensure_ascii=False, separators=(",", ":"))
    assert json.loads(text) == arguments
