"""Hostile input to typed output: schemas that are not schemas, answers that are not JSON,
answers that are huge or nested past any recursion limit, prose full of braces, a schema
too deep for a provider's strict form. Each ends in a clear error or a value, never a
traceback from inside tau, a hang or unbounded work."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pydantic
import pytest

from tau.ai import StructuredOutputError, complete_structured, stream_structured
from tau.ai.providers.faux import FauxResponse, faux_model, text
from tau.ai.providers.faux import tool_call as call
from tau.ai.structured import (
    NOTHING,
    OUTPUT_TOOL_NAME,
    OutputSpec,
    OutputValidationError,
    PartialOutput,
    find_json,
)
from tests import factories


class Note(pydantic.BaseModel):
    title: str
    body: str


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        ({"type": 5}, "not a valid JSON Schema"),
        ({"type": "object", "required": "name"}, "not a valid JSON Schema"),
        ({"$ref": "http://example.com/schema.json"}, "tau does no network I/O"),
        ({"properties": {"a": {"$ref": "#/$defs/missing"}}}, "does not exist"),
    ],
)
def test_a_schema_that_is_not_a_schema_is_refused_at_the_call(
    schema: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        stream_structured(faux_model([]), "x", schema)


def test_something_that_is_neither_a_type_nor_a_schema_is_a_type_error() -> None:
    for bad in (42, "a string", object()):
        with pytest.raises(TypeError, match="output_type"):
            OutputSpec.of(bad)


async def test_an_answer_that_is_not_json_is_retried_then_fails_with_the_raw_text() -> None:
    prose = "I think the answer is forty-two, honestly."
    model = faux_model([FauxResponse([text(prose)])] * 2)
    with pytest.raises(StructuredOutputError) as info:
        await complete_structured(model, "x", Note, mode="prompted")
    error = info.value
    assert error.reason == "invalid" and len(error.attempts) == 2
    assert error.raw_text == prose
    assert error.errors[0][1].startswith("Invalid JSON")


async def test_tool_mode_without_the_output_call_asks_for_it() -> None:
    model = faux_model(
        [
            FauxResponse([text("Here you go!"), call("unknown_tool", {"x": 1}, id="u1")]),
            FauxResponse([call(OUTPUT_TOOL_NAME, {"title": "t", "body": "b"})]),
        ]
    )
    s = stream_structured(model, "x", Note, mode="tool")
    result = await s.result()
    assert result.output == Note(title="t", body="b")
    # The stray call got its result, and a user message asked for the output tool.
    follow = s.context.messages[-2:]
    assert follow[0].role == "toolResult" and follow[0].tool_call_id == "u1"  # type: ignore[union-attr]
    assert follow[1].role == "user" and OUTPUT_TOOL_NAME in str(follow[1].content)


async def test_an_answer_nested_past_the_recursion_limit_is_a_validation_error() -> None:
    deep = '{"a": ' + "[" * 100_000 + "]" * 100_000 + "}"
    model = faux_model([FauxResponse([text(deep)], chunk_size=4096)])
    with pytest.raises(StructuredOutputError) as info:
        await complete_structured(model, "x", dict[str, Any], mode="native", max_retries=0)
    assert info.value.reason == "invalid"
    assert "recursion" in str(info.value) and len(str(info.value)) < 5000  # quoted, not dumped


async def test_a_huge_answer_streams_with_a_bounded_number_of_validations() -> None:
    body = "x" * 2_000_000
    answer = json.dumps({"title": "big", "body": body})
    model = faux_model([FauxResponse([text(answer)], chunk_size=200)])  # 10,000 deltas
    calls = 0
    real = OutputSpec.validate_partial

    def counting(self: OutputSpec[Any], data: dict[str, Any]) -> tuple[bool, Any]:
        nonlocal calls
        calls += 1
        return real(self, data)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(OutputSpec, "validate_partial", counting)
        s = stream_structured(model, "x", Note, mode="native")
        partials = [p async for p in s]
        result = await s.result()
    assert len(result.output.body) == 2_000_000 and partials[-1] == result.output
    # Validations grow with the logarithm of the size once the answer is long, not with the
    # number of deltas: the whole stream costs a few validations of the final object.
    assert calls < 150


def test_partials_never_repeat_and_the_schedule_is_geometric() -> None:
    tracker = PartialOutput(OutputSpec.of(Note))
    answer = json.dumps({"title": "t" * 10_000, "body": "b"})
    steps = [tracker.feed(answer[i : i + 10]) for i in range(0, len(answer), 10)]
    values = [p for p in steps if p is not NOTHING]
    assert all(a != b for a, b in itertools.pairwise(values))
    # 1,002 deltas; after the first few, one validation per 20% of growth.
    assert 10 < len(values) < 60
    assert values[-1].title == "t" * len(values[-1].title)
    # The tail that did not grow the text by 20% is not validated: the final value settles it.
    final = OutputSpec.of(Note).validate_json(answer)
    assert tracker.settle(final) is final and tracker.settle(final) is NOTHING


def test_prose_full_of_braces_is_searched_a_bounded_number_of_times() -> None:
    prose = "{ not json " * 50_000 + '{"title": "t", "body": "b"}'
    # Only the first candidates are tried: the answer after 50,000 braces is not found, and
    # the search returns at once instead of decoding 50,000 times.
    assert find_json(prose) == prose.strip()
    with pytest.raises(OutputValidationError):
        OutputSpec.of(Note).validate_json(find_json(prose))
    assert json.loads(find_json('Sure: {"title": "t", "body": "b"} hope it helps')) == {
        "title": "t",
        "body": "b",
    }


async def test_a_schema_too_deep_for_strict_mode_ends_as_a_provider_error() -> None:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(100):
        schema = {"type": "object", "properties": {"x": schema}, "required": ["x"]}
    model = factories.model("openai-completions", "openai", "gpt-4.1", "http://127.0.0.1:9")
    with pytest.raises(StructuredOutputError) as info:
        await complete_structured(model, "x", schema, mode="native", api_key="k")
    assert info.value.reason == "error" and "nested deeper" in str(info.value)
