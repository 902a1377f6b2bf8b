"""Sub-agents: ``agent.as_tool(name, description)`` runs an agent as another agent's tool.

::

    researcher = Agent(model=model, system_prompt="Find facts.", tools=[search])
    lead = Agent(model=model, tools=[researcher.as_tool("research", "Research a question")])

Each call runs a :meth:`~tau.agent.Agent.fork` of the agent (its own, empty context) on the
call's ``task``. While it runs:

* its events reach the parent as ``tool_execution_update`` events of the call, whose partial
  result is the sub-agent's text so far and whose ``details`` are
  ``{"agent": <tool name>, "event": <the event's JSON, compact>}``;
* its usage counts in the parent run's :class:`~tau.agent.RunUsage` as it happens, and the
  parent's :class:`~tau.agent.UsageLimits` bound it (the sub-agent's own limits apply when the
  parent has none);
* aborting the parent aborts it; without an approver of its own it uses the parent's;
* its typed output is the tool's result (as JSON, and as the result's details), else its
  final text; a failed sub-run is an error result saying why;
* if it pauses (a call waiting for approval, an external tool), the parent pauses too: the
  sub-agent's pending calls appear in the parent's ``pending`` (their ``path`` names the
  sub-agent call) and one ``agent.resume(state, decisions)`` continues both.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Protocol, TypedDict

from pydantic import BaseModel

from tau.agent.approval import ApprovalRequirement, Decision, current_approver
from tau.agent.approval_gate import ResumableTool
from tau.agent.events import AgentEvent, dump_event
from tau.agent.pausing import resume_agent
from tau.agent.run_result import RunResult
from tau.agent.run_state import RunState, ToolPaused, plan_resume
from tau.agent.state import AgentState
from tau.agent.tools import AgentTool, AgentToolResult, ToolUpdateCallback
from tau.agent.usage import UsageLimits, current_guard
from tau.ai import AbortSignal, AssistantMessage, TextContent, UserMessage


class ForkableAgent(Protocol):
    """What a sub-agent tool needs of its agent (a :class:`~tau.agent.Agent`)."""

    usage_limits: UsageLimits | None

    @property
    def state(self) -> AgentState: ...

    def fork(self) -> Any: ...


__all__ = ["TASK_PARAMETERS", "SubAgentOptions", "SubAgentTool"]

TASK_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "task": {
            "type": "string",
            "description": "The task for the sub-agent, with every detail it needs: it sees "
            "nothing else of this conversation.",
        }
    },
    "required": ["task"],
}
"""The default parameters of a sub-agent tool: one ``task`` string."""


class SubAgentOptions(TypedDict, total=False):
    """What ``agent.as_tool(name, description, ...)`` takes besides the name and description."""

    parameters: dict[str, Any] | type[BaseModel] | None
    """The tool's parameters (default: one ``task`` string); give ``prompt`` with them."""
    prompt: Callable[[Any], str] | None
    """Validated arguments -> the sub-agent's prompt."""
    requires_approval: ApprovalRequirement
    label: str | None


def _task(args: Any) -> str:
    if isinstance(args, Mapping):
        return str(args["task"])
    return str(args.task)


class SubAgentTool(AgentTool, ResumableTool):
    """A tool running ``agent`` (a fork of it per call); see the module docstring.

    ``parameters`` and ``prompt`` (validated arguments -> prompt text) replace the default
    ``task`` argument.
    """

    __slots__ = ("agent", "make_prompt")

    def __init__(
        self,
        agent: ForkableAgent,
        name: str,
        description: str,
        *,
        parameters: dict[str, Any] | type[BaseModel] | None = None,
        prompt: Callable[[Any], str] | None = None,
        requires_approval: ApprovalRequirement = False,
        label: str | None = None,
    ) -> None:
        if parameters is not None and prompt is None:
            raise TypeError(f"sub-agent tool {name!r}: custom parameters need a prompt function")
        super().__init__(
            name,
            description,
            parameters if parameters is not None else TASK_PARAMETERS,
            label=label,
            requires_approval=requires_approval,
            threaded=False,
        )
        self.agent = agent
        self.make_prompt: Callable[[Any], str] = prompt or _task

    async def execute(
        self,
        tool_call_id: str,
        params: Any,
        signal: AbortSignal,
        on_update: ToolUpdateCallback,
    ) -> Any:
        """Run a fork of the agent on the call's prompt."""
        text = self.make_prompt(params)
        message = UserMessage([TextContent(text)])
        return await self._drive(lambda run: run._run([message]), signal, on_update)

    def resumed(self, state: RunState, decisions: Mapping[str, Decision]) -> AgentTool:
        """A tool whose execution resumes the sub-agent's paused ``state``."""
        # Checked now, before anything runs: the parent's resume() raises for a bad decision.
        plan_resume(state, decisions, self.agent.state.tools)

        async def resume(call_id: str, params: Any, signal: AbortSignal, on_update: Any) -> Any:
            return await self._drive(
                lambda run: resume_agent(run, state, decisions, keep_usage=True), signal, on_update
            )

        return AgentTool(self.name, self.description, self.parameters, execute=resume)

    async def _drive(
        self,
        start: Callable[[Any], Awaitable[RunResult[Any]]],
        signal: AbortSignal,
        on_update: ToolUpdateCallback,
    ) -> Any:
        run = self.agent.fork()
        if run.approver is None:  # the parent's live approver decides for it too
            run.approver = current_approver.get()
        guard = current_guard.get()
        if guard is not None:
            # One budget: the sub-run adds to the parent's totals, under the parent's limits.
            run.state.usage = guard.usage
            if guard.limits is not None:
                run.usage_limits = guard.limits
        name = self.name
        text = ""

        def forward(event: AgentEvent) -> None:
            nonlocal text
            if event.type == "message_update" and isinstance(event.message, AssistantMessage):
                text = event.message.text
            on_update(
                AgentToolResult(
                    [TextContent(text)] if text else [],
                    {"agent": name, "event": dump_event(event, compact=True)},
                )
            )

        run.subscribe(forward)
        remove = signal.add_callback(lambda: run.abort(signal.reason))
        try:
            result = await start(run)
        finally:
            remove()
        if result.state is not None:
            raise ToolPaused(result.state)
        if result.error is not None:
            raise RuntimeError(f"sub-agent {name} failed: {result.error}")
        if result.has_output:
            return result.output
        return result.text
