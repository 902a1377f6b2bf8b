"""Instrumentation off costs nothing: no opentelemetry import and nothing wrapped."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

from tests.conftest import REPO

RUN_WITHOUT_INSTRUMENTATION = """
import asyncio, sys
import tau.ai, tau.agent
from tau.agent import Agent, agent_tool
from tau.ai import Context, UserMessage, complete_sync
from tau.ai.providers.faux import FauxResponse, faux_model, text, tool_call

@agent_tool
def echo(word: str) -> str:
    "Echoes."
    return word

model = faux_model([FauxResponse([tool_call("echo", {"word": "hi"})]), FauxResponse([text("hi")]),
                    FauxResponse(["sync"])])
agent = Agent(model=model, tools=[echo])
asyncio.run(agent.prompt("go"))
assert agent.state.messages[-1].text == "hi", agent.state.messages
assert complete_sync(model, Context([UserMessage("x")])).text == "sync"
loaded = sorted(m for m in sys.modules if m.startswith("opentelemetry") or m == "tau.telemetry")
print("LOADED", loaded)
"""

RUN_WITH_GLOBAL_PROVIDER = """
import asyncio
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from tau.agent import Agent
from tau.ai.providers.faux import FauxResponse, faux_model

exporter = InMemorySpanExporter()
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(exporter))
trace.set_tracer_provider(provider)
asyncio.run(Agent(model=faux_model([FauxResponse(["ok"])]), instrument=True).prompt("go"))
print("SPANS", sorted(s.name for s in exporter.get_finished_spans()))
"""


def run(code: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(REPO / "src") + os.pathsep + str(REPO)}
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_run_without_instrumentation_imports_no_opentelemetry() -> None:
    assert "LOADED []" in run(RUN_WITHOUT_INSTRUMENTATION)


def test_instrument_true_uses_the_global_providers() -> None:
    assert "SPANS ['chat faux-model', 'invoke_agent tau']" in run(RUN_WITH_GLOBAL_PROVIDER)


WITHOUT_THE_EXTRA = """
import sys
sys.modules["opentelemetry"] = None  # as if opentelemetry-api were not installed
from tau.agent import Agent
from tau.ai.providers.faux import faux_model
try:
    Agent(model=faux_model(), instrument=True)
except ImportError as exc:
    print("AGENT", exc)
try:
    import tau.telemetry
except ImportError as exc:
    print("IMPORT", exc)
"""


def test_without_the_extra_instrumenting_says_what_to_install() -> None:
    out = run(WITHOUT_THE_EXTRA)
    assert "AGENT tau.telemetry needs the OpenTelemetry API" in out
    assert "IMPORT tau.telemetry needs the OpenTelemetry API" in out
    assert "pip install 'tau[otel]'" in out
