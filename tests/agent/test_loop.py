"""The stateless loop: the event order of a run, tools and steering."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any, Literal

import pytest

from tau.agent import (
    AgentContext,
    AgentError,
    AgentEvent,
    AgentLoopConfig,
    AgentMessage,
    AgentTool,
    AgentToolResult,
    BeforeToolCallResult,
    MessageEndEvent,
    MessageStartEvent,
    ToolExecutionEndEvent,
    TurnEndEvent,
    agent_loop,
    agent_loop_continue,
    register_message_type,
    run_agent_loop,
    unregister_message_type,
)
from tau.ai import AssistantMessage, TextContent, ToolResultMessage, UserMessage
from tau.ai.core.types import Message, now_ms
from tau.ai.providers.faux import (
    FauxResponse,
    faux_calls,
    faux_model,
    text,
    thinking,
    tool_call,
)

from .helpers import check_grammar, collect, echo_tool, kinds, result_text


@dataclass
class Notification:
    text: str
    timestamp: int = field(default_factory=now_ms)
    role: Literal["notification"] = "notification"


@pytest.fixture(autouse=True)
def _notification_type() -> Any:
    register_message_type("notification", Notification)
    yield
    unregister_message_type("notification")


def config(model: Any, **kwargs: Any) -> AgentLoopConfig:
    return AgentLoopConfig(model=model, **kwargs)


def tool_result_ids(events: list[AgentEvent]) -> list[str]:
    return [
        e.message.tool_call_id
        for e in events
        if isinstance(e, MessageEndEvent) and isinstance(e.message, ToolResultMessage)
    ]


# --------------------------------------------------------------------------- the loop


async def test_emits_events_with_agent_message_types() -> None:
    model = faux_model([FauxResponse([text("Hi there")])])
    prompt = UserMessage("Hello")
    stream = agent_loop([prompt], AgentContext("You are helpful."), config(model))
    events = await collect(stream)
    messages = await stream.result()
    assert [m.role for m in messages] == ["user", "assistant"]
    assert messages[0] is prompt
    assert isinstance(messages[1], AssistantMessage) and messages[1].text == "Hi there"
    for kind in ("agent_start", "turn_start", "message_start", "message_end", "turn_end"):
        assert kind in kinds(events)
    assert kinds(events)[-1] == "agent_end"
    check_grammar(events)


async def test_custom_message_types_are_filtered_by_convert_to_llm() -> None:
    model = faux_model([FauxResponse([text("ok")])])
    seen: list[list[Message]] = []

    def convert(messages: list[AgentMessage]) -> list[Message]:
        out = [m for m in messages if not isinstance(m, Notification)]
        seen.append(out)  # type: ignore[arg-type]
        return out  # type: ignore[return-value]

    context = AgentContext("", [Notification("build finished")])
    stream = agent_loop([UserMessage("hi")], context, config(model, convert_to_llm=convert))
    await collect(stream)
    assert len(seen) == 1 and [m.role for m in seen[0]] == ["user"]
    sent = faux_calls(model)[0][0].messages
    assert [m.role for m in sent] == ["user"]


async def test_default_convert_to_llm_drops_custom_messages() -> None:
    model = faux_model([FauxResponse([text("ok")])])
    context = AgentContext("", [Notification("n1")])
    await collect(agent_loop([UserMessage("hi")], context, config(model)))
    assert [m.role for m in faux_calls(model)[0][0].messages] == ["user"]


async def test_transform_context_runs_before_convert_to_llm_on_every_call() -> None:
    model = faux_model(
        [
            FauxResponse([tool_call("echo", {"value": "x"}, id="t1")]),
            FauxResponse([text("done")]),
        ]
    )
    order: list[str] = []
    converted: list[list[Any]] = []

    async def transform(messages: list[AgentMessage], signal: Any) -> list[AgentMessage]:
        order.append("transform")
        return messages[-2:]

    def convert(messages: list[AgentMessage]) -> list[Message]:
        order.append("convert")
        converted.append(list(messages))
        return [m for m in messages if not isinstance(m, Notification)]  # type: ignore[misc]

    prior: list[AgentMessage] = [UserMessage(f"m{i}") for i in range(4)]
    context = AgentContext("", prior, [echo_tool()])
    stream = agent_loop(
        [UserMessage("new")],
        context,
        config(model, transform_context=transform, convert_to_llm=convert),
    )
    await collect(stream)
    assert order == ["transform", "convert", "transform", "convert"]
    # The transform result feeds the converter; the stored context keeps everything.
    assert len(converted[0]) == 2 and converted[0][-1].content == "new"
    assert [m.role for m in converted[1]] == ["assistant", "toolResult"]
    assert len(context.messages) == 4  # the caller's context is not modified


async def test_tool_calls_and_results() -> None:
    ran: list[Any] = []

    def run(call_id: str, params: Any) -> str:
        ran.append(params["value"])
        return f"echo: {params['value']}"

    model = faux_model(
        [
            FauxResponse([tool_call("echo", {"value": "hello"}, id="call-1")]),
            FauxResponse([text("finished")]),
        ]
    )
    stream = agent_loop(
        [UserMessage("echo hello")], AgentContext("", [], [echo_tool(run=run)]), config(model)
    )
    events = await collect(stream)
    assert ran == ["hello"]
    types = kinds(events)
    assert "tool_execution_start" in types and "tool_execution_end" in types
    end = next(e for e in events if isinstance(e, ToolExecutionEndEvent))
    assert end.is_error is False and result_text(end.result) == "echo: hello"
    messages = await stream.result()
    assert [m.role for m in messages] == ["user", "assistant", "toolResult", "assistant"]
    # The second LLM call saw the tool result.
    assert [m.role for m in faux_calls(model)[1][0].messages] == ["user", "assistant", "toolResult"]
    check_grammar(events)


async def test_parallel_tools_run_concurrently_and_results_keep_source_order() -> None:
    second_started = asyncio.Event()
    finished: list[str] = []

    async def run(call_id: str, params: Any) -> str:
        if params["value"] == "first":
            # Only returns once the second call is running: proves concurrency.
            await asyncio.wait_for(second_started.wait(), 2)
            await asyncio.sleep(0.02)
        else:
            second_started.set()
        finished.append(params["value"])
        return params["value"]  # type: ignore[no-any-return]

    model = faux_model(
        [
            FauxResponse(
                [
                    tool_call("echo", {"value": "first"}, id="tool-1"),
                    tool_call("echo", {"value": "second"}, id="tool-2"),
                ]
            ),
            FauxResponse([text("done")]),
        ]
    )
    stream = agent_loop(
        [UserMessage("go")], AgentContext("", [], [echo_tool(run=run)]), config(model)
    )
    events = await collect(stream)
    assert finished == ["second", "first"]
    assert tool_result_ids(events) == ["tool-1", "tool-2"]
    check_grammar(events)


async def test_steering_skips_remaining_tool_calls_in_sequential_mode() -> None:
    executed: list[str] = []
    interrupt = UserMessage("interrupt")
    delivered = False

    def run(call_id: str, params: Any) -> str:
        executed.append(params["value"])
        return "ok"

    def get_steering() -> list[AgentMessage]:
        nonlocal delivered
        if executed and not delivered:
            delivered = True
            return [interrupt]
        return []

    model = faux_model(
        [
            FauxResponse(
                [
                    tool_call("echo", {"value": "first"}, id="tool-1"),
                    tool_call("echo", {"value": "second"}, id="tool-2"),
                ]
            ),
            FauxResponse([text("handled the interrupt")]),
        ]
    )
    stream = agent_loop(
        [UserMessage("start")],
        AgentContext("", [], [echo_tool(run=run)]),
        config(model, tool_execution="sequential", get_steering_messages=get_steering),
    )
    events = await collect(stream)
    assert executed == ["first"]
    ends = [e for e in events if isinstance(e, ToolExecutionEndEvent)]
    assert [e.is_error for e in ends] == [False, True]
    assert "Skipped due to queued user message" in result_text(ends[1].result)
    assert any(isinstance(e, MessageStartEvent) and e.message is interrupt for e in events)
    second_context = faux_calls(model)[1][0].messages
    assert interrupt in second_context
    # The skipped call still answers its tool call id, before the steering message.
    roles = [m.role for m in second_context]
    assert roles == ["user", "assistant", "toolResult", "toolResult", "user"]
    check_grammar(events)


def test_continue_without_messages_raises_synchronously() -> None:
    model = faux_model([])
    with pytest.raises(AgentError, match="Cannot continue: no messages in context"):
        agent_loop_continue(AgentContext(), config(model))


def test_continue_from_assistant_raises_synchronously() -> None:
    model = faux_model([])
    last = AssistantMessage([TextContent("hi")], "faux", "faux", "m")
    with pytest.raises(AgentError, match="Cannot continue from message role: assistant"):
        agent_loop_continue(AgentContext("", [UserMessage("x"), last]), config(model))


async def test_continue_from_existing_context_emits_no_user_message_events() -> None:
    model = faux_model([FauxResponse([text("Response")])])
    context = AgentContext("", [UserMessage("Hello")])
    stream = agent_loop_continue(context, config(model))
    events = await collect(stream)
    messages = await stream.result()
    assert [m.role for m in messages] == ["assistant"]
    ends = [e for e in events if isinstance(e, MessageEndEvent)]
    assert len(ends) == 1 and ends[0].message.role == "assistant"
    assert kinds(events)[:3] == ["agent_start", "turn_start", "message_start"]
    assert len(context.messages) == 1  # a copy is extended, not the caller's list


async def test_continue_allows_a_custom_message_last() -> None:
    model = faux_model([FauxResponse([text("Response to custom")])])

    def convert(messages: list[AgentMessage]) -> list[Message]:
        out: list[Message] = []
        for m in messages:
            if isinstance(m, Notification):
                out.append(UserMessage(m.text))
            elif isinstance(m, UserMessage | AssistantMessage | ToolResultMessage):
                out.append(m)
        return out

    context = AgentContext("", [Notification("Hook content")])
    stream = agent_loop_continue(context, config(model, convert_to_llm=convert))
    await collect(stream)
    assert [m.role for m in await stream.result()] == ["assistant"]
    assert faux_calls(model)[0][0].messages[0].content == "Hook content"


# --------------------------------------------------------------------------- the seed's diagram

GOLDEN_TWO_TURNS = [
    "agent_start",
    "turn_start",
    "message_start",  # user
    "message_end",
    "message_start",  # assistant 1
    "message_update",  # thinking_start
    "message_update",  # thinking_delta
    "message_update",  # thinking_end
    "message_update",  # text_start
    "message_update",  # text_delta
    "message_update",  # text_end
    "message_update",  # toolcall_start
    "message_update",  # toolcall_delta
    "message_update",  # toolcall_end
    "message_end",
    "tool_execution_start",
    "tool_execution_update",
    "tool_execution_end",
    "message_start",  # toolResult
    "message_end",
    "turn_end",
    "turn_start",
    "message_start",  # assistant 2
    "message_update",  # text_start
    "message_update",  # text_delta
    "message_update",  # text_end
    "message_end",
    "turn_end",
    "agent_end",
]


def golden_model() -> Any:
    return faux_model(
        [
            FauxResponse(
                [
                    thinking("The user wants the time."),
                    text("Let me check."),
                    tool_call("clock", {"zone": "UTC"}, id="call-1"),
                ],
                chunk_size=0,
            ),
            FauxResponse([text("It is noon.")], chunk_size=0),
        ],
        reasoning=True,
    )


def clock_tool() -> AgentTool:
    def execute(call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        on_update(AgentToolResult([TextContent("looking…")]))
        return AgentToolResult([TextContent("12:00")], {"zone": params["zone"]})

    return AgentTool(
        "clock",
        "Current time",
        {"type": "object", "properties": {"zone": {"type": "string"}}, "required": ["zone"]},
        execute=execute,
    )


async def test_golden_event_sequence_of_a_two_turn_run() -> None:
    stream = agent_loop(
        [UserMessage("What time is it?")],
        AgentContext("", [], [clock_tool()]),
        config(golden_model(), reasoning="medium"),
    )
    events = await collect(stream)
    assert kinds(events) == GOLDEN_TWO_TURNS
    updates = [e.assistant_message_event.type for e in events if e.type == "message_update"]  # type: ignore[union-attr]
    assert updates == [
        "thinking_start",
        "thinking_delta",
        "thinking_end",
        "text_start",
        "text_delta",
        "text_end",
        "toolcall_start",
        "toolcall_delta",
        "toolcall_end",
        "text_start",
        "text_delta",
        "text_end",
    ]
    check_grammar(events)


async def test_golden_sequence_with_an_awaiting_sink() -> None:
    seen: list[AgentEvent] = []

    async def sink(event: AgentEvent) -> None:
        await asyncio.sleep(0)
        seen.append(event)

    messages = await run_agent_loop(
        [UserMessage("What time is it?")],
        AgentContext("", [], [clock_tool()]),
        config(golden_model()),
        sink,
    )
    assert kinds(seen) == GOLDEN_TWO_TURNS
    assert [m.role for m in messages] == ["user", "assistant", "toolResult", "assistant"]


async def test_message_events_share_the_live_partial_and_end_with_the_final() -> None:
    model = faux_model([FauxResponse([text("abcdefgh")], chunk_size=2)])
    events = await collect(agent_loop([UserMessage("x")], AgentContext(), config(model)))
    assistant_events = [e for e in events if getattr(e, "message", None) is not None][2:]
    final = assistant_events[-1].message  # type: ignore[union-attr]
    assert all(e.message is final for e in assistant_events)  # type: ignore[union-attr]
    deltas = [
        e.assistant_message_event.delta  # type: ignore[union-attr]
        for e in events
        if e.type == "message_update" and e.assistant_message_event.type == "text_delta"  # type: ignore[union-attr]
    ]
    assert deltas == ["ab", "cd", "ef", "gh"]


# --------------------------------------------------------------------------- parallel ordering


async def test_parallel_results_in_call_order_including_early_failures() -> None:
    release = asyncio.Event()
    finished: list[str] = []

    async def run(call_id: str, params: Any) -> str:
        if params["value"] == "slow":
            await asyncio.wait_for(release.wait(), 2)
        else:
            release.set()
        finished.append(params["value"])
        return params["value"]  # type: ignore[no-any-return]

    def before(ctx: Any, signal: Any) -> BeforeToolCallResult | None:
        if ctx.args.get("value") == "forbidden":
            return BeforeToolCallResult(block=True, reason="not allowed here")
        return None

    model = faux_model(
        [
            FauxResponse(
                [
                    tool_call("echo", {"value": "slow"}, id="A"),
                    tool_call("missing_tool", {}, id="B"),
                    tool_call("echo", {}, id="C"),
                    tool_call("echo", {"value": "forbidden"}, id="D"),
                    tool_call("echo", {"value": "fast"}, id="E"),
                ]
            ),
            FauxResponse([text("done")]),
        ]
    )
    stream = agent_loop(
        [UserMessage("go")],
        AgentContext("", [], [echo_tool(run=run)]),
        config(model, before_tool_call=before),
    )
    events = await collect(stream)
    assert finished == ["fast", "slow"]
    ends = [e for e in events if isinstance(e, ToolExecutionEndEvent)]
    assert [e.tool_call_id for e in ends] == ["A", "B", "C", "D", "E"]
    assert tool_result_ids(events) == ["A", "B", "C", "D", "E"]
    turn_end = next(e for e in events if isinstance(e, TurnEndEvent))
    assert [r.tool_call_id for r in turn_end.tool_results] == ["A", "B", "C", "D", "E"]
    texts = {e.tool_call_id: (e.is_error, result_text(e.result)) for e in ends}
    assert texts["A"] == (False, "slow")
    assert texts["B"] == (True, "Tool missing_tool not found")
    assert texts["C"][0] is True and "Validation failed" in texts["C"][1]
    assert texts["D"] == (True, "not allowed here")
    assert texts["E"] == (False, "fast")
    # Every start comes before the first end: preflight first, then execution.
    types = kinds(events)
    last_start = max(i for i, t in enumerate(types) if t == "tool_execution_start")
    first_end = types.index("tool_execution_end")
    assert last_start < first_end
    check_grammar(events)


async def test_blocked_without_reason_uses_default_text() -> None:
    model = faux_model(
        [FauxResponse([tool_call("echo", {"value": "x"}, id="A")]), FauxResponse(["ok"])]
    )
    stream = agent_loop(
        [UserMessage("go")],
        AgentContext("", [], [echo_tool()]),
        config(model, before_tool_call=lambda ctx, sig: BeforeToolCallResult(block=True)),
    )
    events = await collect(stream)
    end = next(e for e in events if isinstance(e, ToolExecutionEndEvent))
    assert end.is_error and result_text(end.result) == "Tool execution was blocked"


async def test_parallel_steering_during_preflight_skips_the_whole_batch() -> None:
    executed: list[str] = []
    polls = 0
    steer = UserMessage("change of plan")

    def get_steering() -> list[AgentMessage]:
        nonlocal polls
        polls += 1
        return [steer] if polls == 2 else []  # 1: initial poll, 2: after preparing A

    model = faux_model(
        [
            FauxResponse(
                [
                    tool_call("echo", {"value": "a"}, id="A"),
                    tool_call("echo", {"value": "b"}, id="B"),
                ]
            ),
            FauxResponse(["ok"]),
        ]
    )
    stream = agent_loop(
        [UserMessage("go")],
        AgentContext("", [], [echo_tool(run=lambda cid, p: executed.append(p["value"]))]),
        config(model, get_steering_messages=get_steering),
    )
    events = await collect(stream)
    assert executed == []
    ends = [e for e in events if isinstance(e, ToolExecutionEndEvent)]
    assert [(e.tool_call_id, result_text(e.result)) for e in ends] == [
        ("A", "Skipped due to queued user message."),
        ("B", "Skipped due to queued user message."),
    ]
    assert kinds(events).count("tool_execution_start") == 2
    assert steer in faux_calls(model)[1][0].messages
    check_grammar(events)


async def test_parallel_steering_after_the_batch_is_injected_without_skipping() -> None:
    executed: list[str] = []
    steer = UserMessage("also do this")

    def get_steering() -> list[AgentMessage]:
        # Arrives once both tools have run: the phase-4 poll picks it up.
        return [steer] if len(executed) == 2 and steer not in sent else []

    sent: list[AgentMessage] = []

    def run(cid: str, p: Any) -> str:
        executed.append(p["value"])
        return "ok"

    model = faux_model(
        [
            FauxResponse(
                [
                    tool_call("echo", {"value": "a"}, id="A"),
                    tool_call("echo", {"value": "b"}, id="B"),
                ]
            ),
            FauxResponse(["ok"]),
        ]
    )

    def steering() -> list[AgentMessage]:
        out = get_steering()
        sent.extend(out)
        return out

    stream = agent_loop(
        [UserMessage("go")],
        AgentContext("", [], [echo_tool(run=run)]),
        config(model, get_steering_messages=steering),
    )
    events = await collect(stream)
    assert executed == ["a", "b"]
    ends = [e for e in events if isinstance(e, ToolExecutionEndEvent)]
    assert [e.is_error for e in ends] == [False, False]
    assert [m.role for m in faux_calls(model)[1][0].messages] == [
        "user",
        "assistant",
        "toolResult",
        "toolResult",
        "user",
    ]


async def test_steering_while_the_model_answers_in_text_adds_a_turn() -> None:
    steer = UserMessage("one more thing")
    queue = [steer]
    model = faux_model([FauxResponse(["first"]), FauxResponse(["second"])])
    polls: list[int] = []

    def get_steering() -> list[AgentMessage]:
        polls.append(1)
        return [queue.pop()] if len(polls) == 2 and queue else []

    stream = agent_loop(
        [UserMessage("hi")], AgentContext(), config(model, get_steering_messages=get_steering)
    )
    events = await collect(stream)
    assert kinds(events).count("turn_start") == 2
    assert [m.role for m in await stream.result()] == ["user", "assistant", "user", "assistant"]


async def test_initial_steering_is_injected_in_the_first_turn() -> None:
    steer = UserMessage("queued before start")
    queue = [steer]
    model = faux_model([FauxResponse(["ok"])])
    stream = agent_loop(
        [UserMessage("hi")],
        AgentContext(),
        config(model, get_steering_messages=lambda: [queue.pop()] if queue else []),
    )
    events = await collect(stream)
    assert kinds(events)[:7] == [
        "agent_start",
        "turn_start",
        "message_start",
        "message_end",
        "message_start",
        "message_end",
        "message_start",
    ]
    assert [m.role for m in faux_calls(model)[0][0].messages] == ["user", "user"]


async def test_follow_ups_run_only_when_the_agent_would_stop() -> None:
    follow = UserMessage("follow-up")
    queue = [follow]
    order: list[str] = []

    def get_follow_ups() -> list[AgentMessage]:
        order.append("follow_up_poll")
        return [queue.pop()] if queue else []

    def run(cid: str, p: Any) -> str:
        order.append("tool")
        return "ok"

    model = faux_model(
        [
            FauxResponse([tool_call("echo", {"value": "a"}, id="A")]),
            FauxResponse(["answer"]),
            FauxResponse(["answer to follow-up"]),
        ]
    )
    stream = agent_loop(
        [UserMessage("hi")],
        AgentContext("", [], [echo_tool(run=run)]),
        config(model, get_follow_up_messages=get_follow_ups),
    )
    events = await collect(stream)
    assert order == ["tool", "follow_up_poll", "follow_up_poll"]
    messages = await stream.result()
    assert [m.role for m in messages] == [
        "user",
        "assistant",
        "toolResult",
        "assistant",
        "user",
        "assistant",
    ]
    assert kinds(events).count("turn_start") == 3
    check_grammar(events)


async def test_tool_calls_of_a_length_stop_still_run_but_error_stops_the_run() -> None:
    ran: list[str] = []
    model = faux_model(
        [
            FauxResponse(
                [tool_call("echo", {"value": "a"}, id="A")],
                error="upstream exploded",
            ),
        ]
    )
    stream = agent_loop(
        [UserMessage("go")],
        AgentContext("", [], [echo_tool(run=lambda c, p: ran.append("a"))]),
        config(model),
    )
    events = await collect(stream)
    assert ran == []
    assert "tool_execution_start" not in kinds(events)
    turn_end = next(e for e in events if isinstance(e, TurnEndEvent))
    assert turn_end.message.stop_reason == "error" and turn_end.tool_results == []
    assert turn_end.message.error_message == "upstream exploded"
    assert kinds(events)[-2:] == ["turn_end", "agent_end"]

    model = faux_model(
        [
            FauxResponse([tool_call("echo", {"value": "a"}, id="A")], stop_reason="length"),
            FauxResponse(["ok"]),
        ]
    )
    stream = agent_loop(
        [UserMessage("go")],
        AgentContext("", [], [echo_tool(run=lambda c, p: ran.append("a"))]),
        config(model),
    )
    await collect(stream)
    assert ran == ["a"]


async def test_tool_raising_becomes_an_error_result_and_the_run_goes_on() -> None:
    def run(cid: str, p: Any) -> str:
        raise RuntimeError("disk on fire")

    model = faux_model(
        [FauxResponse([tool_call("echo", {"value": "a"}, id="A")]), FauxResponse(["sorry"])]
    )
    stream = agent_loop(
        [UserMessage("go")], AgentContext("", [], [echo_tool(run=run)]), config(model)
    )
    events = await collect(stream)
    end = next(e for e in events if isinstance(e, ToolExecutionEndEvent))
    assert end.is_error and result_text(end.result) == "disk on fire"
    result = faux_calls(model)[1][0].messages[-1]
    assert isinstance(result, ToolResultMessage) and result.is_error
    assert [m.role for m in await stream.result()][-1] == "assistant"


async def test_prepare_arguments_runs_before_validation() -> None:
    import json

    seen: list[Any] = []

    def prepare(raw: dict[str, Any]) -> dict[str, Any]:
        # A model slip: the whole arguments object arrived as a JSON string.
        if isinstance(raw.get("payload"), str):
            return json.loads(raw["payload"])  # type: ignore[no-any-return]
        return raw

    def execute(cid: str, params: Any, signal: Any, on_update: Any) -> str:
        seen.append(params)
        return "ok"

    tool = AgentTool(
        "count",
        "Count",
        {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
        execute=execute,
        prepare_arguments=prepare,
    )
    model = faux_model(
        [
            FauxResponse([tool_call("count", {"payload": '{"n": 3}'}, id="A")]),
            FauxResponse(["ok"]),
        ]
    )
    events = await collect(
        agent_loop([UserMessage("go")], AgentContext("", [], [tool]), config(model))
    )
    assert seen == [{"n": 3}]
    start = next(e for e in events if e.type == "tool_execution_start")
    assert start.args == {"payload": '{"n": 3}'}  # type: ignore[union-attr]  # raw arguments


async def test_late_tool_updates_are_ignored_and_updates_precede_the_end() -> None:
    keep: list[Any] = []

    async def execute(cid: str, params: Any, signal: Any, on_update: Any) -> str:
        for i in range(3):
            on_update(f"step {i}")
            await asyncio.sleep(0)
        keep.append(on_update)
        return "done"

    tool = AgentTool("work", "Work", None, execute=execute)
    model = faux_model([FauxResponse([tool_call("work", {}, id="A")]), FauxResponse(["ok"])])
    seen: list[AgentEvent] = []

    async def slow_sink(event: AgentEvent) -> None:
        if event.type == "tool_execution_update":
            await asyncio.sleep(0.005)  # slower than the tool: updates must still come first
        seen.append(event)
        if event.type == "tool_execution_end":
            keep[0]("too late")

    await run_agent_loop(
        [UserMessage("go")], AgentContext("", [], [tool]), config(model), slow_sink
    )
    types = kinds(seen)
    updates = [e for e in seen if e.type == "tool_execution_update"]
    assert [result_text(e.partial_result) for e in updates] == ["step 0", "step 1", "step 2"]  # type: ignore[union-attr]
    assert types.index("tool_execution_end") > max(
        i for i, t in enumerate(types) if t == "tool_execution_update"
    )


async def test_thread_safe_updates_from_a_threaded_function_tool() -> None:
    from tau.agent import tool_from_function

    def crunch(n: int, on_update: Any) -> str:
        for i in range(n):
            on_update(f"{i}/{n}")
        return "crunched"

    tool = tool_from_function(crunch, threaded=True)
    model = faux_model(
        [FauxResponse([tool_call("crunch", {"n": 3}, id="A")]), FauxResponse(["ok"])]
    )
    events = await collect(
        agent_loop([UserMessage("go")], AgentContext("", [], [tool]), config(model))
    )
    updates = [result_text(e.partial_result) for e in events if e.type == "tool_execution_update"]  # type: ignore[union-attr]
    assert updates == ["0/3", "1/3", "2/3"]
    end = next(e for e in events if isinstance(e, ToolExecutionEndEvent))
    assert result_text(end.result) == "crunched"


async def test_api_key_from_get_api_key_before_every_call_with_fallback() -> None:
    keys = iter(["k1", ""])
    asked: list[str] = []

    def get_api_key(provider: str) -> str:
        asked.append(provider)
        return next(keys)

    model = faux_model(
        [FauxResponse([tool_call("echo", {"value": "a"}, id="A")]), FauxResponse(["ok"])],
        provider="acme",
    )
    await collect(
        agent_loop(
            [UserMessage("go")],
            AgentContext("", [], [echo_tool()]),
            config(model, get_api_key=get_api_key, api_key="static"),
        )
    )
    assert asked == ["acme", "acme"]
    assert [options["api_key"] for _, options in faux_calls(model)] == ["k1", "static"]


async def test_stream_options_reach_the_stream_function() -> None:
    model = faux_model([FauxResponse(["ok"])])
    await collect(
        agent_loop(
            [UserMessage("go")],
            AgentContext("sys"),
            config(
                model,
                reasoning="high",
                thinking_budgets={"high": 999},
                session_id="s-1",
                stream_options={"temperature": 0.3, "max_tokens": 77},
            ),
        )
    )
    context, options = faux_calls(model)[0]
    assert context.system_prompt == "sys"
    assert options["reasoning"] == "high"
    assert options["thinking_budgets"] == {"high": 999}
    assert options["session_id"] == "s-1"
    assert options["temperature"] == 0.3 and options["max_tokens"] == 77
    assert options["signal"] is not None


async def test_async_stream_fn_is_awaited() -> None:
    from tau.ai import stream_simple

    model = faux_model([FauxResponse(["from async"])])

    async def stream_fn(m: Any, context: Any, **options: Any) -> Any:
        await asyncio.sleep(0)
        return stream_simple(m, context, **options)

    stream = agent_loop([UserMessage("x")], AgentContext(), config(model, stream_fn=stream_fn))
    await collect(stream)
    last = (await stream.result())[-1]
    assert isinstance(last, AssistantMessage) and last.text == "from async"


async def test_consumer_leaving_early_cancels_the_run() -> None:
    started = asyncio.Event()
    model = faux_model([])
    stream = agent_loop(
        [UserMessage("x")],
        AgentContext(),
        config(model, stream_fn=_hanging(started)),
    )
    async for event in stream:
        if event.type == "message_update":
            break
    await stream.aclose()
    await asyncio.sleep(0.01)
    assert started.is_set()
    assert stream.done


def _hanging(started: asyncio.Event) -> Any:
    from .helpers import hanging_stream_fn

    return hanging_stream_fn(started)


def test_agent_loop_outside_an_event_loop_gives_a_clear_error() -> None:
    with pytest.raises(RuntimeError, match="running asyncio event loop"):
        agent_loop([UserMessage("x")], AgentContext(), config(faux_model([])))


async def test_result_without_iterating_the_stream() -> None:
    model = faux_model(
        [FauxResponse([tool_call("echo", {"value": "a"}, id="A")]), FauxResponse(["done"])]
    )
    stream = agent_loop([UserMessage("go")], AgentContext("", [], [echo_tool()]), config(model))
    messages = await asyncio.wait_for(stream.result(), 5)
    assert [m.role for m in messages] == ["user", "assistant", "toolResult", "assistant"]
