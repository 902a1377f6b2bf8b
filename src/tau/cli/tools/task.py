"""``--tools task``: the agent hands part of its work to a sub-agent.

The sub-agent is an :class:`~tau.agent.Agent` on the same model (and the same key lookup and
model settings) with the read-only tools (``read``, ``grep``, ``find``, ``ls``) and a system
prompt of its own; ``task`` is its :meth:`~tau.agent.Agent.as_tool`. Each call runs it on the
call's ``task`` text in an empty context: its events reach the parent as the call's
``tool_execution_update`` events, its usage counts in the run's, and its final answer is the
call's result.
"""

from __future__ import annotations

from typing import Any

from tau.agent import Agent, AgentTool
from tau.cli.tools.paths import Workspace

__all__ = ["SUBAGENT_PROMPT", "SUBAGENT_TOOLS", "TASK_DESCRIPTION", "TASK_TOOL", "task_tool"]

TASK_TOOL = "task"
SUBAGENT_TOOLS = ("read", "grep", "find", "ls")
"""The sub-agent's tools: it looks, it changes nothing."""
TASK_DESCRIPTION = (
    "Hand a self-contained task to a sub-agent that can read, search and list files (it changes "
    "nothing) and answers with what it found. Give every detail it needs: it sees nothing else "
    "of this conversation."
)
SUBAGENT_PROMPT = (
    "You are a sub-agent of tau: do the task you are given with your tools, then answer with "
    "what was asked, completely and concisely (your answer is all the caller sees)."
)


def task_tool(settings: Any, convert_to_llm: Any, get_api_key: Any) -> tuple[AgentTool, Agent[Any]]:
    """The ``task`` tool and the sub-agent it runs, with :data:`SUBAGENT_TOOLS`, on the model,
    reasoning level, model settings and fallbacks of ``settings`` (the session's
    :class:`~tau.cli.app.Settings`)."""
    from tau.cli.prompt import build_system_prompt
    from tau.cli.tools import build_tools

    workspace: Workspace = settings.workspace
    tools = build_tools(SUBAGENT_TOOLS, workspace)
    sub: Agent[Any] = Agent(
        name=TASK_TOOL,
        system_prompt=build_system_prompt(tools, workspace.cwd, custom=SUBAGENT_PROMPT),
        model=settings.model,
        thinking_level=settings.thinking,
        tools=tools,
        convert_to_llm=convert_to_llm,
        get_api_key=get_api_key,
        settings=settings.model_settings,
        fallback_models=settings.fallback_models,
    )
    return sub.as_tool(TASK_TOOL, TASK_DESCRIPTION, label=TASK_TOOL), sub
