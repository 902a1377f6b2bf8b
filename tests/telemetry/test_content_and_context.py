"""Content capture off and on; spans inside a user's own span (async and sync entry points);
process-wide against per-agent instrumentation."""

from __future__ import annotations

import asyncio
import json

from tau.agent import Agent, agent_tool
from tau.ai import (
    Context,
    ImageContent,
    TextContent,
    UserMessage,
    complete,
    complete_sync,
    stream_sync,
)
from tau.ai.providers.faux import FauxResponse, faux_model, text, thinking, tool_call
from tests.telemetry.conftest import Otel, tree

SECRET_PROMPT = "my private question about zebras"
SECRET_ANSWER = "a confidential answer about okapis"
SECRET_ARGS = "quagga"
SECRET_RESULT = "tool output about tapirs"
SYSTEM = "You are a secret system prompt."


@agent_tool
def lookup(animal: str) -> str:
    """Looks an animal up."""
    return SECRET_RESULT


def run_agent(otel: Otel, capture: bool) -> None:
    model = faux_model(
        [
            FauxResponse([thinking("hmm"), tool_call("lookup", {"animal": SECRET_ARGS}, id="c1")]),
            FauxResponse([text(SECRET_ANSWER)]),
        ]
    )
    agent = Agent(model=model, system_prompt=SYSTEM, tools=[lookup],
                  instrument=otel.settings(capture_content=capture))  # fmt: skip
    asyncio.run(agent.prompt(SECRET_PROMPT))


def everything_recorded(otel: Otel) -> str:
    return json.dumps(
        [
            {
                "name": span.name,
                "attributes": dict(span.attributes or {}),
                "events": [(e.name, dict(e.attributes or {})) for e in span.events],
                "status": span.status.description,
            }
            for span in otel.spans()
        ]
    )


def test_without_capture_no_prompt_completion_or_tool_text_is_recorded(otel: Otel) -> None:
    run_agent(otel, capture=False)
    recorded = everything_recorded(otel)
    assert len(otel.spans()) == 4
    for secret in (SECRET_PROMPT, SECRET_ANSWER, SECRET_ARGS, SECRET_RESULT, SYSTEM, "hmm"):
        assert secret not in recorded
    for key in ("gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.system_instructions",
                "gen_ai.tool.call.arguments", "gen_ai.tool.call.result"):  # fmt: skip
        assert key not in recorded


def test_with_capture_content_is_recorded_in_the_conventions_format(otel: Otel) -> None:
    run_agent(otel, capture=True)
    run, chat1, tool, chat2 = otel.spans()
    system = [{"type": "text", "content": SYSTEM}]
    user = {"role": "user", "parts": [{"type": "text", "content": SECRET_PROMPT}]}
    call = {"type": "tool_call", "id": "c1", "name": "lookup", "arguments": {"animal": SECRET_ARGS}}
    assistant1 = {"role": "assistant", "parts": [{"type": "reasoning", "content": "hmm"}, call]}
    response = {"type": "tool_call_response", "id": "c1", "response": SECRET_RESULT}
    final = {"role": "assistant", "parts": [{"type": "text", "content": SECRET_ANSWER}],
             "finish_reason": "stop"}  # fmt: skip

    def attribute(span, name):  # type: ignore[no-untyped-def]
        return json.loads(span.attributes[name])

    assert attribute(run, "gen_ai.system_instructions") == system
    assert attribute(run, "gen_ai.input.messages") == [user]
    assert attribute(run, "gen_ai.output.messages") == [final]
    assert attribute(chat1, "gen_ai.system_instructions") == system
    assert attribute(chat1, "gen_ai.input.messages") == [user]
    assert attribute(chat1, "gen_ai.output.messages") == [
        {**assistant1, "finish_reason": "tool_call"}
    ]
    assert attribute(tool, "gen_ai.tool.call.arguments") == {"animal": SECRET_ARGS}
    assert attribute(tool, "gen_ai.tool.call.result") == SECRET_RESULT
    assert attribute(chat2, "gen_ai.input.messages") == [
        user,
        assistant1,
        {"role": "tool", "parts": [response]},
    ]
    assert attribute(chat2, "gen_ai.output.messages") == [final]


async def test_images_are_blob_parts(otel: Otel) -> None:
    otel.instrument(capture_content=True)
    message = UserMessage([TextContent("what is this?"), ImageContent("aGVsbG8=", "image/png")])
    await complete(faux_model([FauxResponse(["a cat"])]), Context([message]))
    (span,) = otel.spans()
    assert json.loads(span.attributes["gen_ai.input.messages"]) == [  # type: ignore[arg-type,index]
        {
            "role": "user",
            "parts": [
                {"type": "text", "content": "what is this?"},
                {
                    "type": "blob",
                    "modality": "image",
                    "mime_type": "image/png",
                    "content": "aGVsbG8=",
                },
            ],
        }
    ]


async def test_a_users_span_contains_the_call(otel: Otel) -> None:
    otel.instrument()
    tracer = otel.tracer_provider.get_tracer("app")
    with tracer.start_as_current_span("request handler"):
        await complete(faux_model([FauxResponse(["ok"])]), Context([UserMessage("hi")]))
    assert tree(otel.spans()) == [("request handler", None), ("chat faux-model", "request handler")]


def test_a_users_span_contains_sync_calls_on_the_background_loop(otel: Otel) -> None:
    otel.instrument()
    tracer = otel.tracer_provider.get_tracer("app")
    model = faux_model([FauxResponse(["one"]), FauxResponse(["two"])])
    with tracer.start_as_current_span("script"):
        assert complete_sync(model, Context([UserMessage("hi")])).text == "one"
        events = list(stream_sync(model, Context([UserMessage("hi")])))
    assert events[-1].type == "done"
    assert tree(otel.spans()) == [
        ("script", None),
        ("chat faux-model", "script"),
        ("chat faux-model", "script"),
    ]


async def test_a_users_span_contains_an_agent_run(otel: Otel) -> None:
    otel.instrument()
    tracer = otel.tracer_provider.get_tracer("app")
    with tracer.start_as_current_span("job"):
        await Agent(model=faux_model([FauxResponse(["done"])])).prompt("go")
    assert tree(otel.spans()) == [
        ("job", None),
        ("invoke_agent tau", "job"),
        ("chat faux-model", "invoke_agent tau"),
    ]


async def test_process_wide_and_per_agent_settings_give_one_span_per_call(otel: Otel) -> None:
    # Both on: the agent's own settings record its calls, once.
    process_wide = otel.instrument()
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    own_exporter = InMemorySpanExporter()
    own_provider = TracerProvider()
    own_provider.add_span_processor(SimpleSpanProcessor(own_exporter))
    from tau.telemetry import InstrumentationSettings

    own = InstrumentationSettings(tracer_provider=own_provider)
    await Agent(model=faux_model([FauxResponse(["a"])]), instrument=own).prompt("go")
    assert sorted(s.name for s in own_exporter.get_finished_spans()) == [
        "chat faux-model",
        "invoke_agent tau",
    ]
    assert otel.spans() == []

    # instrument=False: no agent spans; its calls still follow the process-wide setting.
    await Agent(model=faux_model([FauxResponse(["b"])]), instrument=False).prompt("go")
    assert [s.name for s in otel.spans()] == ["chat faux-model"]
    assert otel.spans()[0].parent is None

    # instrument=True uses the process-wide settings.
    import tau.telemetry

    assert tau.telemetry.default_settings() is process_wide
    otel.exporter.clear()
    await Agent(model=faux_model([FauxResponse(["c"])]), instrument=True).prompt("go")
    assert [s.name for s in otel.spans()] == ["invoke_agent tau", "chat faux-model"]
