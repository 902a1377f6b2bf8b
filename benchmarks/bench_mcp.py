"""MCP tool calls through ``tau.agent.mcp`` next to the MCP SDK's own client, same server.

A FastMCP (``mcp.server.mcpserver.MCPServer``) server over stdio, started once per client.
Measured, per call (median of 5 rounds of 300 sequential calls): wall µs and client CPU µs
(``time.process_time``) of ``tools/call add`` through the SDK's ``Client.call_tool`` (the
baseline) and through ``MCPServer.call_tool`` (result mapped to tau content); and the per-turn
cost of a tool source, ``MCPServer.tools()``, next to a bare SDK ``list_tools``: with a
server that reports tool changes (a ``subscriptions/listen`` stream: no round trip), and with
one that does not (``subscriptions=False``: one ``tools/list`` per turn, the agent tools
reused while the listing is unchanged). Needs the ``[mcp]`` extra.

    python benchmarks/bench_mcp.py
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from mcp import Client, StdioServerParameters

from tau.agent.mcp import MCPServer

SERVER = """
from mcp.server.mcpserver import MCPServer

app = MCPServer("bench", log_level="WARNING", subscriptions=LISTEN)

@app.tool()
def add(a: int, b: int) -> int:
    return a + b

for n in range(20):  # a realistic listing: 20 more tools with small schemas
    app.add_tool(lambda text: text, name=f"tool_{n}", description=f"Tool number {n}.")

app.run()
"""

CALLS = 300
ROUNDS = 5


async def _measure(call: Callable[[], Awaitable[object]]) -> tuple[float, float]:
    walls: list[float] = []
    cpus: list[float] = []
    for _ in range(ROUNDS):
        wall, cpu = time.perf_counter(), time.process_time()
        for _ in range(CALLS):
            await call()
        walls.append((time.perf_counter() - wall) / CALLS * 1e6)
        cpus.append((time.process_time() - cpu) / CALLS * 1e6)
    return statistics.median(walls), statistics.median(cpus)


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "bench_server.py"
        script.write_text("LISTEN = None\n" + SERVER)
        unannounced = Path(tmp) / "bench_server_no_listen.py"
        unannounced.write_text("LISTEN = False\n" + SERVER)
        params = StdioServerParameters(command=sys.executable, args=[str(script)])
        async with Client(params) as client:
            sdk_call = await _measure(lambda: client.call_tool("add", {"a": 1, "b": 2}))
            sdk_list = await _measure(client.list_tools)
            version = client.protocol_version
        async with MCPServer.stdio(sys.executable, [str(script)]) as server:
            tau_call = await _measure(lambda: server.call_tool("add", {"a": 1, "b": 2}))
            tau_list = await _measure(server.tools)
        async with MCPServer.stdio(sys.executable, [str(unannounced)]) as server:
            tau_relist = await _measure(server.tools)
    print(f"MCP over stdio, protocol {version}; median of {ROUNDS} rounds of {CALLS} calls")
    print(
        f"{'operation':34} {'sdk wall µs':>11} {'tau wall µs':>11} {'ratio':>6}"
        f" {'sdk cpu µs':>10} {'tau cpu µs':>10} {'ratio':>6}"
    )
    for name, sdk, tau in (
        ("tools/call add", sdk_call, tau_call),
        ("tools() per turn, changes reported", sdk_list, tau_list),
        ("tools() per turn, unannounced", sdk_list, tau_relist),
    ):
        print(
            f"{name:34} {sdk[0]:11.1f} {tau[0]:11.1f} {tau[0] / sdk[0]:5.2f}×"
            f" {sdk[1]:10.1f} {tau[1]:10.1f} {tau[1] / sdk[1]:5.2f}×"
        )


if __name__ == "__main__":
    asyncio.run(main())
