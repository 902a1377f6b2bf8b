"""``chat`` spans of single calls: success over HTTP, errors, aborts, retries, and metrics."""

from __future__ import annotations

import logging

import pytest

from tau.ai import AbortController, Context, Model, UserMessage, complete, stream
from tau.ai.providers.faux import FauxResponse, faux_model, text, tool_call
from tests.ai.servers import JSON_HEADERS, SSE_HEADERS, STALL, LocalServer, Reply
from tests.telemetry.conftest import Otel

SSE = (
    b'data: {"id":"chatcmpl-1","model":"local-model-0611","choices":[{"index":0,'
    b'"delta":{"content":"Hi"},"finish_reason":null}]}\n\n'
    b'data: {"id":"chatcmpl-1","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],'
    b'"usage":{"prompt_tokens":7,"completion_tokens":2,"total_tokens":9}}\n\n'
    b"data: [DONE]\n\n"
)
KEY = "sk-test-0123456789abcdef"


def local_model(url: str) -> Model:
    return Model(
        id="local-model",
        name="local",
        api="openai-completions",
        provider="vllm",
        base_url=url + "/v1",
    )


def ask() -> Context:
    return Context([UserMessage("hi")])


async def test_retry_after_429_is_an_event_of_the_one_chat_span(
    otel: Otel, caplog: pytest.LogCaptureFixture
) -> None:
    otel.instrument()
    replies = [
        Reply(429, {**JSON_HEADERS, "retry-after-ms": "10"},
              [b'{"error":{"message":"slow down, ' + KEY.encode() + b'"}}']),
        Reply(200, SSE_HEADERS, [SSE]),
    ]  # fmt: skip
    caplog.set_level(logging.DEBUG, logger="tau")
    async with LocalServer(replies) as server:
        message = await complete(local_model(server.url), ask(), api_key=KEY)
    assert message.stop_reason == "stop"

    (span,) = otel.spans()
    assert span.name == "chat local-model"
    assert span.kind.name == "CLIENT"
    attributes = dict(span.attributes or {})
    assert attributes["server.address"] == "127.0.0.1"
    assert attributes["server.port"] == server.port
    assert attributes["gen_ai.provider.name"] == "vllm"
    assert attributes["gen_ai.usage.input_tokens"] == 7
    assert attributes["gen_ai.usage.output_tokens"] == 2
    assert span.status.status_code.name == "UNSET"
    ((name, retry),) = [(e.name, dict(e.attributes or {})) for e in span.events]
    assert name == "tau.http.retry"
    assert retry == {
        "http.request.resend_count": 1,
        "http.response.status_code": 429,
        "error.type": "429",
        "tau.retry.delay": pytest.approx(0.01),
    }

    # The DEBUG log names both attempts and the retry, and never the key (the server echoed
    # it in its error body, and it was in the request's authorization header).
    lines = [r.getMessage() for r in caplog.records if r.name.startswith("tau")]
    url = f"{server.url}/v1/chat/completions"
    assert any(line.startswith(f"POST {url} -> 429 ") for line in lines), lines
    assert any(line.startswith(f"retry 1/3 of POST {url} in 0.01 s: 429 ") for line in lines)
    assert any(line.startswith(f"POST {url} -> 200 ") for line in lines), lines
    assert KEY not in caplog.text
    assert all(KEY not in line for line in lines)


async def test_http_error_span(otel: Otel) -> None:
    otel.instrument()
    replies = [Reply(400, JSON_HEADERS, [b'{"error":{"message":"bad request"}}'])]
    async with LocalServer(replies) as server:
        message = await complete(local_model(server.url), ask(), api_key=KEY)
    assert message.stop_reason == "error"
    (span,) = otel.spans()
    assert span.status.status_code.name == "ERROR"
    assert span.status.description == message.error_message
    assert span.attributes["error.type"] == "400"  # type: ignore[index]
    assert span.attributes["gen_ai.response.finish_reasons"] == ("error",)  # type: ignore[index]
    (duration,) = otel.metrics()["gen_ai.client.operation.duration"]
    assert duration.attributes["error.type"] == "400"


async def test_provider_error_after_content(otel: Otel) -> None:
    otel.instrument()
    model = faux_model([FauxResponse([text("partial answer")], error="the stream broke")])
    message = await complete(model, ask())
    assert message.stop_reason == "error"
    (span,) = otel.spans()
    assert span.status.status_code.name == "ERROR"
    assert span.status.description == "the stream broke"
    assert span.attributes["error.type"] == "_OTHER"  # type: ignore[index]
    # Content streamed before the failure: the first chunk was seen.
    assert span.attributes["gen_ai.response.time_to_first_chunk"] > 0  # type: ignore[index,operator]


async def test_abort_mid_stream_is_an_aborted_error_span(otel: Otel) -> None:
    otel.instrument()
    first = (
        b'data: {"choices":[{"index":0,"delta":{"content":"Partial"},"finish_reason":null}]}\n\n'
    )
    async with LocalServer([Reply(200, SSE_HEADERS, [first, STALL])]) as server:
        controller = AbortController()
        s = stream(local_model(server.url), ask(), api_key=KEY, signal=controller.signal)
        async for event in s:
            if event.type == "text_delta":
                controller.abort()
        message = await s.result()
    assert message.stop_reason == "aborted"
    (span,) = otel.spans()
    assert span.status.status_code.name == "ERROR"
    assert span.attributes["error.type"] == "aborted"  # type: ignore[index]


async def test_leaving_a_stream_early_ends_its_span_as_aborted(otel: Otel) -> None:
    otel.instrument()
    model = faux_model([FauxResponse([text("one two three four five six")], chunk_size=2)])
    async with stream(model, ask()) as s:
        async for event in s:
            if event.type == "text_delta":
                break
    for _ in range(20):  # the producer task winds down on the loop
        if otel.spans():
            break
        await __import__("asyncio").sleep(0.01)
    (span,) = otel.spans()
    assert span.attributes["error.type"] == "aborted"  # type: ignore[index]


async def test_metrics_follow_the_conventions(otel: Otel) -> None:
    otel.instrument()
    model = faux_model([FauxResponse(["hello there"], usage=_usage(30, 5, cache_read=10))])
    await complete(model, ask())
    found = otel.metrics()
    common = {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "faux",
        "gen_ai.request.model": "faux-model",
        "gen_ai.response.model": "faux-model",
    }
    tokens = {p.attributes["gen_ai.token.type"]: p for p in found["gen_ai.client.token.usage"]}
    assert dict(tokens["input"].attributes) == {**common, "gen_ai.token.type": "input"}
    assert (tokens["input"].sum, tokens["output"].sum) == (40, 5)
    assert list(tokens["input"].explicit_bounds)[:3] == [1, 4, 16]
    (duration,) = found["gen_ai.client.operation.duration"]
    assert dict(duration.attributes) == common and duration.count == 1
    assert list(duration.explicit_bounds)[:2] == [0.01, 0.02]
    (first_chunk,) = found["gen_ai.client.operation.time_to_first_chunk"]
    assert dict(first_chunk.attributes) == common and first_chunk.count == 1
    assert 0 < first_chunk.sum <= duration.sum


def _usage(input: int, output: int, cache_read: int = 0):  # type: ignore[no-untyped-def]
    from tau.ai import Usage

    return Usage(input=input, output=output, cache_read=cache_read)


async def test_uninstrument_stops_observing(otel: Otel) -> None:
    import tau.telemetry
    from tau.ai.adapters import get_call_observer

    otel.instrument()
    tau.telemetry.uninstrument()
    assert get_call_observer() is None
    await complete(faux_model([FauxResponse(["x"])]), ask())
    assert otel.spans() == []


async def test_a_failing_span_pipeline_breaks_neither_a_call_nor_a_run(
    otel: Otel, caplog: pytest.LogCaptureFixture
) -> None:
    from opentelemetry.sdk.trace import SpanProcessor

    from tau.agent import Agent, agent_tool

    class Broken(SpanProcessor):
        def on_end(self, span: object) -> None:
            raise RuntimeError("exporter down")

    otel.tracer_provider.add_span_processor(Broken())
    otel.instrument()

    @agent_tool
    def ping() -> str:
        """Pings."""
        return "pong"

    model = faux_model(
        [FauxResponse(["hi"]), FauxResponse([tool_call("ping", {})]), FauxResponse(["done"])]
    )
    assert (await complete(model, ask())).stop_reason == "stop"
    agent = Agent(model=model, tools=[ping])
    await agent.prompt("go")
    assert agent.state.error is None
    assert agent.state.messages[-1].text == "done"  # type: ignore[union-attr]
    assert "recording the chat span failed" in caplog.text
