"""End to end: an instrumented agent run exported by the real OTLP/HTTP exporter to a receiver
on 127.0.0.1 that decodes the protobuf requests as a collector would."""

from __future__ import annotations

import gzip
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

from tau.agent import Agent, agent_tool
from tau.ai.providers.faux import FauxResponse, faux_model, text, tool_call
from tau.telemetry import InstrumentationSettings


class Receiver(ThreadingHTTPServer):
    """An OTLP/HTTP trace receiver: keeps every decoded ExportTraceServiceRequest."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.requests: list[ExportTraceServiceRequest] = []
        self.paths: list[str] = []

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1/traces"


class _Handler(BaseHTTPRequestHandler):
    server: Receiver

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["content-length"]))
        if self.headers.get("content-encoding") == "gzip":
            body = gzip.decompress(body)
        request = ExportTraceServiceRequest()
        request.ParseFromString(body)
        self.server.requests.append(request)
        self.server.paths.append(self.path)
        reply = ExportTraceServiceResponse().SerializeToString()
        self.send_response(200)
        self.send_header("content-type", "application/x-protobuf")
        self.send_header("content-length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    server = Receiver()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


@agent_tool
def add(a: int, b: int) -> int:
    """Adds two numbers."""
    return a + b


def _value(value: Any) -> Any:
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return tuple(_value(v) for v in value.array_value.values)
    return getattr(value, kind)


async def test_spans_arrive_over_otlp_http(receiver: Receiver) -> None:
    provider = TracerProvider(resource=Resource.create({"service.name": "tau-test"}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=receiver.endpoint)))
    model = faux_model(
        [
            FauxResponse([tool_call("add", {"a": 2, "b": 3}, id="call_add")]),
            FauxResponse([text("5")]),
        ],
        id="adder",
    )
    agent = Agent(model=model, name="calc", tools=[add],
                  instrument=InstrumentationSettings(tracer_provider=provider))  # fmt: skip
    await agent.prompt("2 + 3?")
    assert provider.force_flush(10_000)
    provider.shutdown()

    assert receiver.paths and set(receiver.paths) == {"/v1/traces"}
    spans = []
    for request in receiver.requests:
        for resource_spans in request.resource_spans:
            resource = {a.key: _value(a.value) for a in resource_spans.resource.attributes}
            assert resource["service.name"] == "tau-test"
            for scope_spans in resource_spans.scope_spans:
                assert scope_spans.scope.name == "tau"
                spans.extend(scope_spans.spans)
    spans.sort(key=lambda s: s.start_time_unix_nano)
    ids = {s.span_id: s.name for s in spans}
    assert [(s.name, ids.get(s.parent_span_id)) for s in spans] == [
        ("invoke_agent calc", None),
        ("chat adder", "invoke_agent calc"),
        ("execute_tool add", "invoke_agent calc"),
        ("chat adder", "invoke_agent calc"),
    ]
    assert len({s.trace_id for s in spans}) == 1
    attributes = [{a.key: _value(a.value) for a in s.attributes} for s in spans]
    assert attributes[0]["gen_ai.operation.name"] == "invoke_agent"
    assert attributes[0]["gen_ai.agent.name"] == "calc"
    assert attributes[1]["gen_ai.response.finish_reasons"] == ("tool_call",)
    assert attributes[2]["gen_ai.tool.call.id"] == "call_add"
    assert attributes[3]["gen_ai.usage.output_tokens"] == 1
    assert [e.name for e in spans[0].events] == [
        "tau.turn.start",
        "tau.turn.end",
        "tau.turn.start",
        "tau.turn.end",
    ]
