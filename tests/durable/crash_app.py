"""A durable agent run in a child process, which SIGKILLs itself at a named point.

``python crash_app.py <config.json>``; the config names the DBOS system database, the fake
LLM's URL, the workflow id, whether to start the run or only recover it, the kill point
(None: run to the end), the executor id, optionally the application version, and a folder for
the logs:

* ``points.log`` — every point the run passed, in order (a run without a kill lists them
  all: the test picks its kill points from it);
* ``executions.log`` — ``done <call id>`` when a tool finished its work, ``start <call id>``
  when it began, ``asked <call id>`` when the approver (``"approver": true``) was asked;
* ``result.json`` — the run's result, when it ended.

Points: ``model:<n>`` before a model request is sent (``n``: tool results so far),
``assistant:<i>`` after the i-th assistant message was recorded, ``tool_start:<id>`` when a
call is announced, ``tool_inside:<id>`` half-way through a tool's work, ``tool_end:<id>``
after its result was recorded.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

from dbos import DBOS

from tau.agent import Agent, AgentEvent, Approve, PendingCall, agent_tool, dump_agent_message
from tau.ai import Model, ToolResultMessage, stream_simple
from tau.durable import DurableAgent, DurableRunError

PROMPT = "Read the notes, tell ops, then read one more."


def main(config: dict[str, Any]) -> None:
    logs = Path(config["logs"])
    kill_at: str | None = config.get("kill_at")
    points = (logs / "points.log").open("a", buffering=1)
    executions = (logs / "executions.log").open("a", buffering=1)

    def point(name: str) -> None:
        points.write(name + "\n")
        if name == kill_at:
            os.kill(os.getpid(), signal.SIGKILL)

    @agent_tool
    def read_note(name: str, tool_call_id: str) -> str:
        """Read a note."""
        executions.write(f"start {tool_call_id}\n")
        time.sleep(0.01)
        point(f"tool_inside:{tool_call_id}")
        executions.write(f"done {tool_call_id}\n")
        return f"note {name}"

    @agent_tool(idempotent=False, requires_approval=bool(config.get("approval")))
    def send_email(to: str, tool_call_id: str) -> str:
        """Send an email (not idempotent: never twice)."""
        executions.write(f"start {tool_call_id}\n")
        point(f"tool_inside:{tool_call_id}")
        executions.write(f"done {tool_call_id}\n")
        return f"sent to {to}"

    def counted_stream(model: Model, context: Any, **options: Any) -> Any:
        results = sum(1 for m in context.messages if isinstance(m, ToolResultMessage))
        point(f"model:{results}")
        return stream_simple(model, context, **options)

    assistants = 0

    def on_event(event: AgentEvent) -> None:
        nonlocal assistants
        if event.type == "message_end" and getattr(event.message, "role", "") == "assistant":
            assistants += 1
            point(f"assistant:{assistants}")
        elif event.type == "tool_execution_start":
            point(f"tool_start:{event.tool_call_id}")
        elif event.type == "tool_execution_end":
            point(f"tool_end:{event.tool_call_id}")

    model = Model(
        id="gpt-x",
        name="gpt-x",
        api="openai-completions",
        provider="fake",
        base_url=config["llm"] + "/v1",
        max_tokens=1024,
    )

    def approver(call: PendingCall) -> Approve:
        executions.write(f"asked {call.id}\n")
        return Approve()

    agent = Agent(
        model=model,
        tools=[read_note, send_email],
        stream_fn=counted_stream,
        get_api_key=lambda provider: "test-key",
        approver=approver if config.get("approver") else None,
    )
    durable = DurableAgent(agent, name="crash")
    durable.subscribe(on_event)
    DBOS(
        config={
            "name": "tau-crash-test",
            "system_database_url": config["database"],
            "application_version": config.get("version", "crash-test-1"),
            "executor_id": config.get("executor", "local"),
            "log_level": "WARNING",
        }
    )
    DBOS.launch()
    try:
        result = asyncio.run(run(durable, config))
        (logs / "result.json").write_text(json.dumps(result))
    finally:
        DBOS.destroy(workflow_completion_timeout_sec=0)


async def run(durable: DurableAgent, config: dict[str, Any]) -> dict[str, Any]:
    workflow = config["workflow"]
    refusals: list[str] = []
    if config["mode"] == "start":
        result = await durable.prompt(f"{PROMPT} [{workflow}]", workflow_id=workflow)
    elif config["mode"] == "approve":
        # The run may still be recovering towards its pause: wait for it.
        paused = await durable.result(workflow)
        assert paused.status == "paused", paused.status
        try:  # a missing decision is refused before anything is sent
            await durable.resume(workflow, {})
        except ValueError as exc:
            refusals.append(str(exc))
        result = await durable.resume(workflow, {c.id: Approve() for c in paused.pending})
        try:  # and a run that is not paused cannot be resumed
            await durable.resume(workflow, {c.id: Approve() for c in paused.pending})
        except DurableRunError as exc:
            refusals.append(str(exc))
    else:  # recover: DBOS.launch() resumed the workflow; wait for it
        result = await durable.result(workflow)
    usage = result.usage.dump() if result.usage is not None else None
    return {
        "status": result.status,
        "messages": [dump_agent_message(m) for m in result.messages],
        "usage": usage,
        "pending": [c.id for c in result.pending],
        "refusals": refusals,
    }


if __name__ == "__main__":
    main(json.loads(Path(sys.argv[1]).read_text()))
