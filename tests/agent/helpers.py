"""Shared helpers for the tau.agent tests: event collection, grammar check, scripted streams."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from tau.agent import (
    Agent,
    AgentEvent,
    AgentTool,
    AgentToolResult,
    MessageEndEvent,
    MessageStartEvent,
    ToolExecutionEndEvent,
    ToolExecutionStartEvent,
)
from tau.ai import AssistantMessage, Model, TextContent, ToolResultMessage
from tau.ai.adapters import MessageBuilder
from tau.ai.streaming.event_stream import AssistantMessageEventStream
from tau.ai.streaming.launch import launch_stream

TIMEOUT = 5.0


async def collect(stream: Any) -> list[AgentEvent]:
    """Every event of an agent stream, failing (not hanging) if it does not end."""

    async def drain() -> list[AgentEvent]:
        return [event async for event in stream]

    return await asyncio.wait_for(drain(), TIMEOUT)


def kinds(events: list[AgentEvent]) -> list[str]:
    return [e.type for e in events]


def check_grammar(events: list[AgentEvent]) -> None:
    """Assert the documented event grammar of one run (see tau.agent.events)."""
    types = kinds(events)
    assert types[0] == "agent_start", types
    assert types[-1] == "agent_end", types
    assert types.count("agent_start") == 1 and types.count("agent_end") == 1, types
    in_turn = False
    open_message: Any = None
    open_tools: dict[str, int] = {}
    awaiting_result: str | None = None
    for i, event in enumerate(events):
        kind = event.type
        if kind == "turn_start":
            assert not in_turn, (i, types)
            in_turn = True
        elif kind == "turn_end":
            assert in_turn and open_message is None and not open_tools, (i, types)
            in_turn = False
        elif kind == "message_start":
            assert in_turn and open_message is None, (i, types)
            assert isinstance(event, MessageStartEvent)
            open_message = event.message
            if awaiting_result is not None:
                assert isinstance(open_message, ToolResultMessage)
                assert open_message.tool_call_id == awaiting_result
        elif kind == "message_update":
            assert isinstance(open_message, AssistantMessage), (i, types)
        elif kind == "message_end":
            assert isinstance(event, MessageEndEvent)
            assert open_message is not None, (i, types)
            assert event.message.role == open_message.role
            open_message = None
            awaiting_result = None
        elif kind == "tool_execution_start":
            assert isinstance(event, ToolExecutionStartEvent)
            assert in_turn and event.tool_call_id not in open_tools
            open_tools[event.tool_call_id] = i
        elif kind == "tool_execution_end":
            assert isinstance(event, ToolExecutionEndEvent)
            assert open_tools.pop(event.tool_call_id, None) is not None, (i, types)
            awaiting_result = event.tool_call_id
        elif kind == "fallback":
            # Before the assistant message starts, or during it (a restart).
            assert in_turn, (i, types)
            assert open_message is None or isinstance(open_message, AssistantMessage), (i, types)
        elif kind == "tool_execution_update":
            assert event.tool_call_id in open_tools  # type: ignore[union-attr]
    assert not in_turn or types[-2] == "turn_end"


async def prompt_collecting(agent: Agent, text: str = "go") -> list[AgentEvent]:
    """Run ``agent.prompt(text)`` (failing, not hanging, after TIMEOUT); its events, checked
    against the grammar."""
    events: list[AgentEvent] = []
    unsubscribe = agent.subscribe(events.append)
    try:
        await asyncio.wait_for(agent.prompt(text), TIMEOUT)
    finally:
        unsubscribe()
    check_grammar(events)
    return events


def result_text(result: AgentToolResult | ToolResultMessage) -> str:
    return "".join(b.text for b in result.content if isinstance(b, TextContent))


def echo_tool(
    name: str = "echo",
    run: Callable[[str, dict[str, Any]], Awaitable[Any] | Any] | None = None,
) -> AgentTool:
    """A tool taking ``{"value": str}`` and returning ``echo: <value>`` (or ``run``'s result)."""

    async def execute(call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
        if run is not None:
            out = run(call_id, params)
            if asyncio.iscoroutine(out):
                out = await out
            return out
        return AgentToolResult(
            [TextContent(f"echo: {params['value']}")], {"value": params["value"]}
        )

    return AgentTool(
        name,
        f"{name} a value",
        {
            "type": "object",
            "properties": {"value": {"type": "string"}},
            "required": ["value"],
        },
        execute=execute,
        label=name.title(),
    )


def hanging_stream_fn(started: asyncio.Event | None = None) -> Callable[..., Any]:
    """A stream function that streams one delta then waits until aborted."""

    def stream_fn(model: Model, context: Any, **options: Any) -> AssistantMessageEventStream:
        async def run(out: MessageBuilder) -> None:
            index = out.open_text()
            out.text_delta(index, "partial")
            if started is not None:
                started.set()
            await asyncio.Event().wait()

        return launch_stream(model, options, run)

    return stream_fn
