"""complete_structured / stream_structured through the normal stream entry point, on the
faux provider: modes, partials, retries with the errors in the context, and every way an
answer can fail to be an output."""

from __future__ import annotations

import asyncio
import itertools
import json

import pytest
from pydantic import BaseModel

from tau.ai import (
    AbortController,
    StructuredOutputError,
    ToolResultMessage,
    UserMessage,
    complete_structured,
    stream_structured,
)
from tau.ai.providers.faux import FauxResponse, faux_calls, faux_model, faux_payloads, text
from tau.ai.providers.faux import tool_call as call
from tau.ai.structured import OUTPUT_TOOL_NAME


class City(BaseModel):
    name: str
    population: int


class Trip(BaseModel):
    title: str
    stops: list[City]


TRIP = {
    "title": "Rhône valley",
    "stops": [{"name": "Lyon", "population": 520000}, {"name": "Avignon", "population": 91000}],
}


async def test_tool_mode_forces_the_output_tool_and_validates_its_arguments() -> None:
    model = faux_model([FauxResponse([call(OUTPUT_TOOL_NAME, TRIP)])])
    result = await complete_structured(model, "Plan a trip", Trip, mode="tool")
    assert result.output == Trip.model_validate(TRIP)
    assert result.attempts == [result.message]
    context, options = faux_calls(model)[0]
    assert options["tool_choice"] == OUTPUT_TOOL_NAME
    assert context.tools is not None and context.tools[-1].name == OUTPUT_TOOL_NAME
    assert context.tools[-1].json_schema == Trip.model_json_schema()


async def test_tool_mode_retry_sends_the_errors_as_the_output_calls_result() -> None:
    bad = call(OUTPUT_TOOL_NAME, {"title": "x", "stops": [{"name": "Lyon"}]}, id="c1")
    model = faux_model([FauxResponse([bad]), FauxResponse([call(OUTPUT_TOOL_NAME, TRIP)])])
    result = await complete_structured(model, "Plan a trip", Trip, mode="tool")
    assert result.output.title == "Rhône valley"
    assert len(result.attempts) == 2 and result.attempts[1] is result.message
    retry_context = faux_calls(model)[1][0]
    first_answer, feedback = retry_context.messages[-2:]
    assert first_answer is result.attempts[0]
    assert isinstance(feedback, ToolResultMessage)
    assert feedback.tool_call_id == "c1" and feedback.is_error
    assert "stops/0/population: Field required" in feedback.content[0].text  # type: ignore[union-attr]


async def test_prompted_mode_reads_fenced_json_and_retries_with_a_user_message() -> None:
    model = faux_model(
        [
            FauxResponse([text('Sure! {"title": 3}')]),
            FauxResponse([text(f"Here it is:\n```json\n{json.dumps(TRIP)}\n```\nEnjoy!")]),
        ]
    )
    result = await complete_structured(model, "Plan a trip", Trip, mode="prompted")
    assert result.output == Trip.model_validate(TRIP)
    first_context, first_options = faux_calls(model)[0]
    assert first_context.system_prompt is not None
    assert '"stops"' in first_context.system_prompt and "JSON Schema" in first_context.system_prompt
    assert "tool_choice" not in first_options and not first_context.tools
    retry = faux_calls(model)[1][0].messages[-1]
    assert isinstance(retry, UserMessage) and isinstance(retry.content, str)
    assert "title: Input should be a valid string" in retry.content


async def test_native_mode_passes_the_output_schema_option() -> None:
    model = faux_model([FauxResponse([text(json.dumps(TRIP))])])
    result = await complete_structured(model, "Plan a trip", Trip, mode="native")
    assert result.output.stops[1].name == "Avignon"
    assert faux_payloads(model)[0]["output_schema"] == {
        "name": "Trip",
        "schema": Trip.model_json_schema(),
    }


async def test_auto_picks_tool_mode_where_there_is_no_native_mode() -> None:
    model = faux_model([FauxResponse([call(OUTPUT_TOOL_NAME, {"response": [TRIP["stops"][0]]})])])
    s = stream_structured(model, "Cities", list[City])
    assert s.mode == "tool"
    assert (await s.result()).output == [City(name="Lyon", population=520000)]


async def test_partials_come_in_order_never_repeat_and_end_with_the_output() -> None:
    model = faux_model([FauxResponse([text(json.dumps(TRIP))], chunk_size=3)])
    s = stream_structured(model, "Plan a trip", Trip, mode="native")
    partials = [p async for p in s]
    result = await s.result()
    assert partials[-1] == result.output and type(partials[-1]) is Trip
    assert all(a != b for a, b in itertools.pairwise(partials))
    titles = [p.title for p in partials if p.title]
    assert titles == sorted(titles, key=len) and titles[-1] == "Rhône valley"
    assert all(TRIP["title"].startswith(t) for t in titles)
    counts = [len(p.stops or []) for p in partials]
    assert counts == sorted(counts) and counts[-1] == 2
    assert s.partial == result.output


async def test_tool_mode_partials_come_from_the_streamed_arguments() -> None:
    model = faux_model([FauxResponse([call(OUTPUT_TOOL_NAME, TRIP)], chunk_size=5)])
    s = stream_structured(model, "Plan a trip", Trip, mode="tool")
    partials = [p async for p in s]
    assert len(partials) > 5
    assert partials[-1] == (await s.result()).output


async def test_events_of_every_attempt_are_available() -> None:
    model = faux_model([FauxResponse([text("not json")]), FauxResponse([text(json.dumps(TRIP))])])
    s = stream_structured(model, "Plan a trip", Trip, mode="prompted")
    kinds = [event.type async for event in s.events()]
    assert kinds.count("start") == 2 and kinds.count("done") == 2
    assert (await s.result()).output.title == "Rhône valley"


async def test_never_valid_raises_with_every_attempt_and_the_usage_adding_up() -> None:
    model = faux_model([FauxResponse([text('{"title": 1}')]) for _ in range(3)])
    with pytest.raises(StructuredOutputError) as info:
        await complete_structured(model, "Plan a trip", Trip, mode="prompted", max_retries=2)
    error = info.value
    assert error.reason == "invalid" and len(error.attempts) == 3
    assert len(faux_calls(model)) == 3
    assert error.raw_text == '{"title": 1}'
    assert ("title", "Input should be a valid string") in error.errors
    assert error.usage.output == sum(m.usage.output for m in error.attempts) > 0
    assert error.usage.total_tokens == sum(m.usage.total_tokens for m in error.attempts)
    assert "after 3 attempts" in str(error)


async def test_a_length_stop_inside_the_object_is_an_error_without_retry() -> None:
    cut = json.dumps(TRIP)[:30]
    model = faux_model([FauxResponse([text(cut)], stop_reason="length")] * 2)
    with pytest.raises(StructuredOutputError, match="output limit") as info:
        await complete_structured(model, "Plan a trip", Trip, mode="native", max_retries=1)
    assert info.value.reason == "length" and len(info.value.attempts) == 1
    assert info.value.raw_text == cut


async def test_a_provider_error_and_a_refusal_end_cleanly() -> None:
    model = faux_model([FauxResponse([text('{"ti')], error="upstream exploded", error_status=500)])
    with pytest.raises(StructuredOutputError, match="upstream exploded") as info:
        await complete_structured(model, "Plan a trip", Trip, mode="native")
    assert info.value.reason == "error" and len(info.value.attempts) == 1
    refusal = faux_model([FauxResponse(error="The model stopped with stop_reason 'refusal'")])
    with pytest.raises(StructuredOutputError) as info:
        await complete_structured(refusal, "Plan a trip", Trip, mode="tool")
    assert info.value.reason == "refusal"


async def test_an_abort_mid_object_ends_the_stream_with_an_aborted_error() -> None:
    controller = AbortController()
    model = faux_model([FauxResponse([text(json.dumps(TRIP))], chunk_size=4, delay=0.01)])
    s = stream_structured(model, "Plan a trip", Trip, mode="native", signal=controller.signal)
    seen = []
    with pytest.raises(StructuredOutputError) as info:
        async for partial in s:
            seen.append(partial)
            if partial.title:
                controller.abort()
        await s.result()
    assert info.value.reason == "aborted" and seen
    assert info.value.attempts[0].stop_reason == "aborted"


async def test_bad_arguments_fail_at_the_call() -> None:
    model = faux_model([])
    with pytest.raises(TypeError, match="temprature"):
        stream_structured(model, "x", Trip, temprature=0.2)
    with pytest.raises(ValueError, match="mode must be one of"):
        stream_structured(model, "x", Trip, mode="magic")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="max_retries"):
        stream_structured(model, "x", Trip, max_retries=-1)


async def test_breaking_out_of_the_partials_leaves_the_result_to_come() -> None:
    model = faux_model([FauxResponse([text(json.dumps(TRIP))], chunk_size=3)])
    s = stream_structured(model, "Plan a trip", Trip, mode="native")
    async for _ in s:
        break
    import gc

    gc.collect()  # the abandoned iterator is finalised: the call must go on
    await asyncio.sleep(0)
    assert (await s.result()).output == Trip.model_validate(TRIP)


async def test_closing_early_closes_the_call_and_result_says_so() -> None:
    from tau.ai import StreamEndedError

    model = faux_model([FauxResponse([text(json.dumps(TRIP))], chunk_size=3, delay=0.01)])
    async with stream_structured(model, "Plan a trip", Trip, mode="native") as s:
        async for _ in s.events():
            break
    with pytest.raises(StreamEndedError):
        await s.result()
