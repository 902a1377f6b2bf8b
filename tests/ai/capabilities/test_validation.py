"""Tool-argument validation: pydantic models (lax) and JSON Schema dicts (Ajv-style coercion)."""

from __future__ import annotations

import copy
import json
from typing import Any

import pydantic
import pytest

from tau.ai import Tool, ToolCall
from tau.ai.capabilities.validation import (
    ToolValidationError,
    validate_tool_arguments,
    validate_tool_call,
)

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "n": {"type": "number"},
        "i": {"type": "integer"},
        "s": {"type": "string"},
        "b": {"type": "boolean"},
        "tags": {"type": "array", "items": {"type": "integer"}},
        "opt": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
        "nested": {
            "type": "object",
            "properties": {"deep": {"type": "array", "items": {"type": "boolean"}}},
        },
    },
    "required": ["s", "n"],
}


def call(arguments: dict[str, Any], name: str = "t") -> ToolCall:
    return ToolCall("call_1", name, arguments)


def test_pi_verified_coercions() -> None:
    tool = Tool("t", "", SCHEMA)
    assert validate_tool_call([tool], call({"n": "42", "s": 5, "b": "true"})) == {
        "n": 42,
        "s": "5",
        "b": True,
    }


@pytest.mark.parametrize(
    ("schema", "value", "expected"),
    [
        ({"type": "number"}, "1.5", 1.5),
        ({"type": "number"}, " -3e2 ", -300.0),
        ({"type": "number"}, True, 1),
        ({"type": "number"}, None, 0),
        ({"type": "integer"}, "7", 7),
        ({"type": "integer"}, "7.0", 7),
        ({"type": "integer"}, 7.0, 7),
        ({"type": "string"}, 12, "12"),
        ({"type": "string"}, 1.5, "1.5"),
        ({"type": "string"}, 2.0, "2"),
        ({"type": "string"}, False, "false"),
        ({"type": "string"}, None, ""),
        ({"type": "boolean"}, "false", False),
        ({"type": "boolean"}, 1, True),
        ({"type": "boolean"}, 0, False),
        ({"type": "boolean"}, None, False),
        ({"type": "null"}, "", None),
        ({"type": "null"}, 0, None),
        ({"type": "null"}, False, None),
        ({"type": "array", "items": {"type": "integer"}}, "3", [3]),
        ({"type": "array", "items": {"type": "string"}}, 3, ["3"]),
        ({"type": "array", "items": {"type": "integer"}}, '[1, "2"]', [1, 2]),
        ({"type": "object", "properties": {"a": {"type": "integer"}}}, '{"a": "1"}', {"a": 1}),
        ({"type": ["integer", "null"]}, "4", 4),
        ({"type": ["integer", "null"]}, None, None),
        ({"type": ["string", "integer"]}, 5, 5),
        ({"anyOf": [{"type": "integer"}, {"type": "null"}]}, "9", 9),
        ({"anyOf": [{"type": "string"}, {"type": "integer"}]}, 9, 9),
        ({"oneOf": [{"type": "boolean"}, {"type": "array"}]}, "true", True),
        ({"allOf": [{"type": "integer"}, {"minimum": 0}]}, "3", 3),
        ({"enum": [1, 2, 3]}, "2", 2),
        ({"const": True}, "true", True),
        ({"$ref": "#/$defs/Count"}, "5", 5),
        (
            {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}]},
            ["1", 2],
            [1, "2"],
        ),
    ],
)
def test_coercion_rules(schema: dict[str, Any], value: Any, expected: Any) -> None:
    full = {
        "type": "object",
        "properties": {"v": schema},
        "$defs": {"Count": {"type": "integer"}},
    }
    out = validate_tool_arguments(Tool("t", "", full), call({"v": value}))
    assert out == {"v": expected}
    assert type(out["v"]) is type(expected)


def test_draft7_tuple_items_are_coerced() -> None:
    items = {"type": "array", "items": [{"type": "integer"}], "additionalItems": {"type": "string"}}
    schema = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {"v": items},
    }
    assert validate_tool_arguments(Tool("t", "", schema), call({"v": ["1", 2]})) == {"v": [1, "2"]}


def test_additional_and_pattern_properties_are_coerced() -> None:
    schema = {
        "type": "object",
        "patternProperties": {"^n_": {"type": "integer"}},
        "additionalProperties": {"type": "boolean"},
    }
    out = validate_tool_arguments(Tool("t", "", schema), call({"n_1": "2", "flag": "true"}))
    assert out == {"n_1": 2, "flag": True}


def test_uncoercible_values_are_reported_not_guessed() -> None:
    tool = Tool("t", "", SCHEMA)
    with pytest.raises(ToolValidationError) as info:
        validate_tool_call([tool], call({"n": "abc", "i": "1.5", "tags": ["x"], "b": "yes"}))
    error = info.value
    assert error.tool_name == "t"
    paths = [path for path, _ in error.errors]
    assert paths == sorted(paths, key=paths.index)  # stable order
    assert set(paths) == {"s", "n", "i", "tags/0", "b"}
    text = str(error)
    assert text.startswith('Validation failed for tool "t":\n  - ')
    assert '  - s: "s" is a required property' in text
    assert '  - n: "abc" is not of type "number"' in text
    assert text.endswith(
        "\n\nReceived arguments:\n"
        + json.dumps({"n": "abc", "i": "1.5", "tags": ["x"], "b": "yes"}, indent=2)
    )
    assert isinstance(error, ValueError)


def test_root_path_and_nested_paths() -> None:
    tool = Tool("t", "", {"type": "object", "properties": {}, "additionalProperties": False})
    with pytest.raises(ToolValidationError) as info:
        validate_tool_arguments(tool, call({"x": 1}))
    assert info.value.errors[0][0] == "root"
    tool = Tool("t", "", SCHEMA)
    with pytest.raises(ToolValidationError) as info:
        validate_tool_arguments(tool, call({"s": "", "n": 1, "nested": {"deep": ["maybe"]}}))
    assert info.value.errors == [("nested/deep/0", '"maybe" is not of type "boolean"')]


def test_formats_are_checked() -> None:
    tool = Tool(
        "t", "", {"type": "object", "properties": {"e": {"type": "string", "format": "email"}}}
    )
    with pytest.raises(ToolValidationError, match="e: "):
        validate_tool_arguments(tool, call({"e": "not an email"}))
    assert validate_tool_arguments(tool, call({"e": "a@b.org"})) == {"e": "a@b.org"}


def test_input_is_never_mutated_and_result_never_aliases_it() -> None:
    args = {"n": "1", "s": "x", "nested": {"deep": ["true", True]}, "free": {"k": [1]}}
    before = copy.deepcopy(args)
    tool_call = call(args)
    out = validate_tool_arguments(Tool("t", "", SCHEMA), tool_call)
    assert args == before and tool_call.arguments == before
    assert out["nested"] == {"deep": [True, True]}
    out["free"]["k"].append(2)
    assert args["free"] == {"k": [1]}


def test_tool_not_found_names_the_tools() -> None:
    tools = [Tool("read", "", SCHEMA), Tool("write", "", SCHEMA)]
    with pytest.raises(ToolValidationError, match='Tool "Read" not found') as info:
        validate_tool_call(tools, call({}, name="Read"))
    assert '"read", "write"' in str(info.value)
    with pytest.raises(ToolValidationError, match="available tools: none"):
        validate_tool_call([], call({}))


def test_invalid_schema_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match='Tool "t" has an invalid parameters schema'):
        validate_tool_arguments(Tool("t", "", {"type": "nope"}), call({}))


def test_remote_refs_are_not_fetched() -> None:
    schema = {"type": "object", "properties": {"a": {"$ref": "https://example.com/s.json"}}}
    with pytest.raises(ValueError, match="invalid parameters schema"):
        validate_tool_arguments(Tool("t", "", schema), call({"a": 1}))


def test_validators_are_compiled_once_per_schema(monkeypatch: pytest.MonkeyPatch) -> None:
    import jsonschema_rs

    compiled: list[Any] = []
    real = jsonschema_rs.validator_for

    def counting(schema: Any, **kwargs: Any) -> Any:
        compiled.append(schema)
        return real(schema, **kwargs)

    monkeypatch.setattr(jsonschema_rs, "validator_for", counting)
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}}
    tool = Tool("t", "", schema)
    for _ in range(5):
        validate_tool_arguments(tool, call({"a": "1"}))
    assert len(compiled) == 1


def test_recursive_refs_terminate() -> None:
    schema = {
        "type": "object",
        "properties": {"tree": {"$ref": "#/$defs/Node"}},
        "$defs": {
            "Node": {
                "type": "object",
                "properties": {
                    "v": {"type": "integer"},
                    "kids": {"type": "array", "items": {"$ref": "#/$defs/Node"}},
                },
            },
            "Loop": {"$ref": "#/$defs/Loop"},
        },
    }
    tree = {"v": "1", "kids": [{"v": "2", "kids": [{"v": "3"}]}]}
    out = validate_tool_arguments(Tool("t", "", schema), call({"tree": tree}))
    assert out == {"tree": {"v": 1, "kids": [{"v": 2, "kids": [{"v": 3}]}]}}


# --------------------------------------------------------------------------- pydantic


class WriteArgs(pydantic.BaseModel):
    path: str
    count: int = 1
    tags: list[str] = []


def test_pydantic_model_lax_validation_and_defaults() -> None:
    tool = Tool("write", "", WriteArgs)
    out = validate_tool_call([tool], call({"path": "/x", "count": "3"}, name="write"))
    assert out == {"path": "/x", "count": 3, "tags": []}


def test_pydantic_errors_in_one_message() -> None:
    tool = Tool("write", "", WriteArgs)
    with pytest.raises(ToolValidationError) as info:
        validate_tool_arguments(tool, call({"count": "many", "tags": [1]}, name="write"))
    error = info.value
    assert [p for p, _ in error.errors] == ["path", "count", "tags/0"]
    text = str(error)
    assert text.startswith('Validation failed for tool "write":\n  - path: Field required\n')
    assert text.endswith('Received arguments:\n{\n  "count": "many",\n  "tags": [\n    1\n  ]\n}')
