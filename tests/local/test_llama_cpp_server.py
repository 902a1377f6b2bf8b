"""The openai-completions adapter against llama-cpp-python's own OpenAI-compatible server.

The server (``python -m llama_cpp.server --chat_format chatml-function-calling``) runs the
embedded model on 127.0.0.1 (the ``llama_server`` fixture) and is stopped after the tests. It behaves in three ways tau must
handle: ``stream: true`` with ``tool_choice: "auto"`` answers HTTP 200 with an empty body; a
forced tool choice repeats the name and id in every delta; no usage chunk is ever sent.
"""

from __future__ import annotations

import dataclasses

import pytest

from tau.ai import (
    AbortController,
    Context,
    Model,
    OpenAICompletionsCompat,
    Tool,
    UserMessage,
    stream,
)
from tests.ai.stream_checks import check_grammar

WEATHER = Tool(
    "get_weather",
    "Get the current weather in a city",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)


@pytest.fixture
def server(llama_server: str) -> Model:
    """The embedded model behind llama_cpp.server, as an openai-completions model."""
    return Model(
        id="smollm2",
        name="SmolLM2 via llama_cpp.server",
        api="openai-completions",
        provider="llama-cpp-server",
        base_url=llama_server,
        context_window=2048,
        max_tokens=256,
        # This server reads max_tokens, not max_completion_tokens.
        compat=OpenAICompletionsCompat(max_tokens_field="max_tokens", supports_store=False),
    )


async def _collect(model: Model, context: Context, **options):  # type: ignore[no-untyped-def]
    s = stream(model, context, api_key="unused", **options)
    events = [event async for event in s]
    return events, await s.result()


async def test_streamed_text(server: Model) -> None:
    events, message = await _collect(server, Context([UserMessage("Say hello.")]), max_tokens=20)
    check_grammar(events, message)
    assert message.stop_reason in ("stop", "length"), message.error_message
    assert sum(e.type == "text_delta" for e in events) > 1 and message.text
    # No usage chunk arrives when streaming: the counts stay zero, never estimated.
    assert (message.usage.input, message.usage.output, message.usage.total_tokens) == (0, 0, 0)


async def test_forced_tool_call_streams_once_not_concatenated(server: Model) -> None:
    context = Context([UserMessage("What is the weather in Paris?")], tools=[WEATHER])
    choice = {"type": "function", "function": {"name": "get_weather"}}
    events, message = await _collect(server, context, tool_choice=choice)
    check_grammar(events, message)
    assert message.stop_reason == "toolUse"
    [call] = message.tool_calls  # every delta repeats name and id: still one call
    assert call.name == "get_weather"
    assert call.arguments == {"city": "Paris"}
    assert call.id.count("call_") == 1
    assert sum(e.type == "toolcall_delta" for e in events) > 1


async def test_auto_tool_choice_empty_body_is_an_error(server: Model) -> None:
    context = Context([UserMessage("What is the weather in Paris?")], tools=[WEATHER])
    events, message = await _collect(server, context, tool_choice="auto")
    assert events[-1].type == "error"
    assert message.stop_reason == "error"
    assert "empty" in (message.error_message or "")


async def test_abort_mid_stream(server: Model) -> None:
    controller = AbortController()
    s = stream(
        server,
        Context([UserMessage("Write a long story about the sea.")]),
        api_key="unused",
        signal=controller.signal,
        max_tokens=256,
    )
    deltas = 0
    async for event in s:
        if event.type == "text_delta":
            deltas += 1
            if deltas == 3:
                controller.abort()
    message = await s.result()
    assert message.stop_reason == "aborted"
    assert deltas == 3, "no delta may follow the abort"
    # The server is still serving after the dropped connection.
    _, again = await _collect(server, Context([UserMessage("Hi")]), max_tokens=4)
    assert again.stop_reason in ("stop", "length")


async def test_structured_output_through_the_servers_schema_grammar(server: Model) -> None:
    # llama-cpp-python's server takes the schema beside json_object and compiles it into a
    # grammar that keeps the answer to the schema's shape (greedy, so one attempt suffices).
    from pydantic import BaseModel

    from tau.ai import complete_structured

    class City(BaseModel):
        name: str
        country: str

    model = dataclasses.replace(
        server,
        compat=OpenAICompletionsCompat(
            max_tokens_field="max_tokens", supports_store=False, json_output="json_object_schema"
        ),
    )
    result = await complete_structured(
        model,
        "Name a city in France.",
        City,
        mode="native",
        api_key="unused",
        max_tokens=60,
        temperature=0.0,  # the server samples at 0.8 by default: keep the answer reproducible
    )
    assert isinstance(result.output, City) and len(result.attempts) == 1, [
        a.text for a in result.attempts
    ]
