"""A server that echoes the API key back (in error bodies, on every attempt) gets it into
neither the DEBUG log nor the trace; nor does a key sent in the URL's query."""

from __future__ import annotations

import json
import logging

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import tau.telemetry
from tau.ai import Context, Model, UserMessage, complete
from tau.ai.streaming.observe import loggable_url
from tests.ai.servers import JSON_HEADERS, LocalServer, Reply, Request

KEY = "AIzaSy-hostile-0123456789-secret"


def echo_key(request: Request) -> Reply:
    # Whatever credential arrived (header or query), thrown back in the error message.
    seen = " ".join(f"{k}={v}" for k, v in request.headers.items()) + " " + request.path
    body = json.dumps({"error": {"message": f"overloaded; you sent {seen}"}}).encode()
    return Reply(503, {**JSON_HEADERS, "retry-after-ms": "1"}, [body])


@pytest.mark.parametrize(
    "api", ["google-generative-ai", "openai-completions", "anthropic-messages"]
)
async def test_an_echoed_key_is_never_logged_or_traced(
    api: str, caplog: pytest.LogCaptureFixture
) -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tau.telemetry.instrument(tracer_provider=provider)
    caplog.set_level(logging.DEBUG, logger="tau")
    try:
        async with LocalServer(echo_key) as server:
            model = Model(id="m", name="m", api=api, provider="p", base_url=server.url + "/v1")
            message = await complete(model, Context([UserMessage("hi")]), api_key=KEY,
                                     max_retries=2)  # fmt: skip
        assert len(server.requests) == 3
    finally:
        tau.telemetry.uninstrument()
    assert message.stop_reason == "error"
    assert KEY in (message.error_message or "")  # the caller sees what the server said
    assert "retry 2/2" in caplog.text
    assert KEY not in caplog.text
    (span,) = exporter.get_finished_spans()
    recorded = json.dumps(
        [dict(span.attributes or {}), span.status.description]
        + [dict(e.attributes or {}) for e in span.events]
    )
    assert span.status.status_code.name == "ERROR"
    assert KEY not in recorded


def test_query_credentials_are_masked_in_logged_urls() -> None:
    url = f"https://user:pw@example.com/v1/models/m:streamGenerateContent?alt=sse&key={KEY}"
    assert loggable_url(url) == (
        "https://example.com/v1/models/m:streamGenerateContent?alt=sse&key=***"
    )
    assert (
        loggable_url("https://h/x?sig=abc&api-version=2024")
        == "https://h/x?sig=***&api-version=2024"
    )
