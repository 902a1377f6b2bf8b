""":class:`DurableAgent`: an :class:`~tau.agent.Agent` whose runs are DBOS workflows."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Generic

from dbos import DBOS, SetWorkflowID, WorkflowHandleAsync

from tau.agent import (
    Agent,
    AgentListener,
    AgentMessage,
    Approve,
    Decision,
    Deny,
    RunResult,
    RunState,
    RunUsage,
    ToolResult,
    dump_agent_message,
    load_agent_message,
)
from tau.agent.run_result import OutputT
from tau.agent.run_state import split_decisions
from tau.agent.tools import as_tool_result
from tau.ai import AssistantMessage, TextContent, UserMessage
from tau.ai.adapters import dump_content
from tau.durable.steps import durable_approver, durable_stream_fn, durable_tool

__all__ = ["DurableAgent", "DurableRunError"]

_WAIT_SECONDS = 3600.0
"""How long one durable wait for decisions lasts before it is recorded and renewed."""


_FINISHED = frozenset({"SUCCESS", "ERROR", "CANCELLED", "MAX_RECOVERY_ATTEMPTS_EXCEEDED"})


class DurableRunError(RuntimeError):
    """A durable run cannot do what was asked (not paused, unknown workflow…)."""


class DurableAgent(Generic[OutputT]):
    """Runs ``agent`` as DBOS workflows named ``tau.agent.<name>``; see :mod:`tau.durable`.

    Build it (with an agent built the same way) in every process that may run or recover
    its workflows, before ``DBOS.launch()``. ``name`` must be unique among them.
    """

    def __init__(self, agent: Agent[OutputT], *, name: str) -> None:
        if not name or not isinstance(name, str):
            raise ValueError("DurableAgent needs a name: it names its DBOS workflow")
        self.agent = agent
        self.name = name
        self._listeners: list[AgentListener] = []

        async def workflow(request: str) -> str:
            return await self._run_workflow(request)

        # A plain function (DBOS registers functions, not bound methods), found by its name.
        self._workflow = DBOS.workflow(name=f"tau.agent.{name}")(workflow)

    def subscribe(self, listener: AgentListener) -> Callable[[], None]:
        """Call ``listener`` with every event of the runs this process executes (a replayed
        run's recorded steps are delivered again, each response as one message).
        Returns the unsubscribe function."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    # ----------------------------------------------------------------------- the workflow

    def _durable_run(self) -> Agent[OutputT]:
        run = self.agent.fork()
        run.tool_execution = "sequential"  # steps recorded in one fixed order
        if run.stream_fn is None:
            from tau.ai import stream_simple

            run.stream_fn = stream_simple
        run.stream_fn = durable_stream_fn(run.stream_fn)
        run.set_tools([durable_tool(tool) for tool in run.state.tools])
        if run.approver is not None:
            run.approver = durable_approver(run.approver)
        for listener in self._listeners:
            run.subscribe(listener)
        return run

    async def _run_workflow(self, request: str) -> str:
        data = json.loads(request)
        run = self._durable_run()
        messages = [load_agent_message(m) for m in data["messages"]]
        result = await run.prompt(messages)
        round_ = 0
        while result.state is not None:
            round_ += 1
            await DBOS.set_event_async(f"tau.pause.{round_}", _dump_result(result))
            await DBOS.set_event_async("tau.round", round_)
            message: Any = None
            while message is None:  # each wait is recorded; a replay waits where it was
                message = await DBOS.recv_async(
                    f"tau.decisions.{round_}", timeout_seconds=_WAIT_SECONDS
                )
            await DBOS.set_event_async(f"tau.resumed.{round_}", True)
            result = await run.resume(result.state, _load_decisions(message))
        return _dump_result(result)

    # ----------------------------------------------------------------------- callers

    async def prompt(
        self,
        input: str | AgentMessage | Sequence[AgentMessage],
        *,
        workflow_id: str | None = None,
    ) -> RunResult[OutputT]:
        """Run ``input`` as the workflow ``workflow_id`` (a new id if None) and return its
        result: completed, failed, or paused (then :meth:`resume` it with decisions).

        Starting an id that already ran returns that run's latest result (its end, or the
        pause it waits in) without running it again.
        """
        if isinstance(input, str):
            messages: list[AgentMessage] = [UserMessage([TextContent(input)])]
        elif isinstance(input, list | tuple):
            messages = list(input)
        else:
            messages = [input]  # type: ignore[list-item]
        request = json.dumps({"messages": [dump_agent_message(m) for m in messages]})
        with SetWorkflowID(workflow_id or uuid.uuid4().hex):
            handle = await DBOS.start_workflow_async(self._workflow, request)
        # An id that already ran may have paused and resumed since: its latest outcome.
        return await self.result(handle.workflow_id)

    async def pending_state(self, workflow_id: str) -> RunState | None:
        """The state the run ``workflow_id`` waits in, or None if it is not paused."""
        round_ = await DBOS.get_event_async(workflow_id, "tau.round", timeout_seconds=0)
        if round_ is None:
            return None
        if await DBOS.get_event_async(workflow_id, f"tau.resumed.{round_}", timeout_seconds=0):
            return None
        status = await DBOS.get_workflow_status_async(workflow_id)
        if status is None or status.status in _FINISHED:
            return None
        text = await DBOS.get_event_async(workflow_id, f"tau.pause.{round_}", timeout_seconds=0)
        return RunState.from_json(json.loads(text)["state"]) if text else None

    async def resume(
        self, workflow_id: str, decisions: Mapping[str, Decision]
    ) -> RunResult[OutputT]:
        """Continue the paused run ``workflow_id`` with a decision per pending call, from any
        process running this ``DurableAgent``; returns its next result.

        The decisions are checked first (``ValueError`` naming the call, as
        :meth:`tau.agent.Agent.resume`); :class:`DurableRunError` if the run is not paused.
        """
        state = await self.pending_state(workflow_id)
        round_ = await DBOS.get_event_async(workflow_id, "tau.round", timeout_seconds=0)
        if state is None or round_ is None:
            raise DurableRunError(f"the run {workflow_id!r} is not paused")
        split_decisions(state, decisions, self.agent.state.tools)
        await DBOS.send_async(workflow_id, _dump_decisions(decisions), f"tau.decisions.{round_}")
        return await self._outcome(workflow_id, round_ + 1)

    async def result(self, workflow_id: str) -> RunResult[OutputT]:
        """The result of the run ``workflow_id``: its end, or its latest pause."""
        round_ = await DBOS.get_event_async(workflow_id, "tau.round", timeout_seconds=0)
        if round_ is None:
            return await self._outcome(workflow_id, 1)
        if await DBOS.get_event_async(workflow_id, f"tau.resumed.{round_}", timeout_seconds=0):
            return await self._outcome(workflow_id, round_ + 1)
        return await self._outcome(workflow_id, round_)

    async def _outcome(self, workflow_id: str, round_: int) -> RunResult[OutputT]:
        # The workflow either ends or publishes pause number `round_`: whichever comes first.
        handle: WorkflowHandleAsync[str] = await DBOS.retrieve_workflow_async(workflow_id)
        ended = asyncio.ensure_future(handle.get_result())
        try:
            while True:
                paused = asyncio.ensure_future(
                    DBOS.get_event_async(
                        workflow_id, f"tau.pause.{round_}", timeout_seconds=_WAIT_SECONDS
                    )
                )
                done, _ = await asyncio.wait({ended, paused}, return_when=asyncio.FIRST_COMPLETED)
                if paused in done and paused.result() is not None:
                    return self._load_result(paused.result())
                if ended in done:
                    paused.cancel()
                    return self._load_result(ended.result())
        finally:
            if not ended.done():
                ended.cancel()

    def _load_result(self, text: str) -> RunResult[OutputT]:
        data = json.loads(text)
        messages = [load_agent_message(m) for m in data["messages"]]
        final = next((m for m in reversed(messages) if isinstance(m, AssistantMessage)), None)
        output: Any = None
        if data["hasOutput"]:
            spec = self.agent.output_type
            output = spec.validate_object(data["output"]) if spec is not None else data["output"]
        state = RunState.from_json(data["state"]) if data["state"] is not None else None
        return RunResult(
            messages=messages,
            final_message=final,
            error=data["error"],
            aborted=data["aborted"],
            output=output,
            has_output=data["hasOutput"],
            state=state,
            usage=_load_usage(data["usage"]),
        )


def _dump_result(result: RunResult[Any]) -> str:
    from pydantic_core import to_jsonable_python

    return json.dumps(
        {
            "messages": [dump_agent_message(m) for m in result.messages],
            "error": result.error,
            "aborted": result.aborted,
            "hasOutput": result.has_output,
            "output": to_jsonable_python(result.output, fallback=repr),
            "state": result.state.to_json() if result.state is not None else None,
            "usage": result.usage.dump() if result.usage is not None else None,
        }
    )


def _load_usage(data: Any) -> RunUsage | None:
    return None if data is None else RunUsage.load(data)


def _dump_decisions(decisions: Mapping[str, Decision]) -> str:
    out: dict[str, Any] = {}
    for call_id, decision in decisions.items():
        if isinstance(decision, Approve):
            out[call_id] = {"kind": "approve", "arguments": decision.arguments}
        elif isinstance(decision, Deny):
            out[call_id] = {"kind": "deny", "reason": decision.reason}
        else:
            from pydantic_core import to_jsonable_python

            result = as_tool_result(decision.content)
            details = decision.details if decision.details is not None else result.details
            out[call_id] = {
                "kind": "result",
                "content": [dump_content(block) for block in result.content],
                "isError": decision.is_error,
                "details": to_jsonable_python(details, fallback=repr),
            }
    return json.dumps(out)


def _load_decisions(text: str) -> dict[str, Decision]:
    out: dict[str, Decision] = {}
    for call_id, data in json.loads(text).items():
        kind = data["kind"]
        if kind == "approve":
            out[call_id] = Approve(arguments=data["arguments"])
        elif kind == "deny":
            out[call_id] = Deny(data["reason"])
        else:
            out[call_id] = ToolResult(
                _load_blocks(data["content"]), is_error=data["isError"], details=data["details"]
            )
    return out


def _load_blocks(blocks: list[dict[str, Any]]) -> Any:
    from tau.ai import ToolResultMessage, load_message

    message = load_message(
        {
            "role": "toolResult",
            "toolCallId": "x",
            "toolName": "x",
            "content": blocks,
            "isError": False,
            "timestamp": 0,
        }
    )
    assert isinstance(message, ToolResultMessage)
    return list(message.content)
