"""MCP tools in agent runs, against a real FastMCP server over stdio and streamable HTTP.

One server per transport is shared by the module (starting one costs about a second); tests
that change or kill a server start their own (see tests/hostile/test_mcp_faults.py).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from tau.agent import Agent, AgentEvent, AgentTool
from tau.agent.mcp import MCPServer, MCPServerError, MCPTool, MCPToolError
from tau.ai import ImageContent, TextContent, ToolResultMessage
from tau.ai.providers.faux import FauxResponse, faux_calls, faux_model, text, tool_call
from tests.agent.mcp.servers import http_fixture, stdio_server, wait_for_file, wait_until

pytestmark = pytest.mark.asyncio(loop_scope="module")

TIMEOUT = 20.0


@pytest.fixture(scope="module")
def http_url() -> Iterator[str]:
    with http_fixture() as (url, _process):
        yield url


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def stdio_mcp() -> AsyncIterator[MCPServer]:
    async with stdio_server() as server:
        yield server


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def http_mcp(http_url: str) -> AsyncIterator[MCPServer]:
    async with MCPServer.http(http_url, name="fixture") as server:
        yield server


@pytest.fixture(params=["stdio", "http"])
def server(request: pytest.FixtureRequest) -> MCPServer:
    return request.getfixturevalue(f"{request.param}_mcp")  # type: ignore[no-any-return]


async def run_agent(
    script: list[FauxResponse], prompt: str = "go", **options: Any
) -> tuple[Agent, list[AgentEvent]]:
    """One agent run with a scripted model; returns the agent and every event."""
    agent = Agent(model=faux_model(script), **options)
    events: list[AgentEvent] = []
    agent.subscribe(events.append)
    await asyncio.wait_for(agent.prompt(prompt), TIMEOUT)
    return agent, events


def tool_results(agent: Agent) -> list[ToolResultMessage]:
    return [m for m in agent.state.messages if isinstance(m, ToolResultMessage)]


# --------------------------------------------------------------------------- listing


async def test_tools_are_listed_with_name_description_schema_and_label(server: MCPServer) -> None:
    tools = {tool.name: tool for tool in await server.tools()}
    assert {"echo", "add", "weather", "picture", "fail", "count", "slow"} <= set(tools)
    echo = tools["echo"]
    assert isinstance(echo, MCPTool) and isinstance(echo, AgentTool)
    assert echo.description == "Return the text, prefixed with the server's name."
    assert echo.label == "Echo a text"  # the MCP tool title
    assert tools["add"].label == "add"  # no title: the name
    schema = echo.json_schema
    assert schema["type"] == "object" and schema["required"] == ["text"]
    assert schema["properties"]["text"]["type"] == "string"
    assert server.status == "connected" and server.instructions == "the fixture test server"


async def test_prefix_include_and_exclude(server: MCPServer) -> None:
    only = await server.tools(prefix="fx", include=["echo", "add"])
    assert sorted(t.name for t in only) == ["fx_add", "fx_echo"]
    assert {t.mcp_name for t in only if isinstance(t, MCPTool)} == {"add", "echo"}
    rest = {t.name for t in await server.tools(exclude=["echo"])}
    assert "echo" not in rest and "add" in rest


# --------------------------------------------------------------------------- calling


async def test_agent_run_calls_tools_with_text_structured_and_image_results(
    server: MCPServer,
) -> None:
    agent, events = await run_agent(
        [
            FauxResponse(
                [
                    tool_call("add", {"a": 2, "b": "3"}),  # "3": coerced by the schema
                    tool_call("weather", {"city": "Paris"}),
                    tool_call("picture", {}),
                ]
            ),
            FauxResponse([text("All done.")]),
        ],
        tool_sources=[server],
    )
    add, weather, picture = tool_results(agent)
    assert not (add.is_error or weather.is_error or picture.is_error)
    assert add.content == [TextContent("5")] and add.details == {"result": 5}
    assert weather.details == {"city": "Paris", "temperature": 22, "sky": "sunny"}
    assert '"sky": "sunny"' in weather.content[0].text  # type: ignore[union-attr]
    (image,) = picture.content
    assert isinstance(image, ImageContent) and image.mime_type == "image/png"
    assert image.data.startswith("iVBORw0KGgo")
    assert agent.state.messages[-1].text == "All done."  # type: ignore[union-attr]
    ends = [e for e in events if e.type == "tool_execution_end"]
    assert [e.tool_name for e in ends] == ["add", "weather", "picture"]  # type: ignore[union-attr]


async def test_audio_resources_and_links_become_notes(stdio_mcp: MCPServer) -> None:
    result = await stdio_mcp.call_tool("mixed")
    texts = [b.text for b in result.content if isinstance(b, TextContent)]
    assert texts == [
        "[audio: audio/wav, 12 bytes; audio is not passed to the model]",
        "[resource note://inline (text/plain)]\ninline note",
        "[resource blob://data: application/octet-stream, 3 bytes; binary content not shown]",
        "[resource link readme <file:///readme.md> (text/markdown)]",
    ]


async def test_is_error_becomes_an_error_result(server: MCPServer) -> None:
    agent, _ = await run_agent(
        [
            FauxResponse([tool_call("fail", {"message": "disk is full"})]),
            FauxResponse([text("Sorry.")]),
        ],
        tool_sources=[server],
    )
    (result,) = tool_results(agent)
    assert result.is_error
    assert result.content == [TextContent("Error executing tool fail: disk is full")]
    with pytest.raises(MCPToolError, match="disk is full"):
        await server.call_tool("fail", {"message": "disk is full"})


async def test_progress_notifications_reach_tool_execution_update(server: MCPServer) -> None:
    _, events = await run_agent(
        [FauxResponse([tool_call("count", {"steps": 3})]), FauxResponse([text("ok")])],
        tool_sources=[server],
    )
    updates = [e for e in events if e.type == "tool_execution_update"]
    assert [u.partial_result.content[0].text for u in updates] == [  # type: ignore[union-attr]
        "step 1 (1/3)",
        "step 2 (2/3)",
        "step 3 (3/3)",
    ]
    assert updates[-1].partial_result.details == {  # type: ignore[union-attr]
        "progress": 3,
        "total": 3,
        "message": "step 3",
    }
    kinds = [e.type for e in events]
    assert kinds.index("tool_execution_update") < kinds.index("tool_execution_end")


async def test_abort_during_a_slow_tool_cancels_it_on_the_server(
    server: MCPServer, tmp_path: Path
) -> None:
    marker = tmp_path / "cancelled"
    agent = Agent(
        model=faux_model(
            [FauxResponse([tool_call("slow", {"seconds": 60, "marker": str(marker)})])]
        ),
        tool_sources=[server],
    )
    run = asyncio.create_task(agent.prompt("go"))
    await wait_for_file(Path(f"{marker}.started"))
    aborted_at = time.monotonic()
    agent.abort("user pressed stop")
    await asyncio.wait_for(run, TIMEOUT)
    elapsed = time.monotonic() - aborted_at
    assert elapsed < 1.0, elapsed
    (result,) = tool_results(agent)
    assert result.is_error and result.content == [TextContent("user pressed stop")]
    assert agent.state.error == "user pressed stop"
    await wait_for_file(marker, 5.0)  # the server received notifications/cancelled
    assert marker.read_text() == "cancelled"
    assert (await server.call_tool("add", {"a": 1, "b": 1})).details == {"result": 2}


async def test_per_call_timeout_cancels_the_call(server: MCPServer, tmp_path: Path) -> None:
    marker = tmp_path / "cancelled"
    saved, server.timeout = server.timeout, 0.5
    try:
        started = time.monotonic()
        with pytest.raises(MCPServerError, match=r"call to tool 'slow' got no answer within 0.5 s"):
            await server.call_tool("slow", {"seconds": 60, "marker": str(marker)})
        assert time.monotonic() - started < 5
    finally:
        server.timeout = saved
    await wait_for_file(marker, 5.0)
    assert server.status == "connected"


# --------------------------------------------------------------------------- tool sources


@pytest.mark.parametrize(
    ("flags", "version", "notified"),
    [
        (("--legacy",), "2025-11-25", True),  # notifications/tools/list_changed
        ((), "2026-07-28", True),  # the same through subscriptions/listen
        (("--no-listen",), "2026-07-28", False),  # unannounced: listed on every turn
    ],
    ids=["2025-notification", "2026-listen", "2026-unannounced"],
)
async def test_tools_changed_mid_session_are_offered_next_turn(
    flags: tuple[str, ...], version: str, notified: bool
) -> None:
    async with stdio_server(*flags) as server:
        assert server.protocol_version == version
        await wait_until(lambda: server.notifies_tool_changes == notified)
        model = faux_model(
            [
                FauxResponse([tool_call("grow", {"tool": "shout"})]),
                FauxResponse([tool_call("shout", {"text": "hi"})]),
                FauxResponse([text("done")]),
            ]
        )
        agent = Agent(model=model, tool_sources=[server])
        await asyncio.wait_for(agent.prompt("go"), TIMEOUT)
        offered = [[t.name for t in context.tools or ()] for context, _ in faux_calls(model)]
        assert "shout" not in offered[0]
        assert "shout" in offered[1] and "shout" in offered[2]
        grown, shouted = tool_results(agent)
        assert grown.content == [TextContent("added shout")]
        assert not shouted.is_error and shouted.content == [TextContent("shout says hi")]


async def test_two_servers_with_clashing_names_need_prefixes(stdio_mcp: MCPServer) -> None:
    async with stdio_server("--name", "beta", name="beta") as beta:
        agent, _ = await run_agent([FauxResponse([text("never")])], tool_sources=[stdio_mcp, beta])
        last = agent.state.messages[-1]
        assert last.stop_reason == "error"  # type: ignore[union-attr]
        assert last.error_message.startswith(  # type: ignore[union-attr]
            "two tools are named \"echo\" (MCPServer 'fixture' and MCPServer 'beta')"
        )
        assert "prefix" in last.error_message  # type: ignore[union-attr]

        agent, _ = await run_agent(
            [
                FauxResponse(
                    [tool_call("a_echo", {"text": "hi"}), tool_call("b_echo", {"text": "hi"})]
                ),
                FauxResponse([text("ok")]),
            ],
            tool_sources=[stdio_mcp.toolset(prefix="a"), beta.toolset(prefix="b")],
        )
        assert [r.content for r in tool_results(agent)] == [
            [TextContent("fixture: hi")],
            [TextContent("beta: hi")],
        ]


async def test_fixed_tools_and_tool_sources_together(stdio_mcp: MCPServer) -> None:
    fixed = await stdio_mcp.tools(include=["add"])
    agent, _ = await run_agent(
        [FauxResponse([tool_call("echo", {"text": "x"})]), FauxResponse([text("ok")])],
        tools=fixed,
        tool_sources=[stdio_mcp.toolset(exclude=["add"])],
    )
    assert tool_results(agent)[0].content == [TextContent("fixture: x")]


# --------------------------------------------------------------------------- resources, prompts


async def test_resources_and_prompts(server: MCPServer) -> None:
    resources = {r.uri: r for r in await server.list_resources()}
    assert set(resources) == {"note://hello", "img://dot"}
    assert resources["note://hello"].description == "A greeting."
    assert await server.read_resource("note://hello") == [
        TextContent("[resource note://hello (text/plain)]\nhello from a resource")
    ]
    (image,) = await server.read_resource("img://dot")
    assert isinstance(image, ImageContent) and image.mime_type == "image/png"
    (prompt,) = await server.list_prompts()
    assert prompt.name == "review" and [a.name for a in prompt.arguments or ()] == ["code"]
    user, assistant = await server.get_prompt("review", {"code": "x = 1"})
    assert user.role == "user" and user.content == [TextContent("Review this code:\nx = 1")]
    assert assistant.role == "assistant" and assistant.text == "Looking at it."  # type: ignore[union-attr]
    with pytest.raises(MCPServerError, match="reading resource 'note://nope' failed"):
        await server.read_resource("note://nope")


async def test_http_headers_reach_the_server(http_url: str) -> None:
    headers = {"Authorization": "Bearer t0ken", "X-Team": "tau"}
    async with MCPServer.http(http_url, headers) as server:
        for key, value in headers.items():
            result = await server.call_tool("header", {"key": key})
            assert result.content == [TextContent(value)]


async def test_sse_transport() -> None:
    with http_fixture(transport="--sse") as (url, _process):
        async with MCPServer.sse(url, {"X-Team": "tau"}, name="old") as server:
            assert "echo" in {t.name for t in await server.tools()}
            result = await server.call_tool("echo", {"text": "over sse"})
            assert result.content == [TextContent("fixture: over sse")]
            header = await server.call_tool("header", {"key": "X-Team"})
            assert header.content == [TextContent("tau")]
