"""tau.durable: agent runs that survive a crash, on DBOS (``pip install 'tau[durable]'``).

::

    from dbos import DBOS
    from tau.durable import DurableAgent

    durable = DurableAgent(agent, name="support")        # before DBOS.launch()
    DBOS(config={"name": "support", "system_database_url": "sqlite:///runs.sqlite"})
    DBOS.launch()                                          # recovers runs a crash interrupted
    result = await durable.prompt("Fix the failing test", workflow_id="ticket-42")

Each ``prompt`` is a DBOS workflow; each model call and each tool execution is a step whose
result is recorded in DBOS's system database (SQLite by default: a file, no server;
PostgreSQL to scale out). Kill the process at any point and start it again: DBOS recovery
runs the workflow again, and every recorded step returns its recorded result instead of
running, so a model call that completed is not sent again, a tool that completed is not run
again, and the transcript and usage come out as in an uninterrupted run.

A tool that was *running* when the process died is run again on recovery, unless it is marked
``AgentTool(..., idempotent=False)``: such a call ends in an error result saying it was
interrupted, and is never run twice.

A run that pauses (a tool call waiting for approval, an external tool: see
:mod:`tau.agent.approval`) waits durably: ``prompt()`` returns the paused result, and
``await durable.resume(workflow_id, decisions)``, from this process or any other one running
the same ``DurableAgent``, continues it.

A live approver (``Agent(approver=...)``) is asked once per call: its answer is a recorded
step too, so a recovered run does not ask again.

A durable run executes each turn's tool calls one after another, so that its steps are
recorded in a fixed order; sub-agent tools (``agent.as_tool``) run inside their parent's tool
step (their own calls are not separate steps, and their pause is not durable).
"""

from tau.durable.agent import DurableAgent, DurableRunError

__all__ = ["DurableAgent", "DurableRunError"]
