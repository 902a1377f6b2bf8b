"""Typed output from the embedded SmolLM2 (135M): the grammar compiled from the schema lets it
produce nothing but a valid instance, nested models and lists included."""

from __future__ import annotations

import itertools
from typing import Literal

from pydantic import BaseModel

from tau.ai import complete_structured, stream_structured
from tau.ai.lookup.local_models import default_local_model


class Address(BaseModel):
    city: str
    country: str


class Person(BaseModel):
    name: str
    age: int
    address: Address
    hobbies: list[str]


async def test_the_135m_model_produces_a_valid_nested_model_under_the_grammar() -> None:
    s = stream_structured(
        default_local_model(),
        "Describe a fictional person living in Paris.",
        Person,
        max_tokens=200,
    )
    assert s.mode == "native"  # auto: the grammar
    partials = [p async for p in s]
    result = await s.result()
    assert isinstance(result.output, Person) and isinstance(result.output.address, Address)
    assert len(result.attempts) == 1  # valid on the first try: the grammar admits nothing else
    assert result.message.stop_reason == "stop"
    assert partials[-1] == result.output
    assert all(a != b for a, b in itertools.pairwise(partials))
    assert Person.model_validate_json(result.message.text) == result.output


async def test_a_wrapped_literal_and_a_json_schema_dict_on_the_local_model() -> None:
    verdict = await complete_structured(
        default_local_model(), "Is Paris in France? Answer yes or no.", Literal["yes", "no"]
    )
    assert verdict.output in ("yes", "no")
    schema = {
        "type": "object",
        "properties": {"colors": {"type": "array", "items": {"type": "string"}, "maxItems": 3}},
        "required": ["colors"],
        "additionalProperties": False,
    }
    colors = await complete_structured(
        default_local_model(), "Name up to three colors.", schema, max_tokens=80
    )
    assert isinstance(colors.output["colors"], list) and len(colors.output["colors"]) <= 3
