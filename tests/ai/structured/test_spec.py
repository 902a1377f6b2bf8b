"""OutputSpec: every kind of output type becomes a wire schema (always an object), a name and
validators whose errors are written for the model."""

from __future__ import annotations

import dataclasses
from typing import Literal

import pytest
from pydantic import BaseModel, Field
from typing_extensions import TypedDict

from tau.ai.structured import OUTPUT_TOOL_NAME, OutputSpec, OutputValidationError


class City(BaseModel):
    """A city and its people."""

    name: str
    population: int = Field(ge=0)


class Trip(BaseModel):
    title: str
    stops: list[City]


class CityDict(TypedDict):
    name: str
    population: int


@dataclasses.dataclass
class Point:
    x: int
    y: int


def test_a_model_is_an_object_schema_named_after_the_class() -> None:
    spec = OutputSpec.of(City)
    assert not spec.wrapped
    assert spec.name == "City"
    assert spec.description == "A city and its people."
    assert spec.json_schema["required"] == ["name", "population"]
    assert spec.validate_json('{"name": "Paris", "population": 2}') == City(
        name="Paris", population=2
    )
    assert OutputSpec.of(spec) is spec


def test_a_non_object_type_travels_wrapped_and_comes_back_unwrapped() -> None:
    spec = OutputSpec.of(list[City])
    assert spec.wrapped
    schema = spec.json_schema
    assert schema["type"] == "object" and schema["required"] == ["response"]
    assert schema["properties"]["response"]["items"] == {"$ref": "#/$defs/City"}
    assert "City" in schema["$defs"]  # references still resolve from the root
    assert spec.validate_json('{"response": [{"name": "A", "population": 1}]}') == [
        City(name="A", population=1)
    ]
    literal = OutputSpec.of(Literal["yes", "no"])
    assert literal.wrapped and literal.validate_object({"response": "no"}) == "no"
    union = OutputSpec.of(City | Point)
    assert union.wrapped
    assert union.validate_object({"response": {"x": 1, "y": 2}}) == Point(1, 2)


def test_typed_dicts_and_dataclasses_are_objects() -> None:
    assert OutputSpec.of(CityDict).validate_json('{"name": "A", "population": 3}') == {
        "name": "A",
        "population": 3,
    }
    spec = OutputSpec.of(Point)
    assert not spec.wrapped
    assert spec.validate_json('{"x": 1, "y": 2}') == Point(1, 2)


def test_validation_errors_name_every_problem_and_quote_the_answer() -> None:
    spec = OutputSpec.of(Trip)
    with pytest.raises(OutputValidationError) as info:
        spec.validate_json('{"stops": [{"name": "A", "population": -1}]}')
    error = info.value
    assert ("title", "Field required") in error.errors
    assert any(path == "stops/0/population" for path, _ in error.errors)
    text = str(error)
    assert "title: Field required" in text and '"population": -1' in text
    with pytest.raises(OutputValidationError, match="Invalid JSON"):
        spec.validate_json("{nope")


def test_a_json_schema_dict_is_validated_with_jsonschema_rs() -> None:
    schema = {
        "title": "Person card",
        "type": "object",
        "properties": {"age": {"type": "integer", "minimum": 0}},
        "required": ["age"],
    }
    spec = OutputSpec.of(schema)
    assert spec.name == "Person_card" and not spec.wrapped
    assert spec.validate_json('{"age": 4}') == {"age": 4}
    with pytest.raises(OutputValidationError) as info:
        spec.validate_json('{"age": -4}')
    assert info.value.errors[0][0] == "age"
    wrapped = OutputSpec.of({"type": "array", "items": {"type": "string"}})
    assert wrapped.wrapped and wrapped.validate_json('{"response": ["a"]}') == ["a"]


def test_a_spec_survives_pickling_with_its_name_and_description() -> None:
    # Ray sends an agent factory (and so its output spec) to its workers by pickle; a schema
    # dict's compiled validator cannot be pickled, so the spec is rebuilt from its source.
    import pickle

    schema = {"type": "object", "properties": {"age": {"type": "integer", "minimum": 0}}}
    for spec in (OutputSpec(schema, name="card", description="One card."), OutputSpec.of(City)):
        again = pickle.loads(pickle.dumps(spec))
        assert (again.name, again.description) == (spec.name, spec.description)
        assert again.json_schema == spec.json_schema
    again = pickle.loads(pickle.dumps(OutputSpec(schema, name="card")))
    with pytest.raises(OutputValidationError):
        again.validate_json('{"age": -4}')


def test_the_output_tool_and_the_native_option_carry_the_wire_schema() -> None:
    spec = OutputSpec.of(City)
    tool = spec.tool
    assert tool.name == OUTPUT_TOOL_NAME and tool.json_schema == spec.json_schema
    assert spec.output_schema == {
        "name": "City",
        "schema": spec.json_schema,
        "description": "A city and its people.",
    }
    assert '"population"' in spec.instructions


def test_partial_validation_fills_what_has_arrived() -> None:
    spec = OutputSpec.of(Trip)
    ok, partial = spec.validate_partial({"title": "T", "stops": [{"name": "Pa"}]})
    assert ok
    assert type(partial).__name__ == "PartialTrip"
    assert partial.title == "T" and partial.stops[0].name == "Pa"
    assert partial.stops[0].population is None
    # A value that cannot become valid is not a partial.
    assert spec.validate_partial({"title": 5}) == (False, None)
    # A wrapped output has no partial before its key.
    assert OutputSpec.of(list[City]).validate_partial({}) == (False, None)
    # A JSON Schema output's partial is a copy of the object so far.
    source = {"age": 1}
    ok, copied = OutputSpec.of({"type": "object"}).validate_partial(source)
    assert ok and copied == source and copied is not source


class Node(BaseModel):
    value: int
    children: list[Node] = []


def test_a_recursive_model_has_a_partial_form() -> None:
    spec = OutputSpec.of(Node)
    assert not spec.wrapped and spec.json_schema["type"] == "object"
    ok, partial = spec.validate_partial({"value": 1, "children": [{"value": 2}]})
    assert ok and partial.value == 1


def test_an_output_type_that_is_neither_raises_at_once() -> None:
    with pytest.raises(TypeError, match="output_type"):
        OutputSpec.of(object())
    with pytest.raises(ValueError, match="not a valid JSON Schema"):
        OutputSpec.of({"type": "no-such-type"})
