"""The openai-completions adapter against llama.cpp's own OpenAI-compatible server.

The server (xllamacpp's, the ``[local]`` extra's backend) runs the embedded model on 127.0.0.1
(the ``llama_server`` fixture) and is stopped after the tests. It streams text with a usage
chunk at the end, takes ``max_tokens``, drops a dropped connection's generation and serves the
next request, and compiles a JSON schema sent beside ``json_object`` into a grammar.
"""

from __future__ import annotations

import dataclasses

import pytest

from tau.ai import AbortController, Context, Model, OpenAICompletionsCompat, UserMessage, stream
from tests.ai.stream_checks import check_grammar


@pytest.fixture
def server(llama_server: str) -> Model:
    """The embedded model behind llama.cpp's server, as an openai-completions model."""
    return Model(
        id="smollm2",
        name="SmolLM2 via llama.cpp's server",
        api="openai-completions",
        provider="llama-cpp-server",
        base_url=llama_server,
        context_window=2048,
        max_tokens=256,
        compat=OpenAICompletionsCompat(max_tokens_field="max_tokens", supports_store=False),
    )


async def _collect(model: Model, context: Context, **options):  # type: ignore[no-untyped-def]
    s = stream(model, context, api_key="unused", **options)
    events = [event async for event in s]
    return events, await s.result()


async def test_streamed_text_with_the_servers_usage(server: Model) -> None:
    events, message = await _collect(server, Context([UserMessage("Say hello.")]), max_tokens=20)
    check_grammar(events, message)
    assert message.stop_reason in ("stop", "length"), message.error_message
    assert sum(e.type == "text_delta" for e in events) > 1 and message.text
    # The server's own counts, from its last chunk (the prompt cache's share apart).
    usage = message.usage
    assert usage.input + usage.cache_read > 5 and 0 < usage.output <= 20
    assert usage.total_tokens == usage.input + usage.cache_read + usage.output


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
    # llama.cpp's server takes the schema beside json_object and compiles it into a grammar
    # that keeps the answer to the schema's shape (greedy, so one attempt suffices).
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
