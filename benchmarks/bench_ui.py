"""tau.ui: what the web protocols cost per event.

1. Encoding: CPU µs per event to turn a recorded agent run (one answer of 10,000 text deltas,
   plus a turn with 3 tool calls) into SSE frames with :class:`tau.ui.AISDKEncoder` and with
   :class:`tau.ui.AGUIEncoder` (``time.process_time``, median of 7, interleaved). Baseline:
   tau's own proxy SSE encoding of the same run's provider events (``encode_proxy_event`` +
   ``json.dumps`` + the ``data:`` frame, as :mod:`tau.proxy.server` writes them), same run
   (target AI SDK ≤ 1.2×).
2. 500 concurrent browser-style streams through :func:`tau.ui.chat_app` (uvicorn on
   127.0.0.1 in a child process, 500 HTTP clients each POSTing a ``useChat`` request and
   reading the whole stream; faux model answering 200 text deltas): the server process's
   CPU µs per agent event. Baseline: the same 500 runs as bare ``Agent.prompt`` calls in a
   child process (no HTTP, no encoding, no store), same run.

Run: ``.venv/bin/python benchmarks/bench_ui.py`` (needs the ``[web]`` extra).
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable

from tau.agent import Agent, AgentEvent, MessageUpdateEvent, agent_tool
from tau.ai.providers.faux import FauxResponse, faux_model, text, tool_call
from tau.proxy import encode_proxy_event
from tau.ui import AGUIEncoder, AISDKEncoder, sse_frame

STREAMS = 500
DELTAS_PER_STREAM = 200
ROUNDS = 7


def recorded_run() -> list[AgentEvent]:
    """The events of a run: 3 tool calls, then an answer of 10,000 text deltas."""

    @agent_tool
    def lookup(key: str) -> str:
        """Look up a key."""
        return f"value of {key}"

    model = faux_model(
        [
            FauxResponse([tool_call("lookup", {"key": f"k{i}"}) for i in range(3)]),
            FauxResponse([text("word " * 10_000)], chunk_size=5),
        ]
    )
    agent = Agent(model=model, tools=[lookup])
    events: list[AgentEvent] = []
    agent.subscribe(events.append)
    asyncio.run(agent.prompt("go"))
    return events


def proxy_frames(events: list[AgentEvent]) -> int:
    dumps = json.dumps
    size = 0
    for event in events:
        if isinstance(event, MessageUpdateEvent):
            wire = encode_proxy_event(event.assistant_message_event)
            payload = dumps(wire, separators=(",", ":"), ensure_ascii=False)
            size += len(f"data: {payload}\n\n".encode())
    return size


def ai_sdk_frames(events: list[AgentEvent]) -> int:
    encoder = AISDKEncoder("m1")
    size = 0
    for event in events:
        for chunk in encoder.encode(event):
            size += len(sse_frame(chunk))
    return size


def ag_ui_frames(events: list[AgentEvent]) -> int:
    encoder = AGUIEncoder("thread", "run")
    size = 0
    for event in events:
        for out in encoder.encode(event):
            payload = out.model_dump_json(by_alias=True, exclude_none=True)
            size += len(b"data: " + payload.encode() + b"\n\n")
    return size


def encoding() -> None:
    events = recorded_run()
    provider_events = sum(isinstance(e, MessageUpdateEvent) for e in events)
    cases: dict[str, Callable[[list[AgentEvent]], int]] = {
        "proxy SSE (baseline)": proxy_frames,
        "AI SDK UI stream": ai_sdk_frames,
        "AG-UI": ag_ui_frames,
    }
    times: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(ROUNDS):
        for name, encode in cases.items():
            start = time.process_time()
            encode(events)
            times[name].append(time.process_time() - start)
    base = statistics.median(times["proxy SSE (baseline)"])
    print(f"1. encoding one run: {len(events)} agent events, {provider_events} provider events")
    print(f"   {'encoder':24} {'µs/event':>9} {'ratio':>7}")
    for name, values in times.items():
        median = statistics.median(values)
        print(f"   {name:24} {median / len(events) * 1e6:9.2f} {median / base:6.2f}×")


# --------------------------------------------------------------------------- 500 streams

CHILD = r"""
import asyncio, os, sys, time
from tau.agent import Agent
from tau.ai.providers.faux import FauxResponse, faux_model, text

mode, streams, deltas = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
model = faux_model(lambda c, o: FauxResponse([text("abcd" * deltas)], chunk_size=4))
counted = [0]

def make():
    agent = Agent(model=model)
    agent.subscribe(lambda event: counted.__setitem__(0, counted[0] + 1))
    return agent

if mode == "bare":
    async def main():
        start = time.process_time()
        await asyncio.gather(*(make().prompt("hi") for _ in range(streams)))
        print(time.process_time() - start, counted[0], flush=True)
    asyncio.run(main())
else:
    import uvicorn
    from tau.ui import chat_app

    config = uvicorn.Config(chat_app(make), host="127.0.0.1", port=0, log_level="warning",
                            lifespan="off", backlog=2048)
    server = uvicorn.Server(config)

    async def main():
        task = asyncio.ensure_future(server.serve())
        while not server.started:
            await asyncio.sleep(0.01)
        print(server.servers[0].sockets[0].getsockname()[1], flush=True)
        line = await asyncio.to_thread(sys.stdin.readline)   # "measure"
        start = time.process_time()
        await asyncio.to_thread(sys.stdin.readline)          # "done"
        print(time.process_time() - start, counted[0], flush=True)
        server.should_exit = True
        await task
    asyncio.run(main())
"""


def _child(mode: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", CHILD, mode, str(STREAMS), str(DELTAS_PER_STREAM)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=os.environ,
    )


async def _clients(port: int) -> int:
    import httpx2

    limits = httpx2.Limits(max_connections=STREAMS + 10)
    async with httpx2.AsyncClient(limits=limits, timeout=120) as client:

        async def one(n: int) -> int:
            body = {
                "id": f"chat-{n}",
                "messages": [
                    {"id": "u", "role": "user", "parts": [{"type": "text", "text": "hi"}]}
                ],
            }
            async with client.stream("POST", f"http://127.0.0.1:{port}/api/chat", json=body) as r:
                assert r.status_code == 200, r.status_code
                return len(await r.aread())

        sizes = await asyncio.gather(*(one(n) for n in range(STREAMS)))
    return sum(sizes)


def streams() -> None:
    bare = _child("bare")
    out, _ = bare.communicate(timeout=600)
    bare_cpu, bare_events = out.split()
    served = _child("serve")
    assert served.stdin is not None and served.stdout is not None
    port = int(served.stdout.readline())
    served.stdin.write("measure\n")
    served.stdin.flush()
    started = time.perf_counter()
    size = asyncio.run(_clients(port))
    wall = time.perf_counter() - started
    served.stdin.write("done\n")
    served.stdin.flush()
    app_cpu, app_events = served.stdout.readline().split()
    served.wait(timeout=60)
    bare_us = float(bare_cpu) / int(bare_events) * 1e6
    app_us = float(app_cpu) / int(app_events) * 1e6
    print(
        f"2. {STREAMS} concurrent streams of {DELTAS_PER_STREAM} deltas "
        f"({int(app_events)} agent events, {size / 1e6:.1f} MB streamed, {wall:.1f} s wall)"
    )
    print(f"   bare Agent.prompt (baseline) {bare_us:8.2f} CPU µs/event")
    print(f"   through chat_app (server)    {app_us:8.2f} CPU µs/event   {app_us / bare_us:.2f}×")


if __name__ == "__main__":
    encoding()
    streams()
