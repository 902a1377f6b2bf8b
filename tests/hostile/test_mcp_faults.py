"""MCP servers that crash, hang, never start, vanish or flood stderr: a clear error every time,
the run goes on, and nothing hangs."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import sys
import time
from pathlib import Path

import pytest

from tau.agent import Agent, AgentEvent
from tau.agent.mcp import MCPServer, MCPServerError, model_tool_name
from tau.ai import TextContent, ToolResultMessage
from tau.ai.providers.faux import FauxResponse, faux_model, text, tool_call
from tests.agent.mcp.servers import (
    FIXTURE,
    free_port,
    http_fixture,
    pid_alive,
    stdio_server,
    wait_for_file,
    wait_until,
)

TIMEOUT = 20.0


def results(agent: Agent) -> list[ToolResultMessage]:
    return [m for m in agent.state.messages if isinstance(m, ToolResultMessage)]


# --------------------------------------------------------------------------- dying mid-call


async def test_stdio_server_killed_mid_call_gives_an_error_and_the_next_turn_reconnects(
    tmp_path: Path,
) -> None:
    marker = tmp_path / "slow"
    async with stdio_server(name="victim") as server:
        model = faux_model(
            [
                FauxResponse([tool_call("slow", {"seconds": 60, "marker": str(marker)})]),
                FauxResponse([tool_call("add", {"a": 1, "b": 2})]),
                FauxResponse([text("recovered")]),
            ]
        )
        agent = Agent(model=model, tool_sources=[server])
        statuses: list[str] = []

        def on_event(event: AgentEvent) -> None:
            if event.type == "tool_execution_end":
                statuses.append(server.status)

        agent.subscribe(on_event)
        run = asyncio.create_task(agent.prompt("go"))
        pid = int(await wait_for_file(Path(f"{marker}.started")))
        os.kill(pid, signal.SIGKILL)
        await asyncio.wait_for(run, TIMEOUT)

        slow, add = results(agent)
        assert slow.is_error
        message = slow.content[0].text  # type: ignore[union-attr]
        assert message.startswith("MCP server 'victim' (")
        assert "the server went away during the call to tool 'slow'" in message
        assert statuses[0] == "disconnected"
        assert not add.is_error and add.content == [TextContent("3")]  # a new process
        assert agent.state.messages[-1].text == "recovered"  # type: ignore[union-attr]
        assert server.status == "connected" and not pid_alive(pid)


async def test_http_server_killed_mid_call_then_it_says_it_cannot_reconnect(
    tmp_path: Path,
) -> None:
    marker = tmp_path / "slow"
    with http_fixture() as (url, process):
        server = MCPServer.http(url, name="web", connect_timeout=5)
        async with server:
            call = asyncio.create_task(
                server.call_tool("slow", {"seconds": 60, "marker": str(marker)})
            )
            await wait_for_file(Path(f"{marker}.started"))
            process.kill()
            with pytest.raises(MCPServerError, match=r"MCP server 'web' .*went away") as failed:
                await asyncio.wait_for(call, TIMEOUT)
            assert "slow" in str(failed.value)
            await wait_until(lambda: server.status == "disconnected")
            started = time.monotonic()
            with pytest.raises(MCPServerError, match=r"MCP server 'web' .*cannot connect"):
                await server.call_tool("add", {"a": 1, "b": 2})
            assert time.monotonic() - started < 5
            assert server.status == "failed" and "cannot connect" in (server.error or "")


async def test_server_that_cannot_be_restarted_says_so(tmp_path: Path) -> None:
    script = tmp_path / "server_copy.py"
    shutil.copy(FIXTURE, script)
    pid_file = tmp_path / "pid"
    server = MCPServer.stdio(sys.executable, [str(script)], env={"FIXTURE_PID_FILE": str(pid_file)})
    async with server:
        await server.tools()  # listed once, as in an earlier turn
        os.kill(int(pid_file.read_text()), signal.SIGKILL)
        script.unlink()
        await wait_until(lambda: server.status == "disconnected")
        agent = Agent(
            model=faux_model(
                [FauxResponse([tool_call("add", {"a": 1, "b": 2})]), FauxResponse([text("ok")])]
            ),
            tool_sources=[server],  # the last listing is kept while the server is down
        )
        await asyncio.wait_for(agent.prompt("go"), TIMEOUT)
        (result,) = results(agent)
        assert result.is_error
        message = result.content[0].text  # type: ignore[union-attr]
        assert "exited (or closed the connection) during startup" in message
        assert "can't open file" in message  # the interpreter's last stderr line
        assert agent.state.messages[-1].text == "ok"  # type: ignore[union-attr]


async def test_tool_source_never_listed_and_gone_ends_the_turn_with_the_reason(
    tmp_path: Path,
) -> None:
    script = tmp_path / "server_copy.py"
    shutil.copy(FIXTURE, script)
    pid_file = tmp_path / "pid"
    server = MCPServer.stdio(sys.executable, [str(script)], env={"FIXTURE_PID_FILE": str(pid_file)})
    async with server:
        os.kill(int(pid_file.read_text()), signal.SIGKILL)
        script.unlink()
        await wait_until(lambda: server.status == "disconnected")
        agent = Agent(model=faux_model([FauxResponse([text("never")])]), tool_sources=[server])
        await asyncio.wait_for(agent.prompt("go"), TIMEOUT)
        last = agent.state.messages[-1]
        assert last.stop_reason == "error"  # type: ignore[union-attr]
        assert "can't open file" in (agent.state.error or "")


async def test_a_server_that_died_while_idle_is_restarted_before_the_next_use(
    tmp_path: Path,
) -> None:
    pid_file = tmp_path / "pid"
    async with stdio_server(env={"FIXTURE_PID_FILE": str(pid_file)}) as server:
        first = int(pid_file.read_text())
        os.kill(first, signal.SIGKILL)
        await wait_until(lambda: server.status == "disconnected")
        assert "went away" in (server.error or "")
        result = await asyncio.wait_for(server.call_tool("add", {"a": 2, "b": 2}), TIMEOUT)
        assert result.content == [TextContent("4")]
        assert int(pid_file.read_text()) != first


# --------------------------------------------------------------------------- never starting


async def test_server_that_crashes_on_start_quotes_its_stderr() -> None:
    server = stdio_server("--crash-on-start", name="broken")
    started = time.monotonic()
    with pytest.raises(MCPServerError) as failed:
        await server.connect()
    assert time.monotonic() - started < 10
    message = str(failed.value)
    assert message.startswith("MCP server 'broken' (")
    assert message.endswith(
        "the server exited (or closed the connection) during startup; "
        "stderr: RuntimeError: missing FIXTURE_TOKEN"
    )
    assert server.status == "failed" and server.error == message
    assert "starting the fixture server" in server.stderr


async def test_server_that_never_answers_times_out_and_is_stopped(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    server = stdio_server(
        "--hang-on-start", connect_timeout=1.0, env={"FIXTURE_PID_FILE": str(pid_file)}
    )
    started = time.monotonic()
    with pytest.raises(MCPServerError, match=r"no MCP handshake within 1 s"):
        await server.connect()
    assert time.monotonic() - started < 10
    pid = int(pid_file.read_text())
    await wait_until(lambda: not pid_alive(pid))


async def test_missing_command() -> None:
    with pytest.raises(MCPServerError, match="cannot connect: No such file or directory"):
        await MCPServer.stdio("/nonexistent/mcp-server", name="ghost").connect()


async def test_unreachable_http_server() -> None:
    server = MCPServer.http(f"http://127.0.0.1:{free_port()}/mcp", connect_timeout=5)
    started = time.monotonic()
    with pytest.raises(MCPServerError, match=r"MCP server '127.0.0.1' \(http: .*cannot connect"):
        await server.connect()
    assert time.monotonic() - started < 5


async def test_stdout_garbage_instead_of_mcp_times_out_cleanly() -> None:
    code = "import time\nprint('hello, I am not MCP', flush=True)\ntime.sleep(60)"
    server = MCPServer.stdio(sys.executable, ["-c", code], connect_timeout=1.0, name="chatty")
    with pytest.raises(MCPServerError) as failed:
        await server.connect()
    assert str(failed.value).startswith("MCP server 'chatty' (")
    assert str(failed.value).endswith(
        "no MCP handshake within 1 s; it sent something that is not MCP: 'hello, I am not MCP'"
    )


async def test_stderr_flood_is_kept_bounded() -> None:
    code = "import sys\nsys.stderr.write('x' * 2_000_000 + '\\nlast words\\n')\nsys.exit(1)"
    server = MCPServer.stdio(sys.executable, ["-c", code], name="noisy")
    with pytest.raises(MCPServerError, match=r"stderr: last words$"):
        await server.connect()
    assert len(server.stderr) <= 8192 and server.stderr.endswith("last words\n")


async def test_using_a_server_that_was_never_connected_or_is_closed() -> None:
    server = stdio_server()
    with pytest.raises(MCPServerError, match="is not connected: use `async with server:`"):
        await server.tools()
    async with server:
        assert (await server.call_tool("add", {"a": 1, "b": 1})).content == [TextContent("2")]
    assert server.status == "closed"
    with pytest.raises(MCPServerError, match="is not connected"):
        await server.call_tool("add", {"a": 1, "b": 1})


def test_tool_names_providers_would_refuse_are_made_acceptable() -> None:
    assert model_tool_name("search", "gh") == "gh_search"
    assert model_tool_name("files/read.all") == "files_read_all"
    assert model_tool_name("") == "_"
    long = model_tool_name("x" * 100, "p")
    assert len(long) == 64 and long.startswith("p_xxx")
    assert long != model_tool_name("x" * 99 + "y", "p")  # the hash keeps them apart


RESOURCES_ONLY = """
from mcp.server.mcpserver import MCPServer

app = MCPServer("docs", log_level="WARNING")

@app.resource("doc://intro", mime_type="text/plain")
def intro() -> str:
    return "introduction"

app.run()
"""


async def test_a_server_without_tools_is_a_source_of_no_tools() -> None:
    async with MCPServer.stdio(sys.executable, ["-c", RESOURCES_ONLY], name="docs") as docs:
        assert docs.server_info is not None and docs.server_info.name == "docs"
        assert await docs.tools() == []
        agent = Agent(model=faux_model([FauxResponse([text("fine")])]), tool_sources=[docs])
        await asyncio.wait_for(agent.prompt("go"), TIMEOUT)
        assert agent.state.error is None
        assert await docs.read_resource("doc://intro") == [
            TextContent("[resource doc://intro (text/plain)]\nintroduction")
        ]
