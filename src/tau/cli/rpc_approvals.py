"""``tau --mode rpc``: the client decides the tool calls that need approval.

A call that needs approval (``write``, ``edit``, ``bash``, an untrusted MCP server's tool;
none with ``--yes``) is announced by an event, and waits::

    {"type": "tool_approval_request", "toolCallId": "call_1", "toolName": "bash",
     "arguments": {"command": "rm -r build"}, "question": "Allow run `rm -r build`?"}

The client answers with one of two commands, naming the call (see :mod:`tau.cli.rpc`)::

    {"id": 7, "type": "approve", "toolCallId": "call_1"}
    {"id": 7, "type": "approve", "toolCallId": "call_1", "arguments": {"command": "rm -r out"}}
    {"id": 8, "type": "deny", "toolCallId": "call_1", "reason": "not that folder"}

``arguments`` replaces the model's (checked against the tool's schema first: invalid ones are
refused and the call keeps waiting); ``reason`` is what the model reads (default: the user
denied the call). Each is answered with ``{"toolCallId", "decision": "approve" | "deny"}``;
an id that is not waiting, or a decision when nothing waits, is an error response, and the
process goes on. An ``abort`` refuses the calls waiting (as aborted). When stdin closes with
calls still waiting, they stay undecided: the run pauses, and the session keeps it for
``tau -c`` (:mod:`tau.cli.paused_run`), which asks again with the same events.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from tau.agent import Approve, Deny, PendingCall
from tau.ai import ToolCall, validate_tool_arguments
from tau.cli.approvals import Answer
from tau.cli.registry import RPC_COMMANDS, Arg

__all__ = ["APPROVAL_REQUEST", "RpcApprovals"]

APPROVAL_REQUEST = "tool_approval_request"
"""The ``type`` of the event that asks the client about a call."""


class RpcApprovals:
    """The calls waiting for the client's decision, by call id; :meth:`ask` is the App's
    :data:`~tau.cli.approvals.Ask`."""

    def __init__(self, write: Callable[[dict[str, Any]], None]) -> None:
        self.write = write
        self.waiting: dict[str, tuple[PendingCall, asyncio.Future[Answer]]] = {}
        self.closed = False

    async def ask(self, call: PendingCall, question: str) -> Answer:
        """Announce ``call`` and wait for the client's ``approve`` or ``deny``."""
        if self.closed:
            return None  # nobody is left to answer: the run pauses
        future: asyncio.Future[Answer] = asyncio.get_running_loop().create_future()
        self.waiting[call.id] = (call, future)
        self.write(
            {
                "type": APPROVAL_REQUEST,
                "toolCallId": call.id,
                "toolName": call.tool_name,
                "arguments": call.arguments,
                "question": question,
            }
        )
        try:
            return await future
        finally:
            self.waiting.pop(call.id, None)

    def decide(self, call_id: str, answer: Approve | Deny) -> None:
        """Answer the waiting call ``call_id`` (a ``ValueError`` if none waits under it)."""
        entry = self.waiting.get(call_id)
        if entry is None or entry[1].done():
            waiting = ", ".join(repr(key) for key in self.waiting)
            where = f"waiting: {waiting}" if waiting else "no call is waiting"
            raise ValueError(f"tool call {call_id!r} is not waiting for approval ({where})")
        entry[1].set_result(answer)

    def close(self) -> None:
        """stdin closed: leave every waiting call undecided (the run pauses)."""
        self.closed = True
        for _, future in self.waiting.values():
            if not future.done():
                future.set_result(None)


def _call_id(command: dict[str, Any]) -> str:
    value: str = command["toolCallId"]
    return value


@RPC_COMMANDS.command(
    "approve",
    "run a tool call waiting for approval (arguments: edited ones instead of the model's)",
    args=[
        Arg("toolCallId", "the call, as the tool_approval_request named it", required=True),
        Arg(
            "arguments",
            "the call's arguments, edited (checked against its schema)",
            json_type="object",
        ),
    ],
)
async def _approve(server: Any, command: dict[str, Any]) -> dict[str, Any]:
    approvals: RpcApprovals = server.approvals
    call_id = _call_id(command)
    arguments = command.get("arguments")
    entry = approvals.waiting.get(call_id)
    if arguments is not None and entry is not None:
        name = entry[0].tool_name
        tool = next((t for t in server.app.agent.state.tools if t.name == name), None)
        if tool is not None:
            try:
                validate_tool_arguments(tool, ToolCall(call_id, name, dict(arguments)))
            except Exception as exc:
                # One line: the problems, without the arguments the client just sent.
                problems = [line.strip(" -") for line in str(exc).split("\n\n")[0].splitlines()]
                raise ValueError(
                    f"the edited arguments for {call_id!r} are invalid: {'; '.join(problems)}"
                ) from None
    approvals.decide(call_id, Approve(arguments=arguments))
    return {"toolCallId": call_id, "decision": "approve"}


@RPC_COMMANDS.command(
    "deny",
    "refuse a tool call waiting for approval (the model reads the reason)",
    args=[
        Arg("toolCallId", "the call, as the tool_approval_request named it", required=True),
        Arg("reason", "why (what the model reads)"),
    ],
)
async def _deny(server: Any, command: dict[str, Any]) -> dict[str, Any]:
    call_id = _call_id(command)
    reason = command.get("reason")
    decision = Deny(reason) if reason and reason.strip() else Deny()
    server.approvals.decide(call_id, decision)
    return {"toolCallId": call_id, "decision": "deny"}
