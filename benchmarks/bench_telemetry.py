"""What tracing costs: CPU per event with instrumentation off (next to the seam bypassed) and
on, in the same run.

Run: ``python benchmarks/bench_telemetry.py`` from a checkout (``--runs N``); needs the
OpenTelemetry SDK (``pip install -e '.[dev]'``).

Every figure is client CPU (``time.process_time``; the loopback server runs in a child
process), best of the runs, the variants of a case interleaved so that a noisy moment hits
them all. Variants:

* **bypass**: the adapter's stream function called directly
  (``get_api_provider(api).stream(...)``), skipping the entry point and its seam: what a
  build without the seam would run;
* **off**: ``tau.ai.stream`` (or an agent run) with no instrumentation installed: the seam
  present, its one ``is None`` test per call;
* **on**: ``tau.telemetry.instrument()`` with the OpenTelemetry SDK, spans kept by an
  in-memory exporter (``SimpleSpanProcessor``) and metrics by an in-memory reader.

Cases: a faux stream of 10,000 text deltas; an openai-completions stream of 5,000 deltas from
a 127.0.0.1 server (the shapes of ``bench_providers.py``); 500 short faux calls (3 deltas
each), for the cost per call; and agent runs of 200 turns with 3 parallel tool calls each
(``off`` here is the run with nothing installed, the loop's own seam present); and a bare
event pump (20,000 deltas pushed into a stream and consumed) untapped and tapped by a chat
span's observer, which isolates the per-event cost of tracing. The HTTP
layer's seam runs once per request (a log-level check and a context-variable read), whatever
the variant; its cost per request is printed too.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import statistics
import sys
import time
import timeit
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT), str(ROOT / "benchmarks")]

from opentelemetry.sdk.metrics import MeterProvider  # noqa: E402
from opentelemetry.sdk.metrics.export import InMemoryMetricReader  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (  # noqa: E402
    InMemorySpanExporter,
)

import tau.telemetry  # noqa: E402
from tau.agent import Agent, agent_tool  # noqa: E402
from tau.ai import (  # noqa: E402
    AssistantMessage,
    AssistantMessageEventStream,
    Context,
    DoneEvent,
    Model,
    TextDeltaEvent,
    UserMessage,
    stream,
)
from tau.ai.adapters import get_api_provider  # noqa: E402
from tau.ai.providers.faux import FauxResponse, faux_model, text, tool_call  # noqa: E402
from tau.ai.streaming.observe import request_report  # noqa: E402
from tau.telemetry._chat import ChatCall  # noqa: E402

FAUX_DELTAS = 10_000
PUMP_EVENTS = 20_000
SHORT_CALLS = 500
AGENT_TURNS = 200
TOOLS = 3
CONTEXT = Context([UserMessage("hello")])
TARGET = 1.02
"""off/bypass at most: instrumentation that is off costs nothing measurable."""

Run = Callable[[], Awaitable[int]]
"""One measured run; returns the number of events (or turns) it consumed."""


async def consume(s: AssistantMessageEventStream) -> int:
    count = 0
    async for _ in s:
        count += 1
    return count


def via_entry(model: Model) -> Run:
    async def run() -> int:
        return await consume(stream(model, CONTEXT))

    return run


def via_adapter(model: Model) -> Run:
    provider = get_api_provider(model.api)
    assert provider is not None

    async def run() -> int:
        return await consume(provider.stream(model, CONTEXT, {}))

    return run


def many(make: Callable[[Model], Run], model: Model, calls: int) -> Run:
    one = make(model)

    async def run() -> int:
        total = 0
        for _ in range(calls):
            total += await one()
        return total

    return run


# --------------------------------------------------------------------------- cases


def faux_long() -> Model:
    response = FauxResponse([text("x" * FAUX_DELTAS)], chunk_size=1)
    return faux_model(lambda context, options: response, id="faux-long")


def faux_short() -> Model:
    response = FauxResponse([text("abc")], chunk_size=1)
    return faux_model(lambda context, options: response, id="faux-short")


@agent_tool
def noop(n: int) -> str:
    """Does nothing."""
    return "ok"


def agent_run() -> Run:
    turn = 0

    def respond(context: Context, options: Any) -> FauxResponse:
        nonlocal turn
        turn += 1
        if turn % AGENT_TURNS == 0:
            return FauxResponse([text("done")], chunk_size=0)
        return FauxResponse([tool_call("noop", {"n": i}) for i in range(TOOLS)], chunk_size=0)

    model = faux_model(respond, id="faux-agent")

    def window(messages: list[Any], signal: Any) -> list[Any]:
        return messages[-8:]

    async def run() -> int:
        agent = Agent(model=model, tools=[noop], transform_context=window)
        await agent.prompt("go")
        return AGENT_TURNS

    return run


# --------------------------------------------------------------------------- measuring


class Pipeline:
    """The SDK pipeline of the ``on`` variant."""

    def __init__(self) -> None:
        self.exporter = InMemorySpanExporter()
        self.tracer_provider = TracerProvider()
        self.tracer_provider.add_span_processor(SimpleSpanProcessor(self.exporter))
        self.meter_provider = MeterProvider(metric_readers=[InMemoryMetricReader()])

    def on(self, run: Run) -> Run:
        async def instrumented() -> int:
            tau.telemetry.instrument(self.tracer_provider, self.meter_provider)
            try:
                return await run()
            finally:
                tau.telemetry.uninstrument()
                self.exporter.clear()

        return instrumented


async def cpu(run: Run) -> tuple[float, int]:
    start = time.process_time()
    count = await run()
    return time.process_time() - start, count


@dataclass
class Measured:
    """One variant of a case: CPU seconds of each round, and the events one run consumes."""

    rounds: list[float] = field(default_factory=list)
    count: int = 0

    @property
    def best(self) -> float:
        return min(self.rounds)


async def best(variants: dict[str, Run], runs: int) -> dict[str, Measured]:
    """Each variant's CPU seconds per round: interleaved, the order rotated every round,
    garbage collected before each measurement."""
    found = {name: Measured() for name in variants}
    names = list(variants)
    for run in variants.values():
        await run()  # warm up: imports, pooled connections, caches
    for round_ in range(runs):
        for name in names[round_ % len(names) :] + names[: round_ % len(names)]:
            gc.collect()
            seconds, found[name].count = await cpu(variants[name])
            found[name].rounds.append(seconds)
    return found


def paired_ratio(top: Measured, bottom: Measured) -> float:
    """The median over rounds of top/bottom measured in the same round: a machine that
    drifts or spikes during the run moves both sides of each pair alike."""
    return statistics.median(a / b for a, b in zip(top.rounds, bottom.rounds, strict=True))


async def pump(observer: Callable[[Any], object] | None) -> int:
    """EVENTS text deltas pushed into a stream and consumed, as an adapter and a consumer do;
    ``observer`` taps the stream."""
    s = AssistantMessageEventStream()
    if observer is not None:
        s.tap(observer)
    partial = AssistantMessage([], "faux", "faux", "m")
    push = s.push

    async def produce() -> None:
        for _ in range(PUMP_EVENTS):
            push(TextDeltaEvent(0, "x", partial))
            await asyncio.sleep(0)
        push(DoneEvent("stop", partial))

    task = asyncio.create_task(produce())
    count = await consume(s)
    await task
    return count


def loopback_model(base_url: str) -> Model:
    return Model(
        id="gpt-4o-mini",
        name="gpt-4o-mini",
        api="openai-completions",
        provider="openai",
        base_url=base_url,
    )


async def measure(base_url: str, runs: int) -> list[tuple[str, str, dict[str, Measured]]]:
    pipeline = Pipeline()
    rows = []
    loopback = loopback_model(base_url)

    def trio(make_bypass: Run, make_off: Run) -> dict[str, Run]:
        return {"bypass": make_bypass, "off": make_off, "on": pipeline.on(make_off)}

    model = faux_long()
    rows.append(("faux, 10,000 deltas", "event",
                 await best(trio(via_adapter(model), via_entry(model)), runs)))  # fmt: skip
    rows.append(("openai-completions loopback, 5,000 deltas", "event",
                 await best(trio(via_adapter(loopback), via_entry(loopback)), runs)))  # fmt: skip
    model = faux_short()
    rows.append((f"{SHORT_CALLS} short faux calls", "call",
                 await best(trio(many(via_adapter, model, SHORT_CALLS),
                                 many(via_entry, model, SHORT_CALLS)), runs)))  # fmt: skip
    settings = tau.telemetry.InstrumentationSettings(
        tracer_provider=pipeline.tracer_provider, meter_provider=pipeline.meter_provider
    )

    def tapped() -> Run:
        async def run() -> int:
            # The observer a chat span taps onto a stream; its span ends at the Done event.
            call = ChatCall(settings, faux_long(), CONTEXT, {})
            try:
                return await pump(call.on_event)
            finally:
                pipeline.exporter.clear()

        return run

    async def untapped() -> int:
        return await pump(None)

    rows.append((f"event pump, {PUMP_EVENTS:,} deltas", "event",
                 await best({"off": untapped, "on": tapped()}, runs)))  # fmt: skip
    agent = agent_run()
    rows.append((f"agent, {AGENT_TURNS} turns x {TOOLS} tools", "turn",
                 await best({"off": agent, "on": pipeline.on(agent)}, runs)))  # fmt: skip
    return rows


def print_rows(rows: list[tuple[str, str, dict[str, Measured]]]) -> None:
    header = (
        f"{'case':<44}{'per':>6}{'bypass µs':>11}{'off µs':>9}{'on µs':>9}"
        f"{'off/bypass':>12}{'on/off':>8}"
    )
    print(header)
    print("-" * len(header))
    for name, unit, found in rows:
        per = {
            variant: m.best / (SHORT_CALLS if unit == "call" else m.count) * 1e6
            for variant, m in found.items()
        }
        bypass = per.get("bypass")
        line = f"{name:<44}{unit:>6}"
        line += f"{bypass:>11.2f}" if bypass is not None else f"{'-':>11}"
        line += f"{per['off']:>9.2f}{per['on']:>9.2f}"
        if "bypass" in found:
            line += f"{paired_ratio(found['off'], found['bypass']):>11.3f}×"
        else:
            line += f"{'-':>12}"
        line += f"{paired_ratio(found['on'], found['off']):>7.2f}×"
        print(line)
    short = next(found for name, unit, found in rows if unit == "call")
    pumped = next(found for name, unit, found in rows if name.startswith("event pump"))
    per_call = (short["on"].best - short["off"].best) / SHORT_CALLS * 1e6
    per_event = (pumped["on"].best - pumped["off"].best) / pumped["off"].count * 1e6
    print(
        "\nµs: best round; ratios: median of the ratios of runs made in the same round.\n"
        f"on: +{per_call:.1f} µs CPU per call (span, metrics, in-memory export; short faux "
        f"calls), +{per_event:.3f} µs CPU per event (the tap; event pump)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    import bench_providers

    case = bench_providers.openai_text_case()
    with bench_providers.serving([case]) as base_url:
        rows = asyncio.run(measure(f"{base_url}/{case.name}", args.runs))
    print(
        f"client CPU, best of {args.runs} runs, Python {sys.version.split()[0]}, "
        f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at the end; "
        f"target off/bypass ≤ {TARGET}"
    )
    print_rows(rows)
    headers = {"authorization": "Bearer sk-x"}
    seconds = timeit.timeit(lambda: request_report("POST", "http://h/x", headers), number=100_000)
    print(f"HTTP seam, off: {seconds / 100_000 * 1e9:.0f} ns per request")


if __name__ == "__main__":
    main()
