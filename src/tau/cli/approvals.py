"""How the ``tau`` command decides tool calls that need approval: the agent's approver.

``write``, ``edit``, ``bash`` and the tools of MCP servers not marked ``trust`` are built with
``requires_approval`` (unless ``--yes``); the :class:`~tau.agent.Agent` of every mode gets an
:class:`Approvals` as its ``approver``, which asks through the front end's :data:`Ask`: the
y/N prompt of the interactive session and of a one-shot run on a terminal, a
``tool_approval_request`` event in ``--mode rpc`` (:mod:`tau.cli.rpc_approvals`). Without a way
to ask (a one-shot run with no terminal) a call is refused, saying ``--yes`` is needed.

An ``Ask`` that answers None leaves the call pending: the run pauses (an RPC client that
closed stdin), and the session records it for ``tau -c`` (:mod:`tau.cli.paused_run`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypeAlias

from tau.agent import Approve, Deny, PendingCall

__all__ = ["Answer", "Approvals", "Ask", "describe_call", "refusal"]

Answer: TypeAlias = Approve | Deny | bool | None
"""True or :class:`Approve` runs the call, False or :class:`Deny` refuses it, None leaves it
pending (the run pauses)."""

Ask: TypeAlias = Callable[[PendingCall, str], Awaitable[Answer]]
"""Asks a person about one call; the second argument is the question (``Allow run `ls`?``)."""


def describe_call(name: str, args: Any) -> str:
    """A one-line description of a tool call for a confirmation question."""
    if name == "bash" and isinstance(args, dict):
        return f"run `{args.get('command')}`"
    if isinstance(args, dict) and "path" in args:
        return f"{name} {args['path']}"
    return name


def refusal(name: str, why: str) -> Deny:
    """The :class:`Deny` the model sees when the user (or the lack of one) refused ``name``:
    ``declined``, ``aborted`` or ``unattended``."""
    reasons = {
        "declined": f"The user declined to run {name}.",
        "aborted": f"The user aborted before {name} ran.",
        "unattended": f"The user has not allowed {name} to run "
        "(tau needs --yes without a terminal).",
    }
    return Deny(reasons[why])


class Approvals:
    """The approver the ``tau`` command gives its agent (see the module docstring).

    ``describe(name, arguments)`` writes a call's subject for the question; ``on_ask`` is told
    of each call before it is asked (the session records it: a process killed at the
    question leaves the call to ``tau -c``). :meth:`cancel` (an abort) ends the questions
    open now: their calls are refused as aborted.
    """

    def __init__(
        self,
        ask: Ask | None,
        describe: Callable[[str, Any], str],
        on_ask: Callable[[PendingCall], None] = lambda call: None,
    ) -> None:
        self.ask = ask
        self.describe = describe
        self.on_ask = on_ask
        self._open: set[asyncio.Future[Answer]] = set()

    def question(self, call: PendingCall) -> str:
        """``Allow write a.txt?``: the question asked about ``call``."""
        return f"Allow {self.describe(call.tool_name, call.arguments)}?"

    async def __call__(self, call: PendingCall) -> Answer:
        """Decide ``call``: ask, and turn the answer into what the run expects."""
        name = call.tool_name
        if self.ask is None:
            return refusal(name, "unattended")
        self.on_ask(call)
        asking = asyncio.ensure_future(self.ask(call, self.question(call)))
        self._open.add(asking)
        try:
            await asyncio.wait({asking})
        finally:
            self._open.discard(asking)
        if asking.cancelled():
            return refusal(name, "aborted")
        answer = asking.result()
        if answer is False:
            return refusal(name, "declined")
        return answer

    def cancel(self) -> None:
        """Refuse the calls being asked about now (as aborted)."""
        for asking in list(self._open):
            asking.cancel()
