"""An app whose agent pauses for approval, run as a script by the approval tests.

``python approval_app.py pause`` prompts the agent and prints the paused state's JSON;
``python approval_app.py resume`` reads ``{"state": <text>, "decisions": {...}}`` on stdin,
resumes with an agent built the same way, and prints what the run produced. The model is a
faux one answering from the request alone, so both processes see the same model.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Mapping
from typing import Any

from tau.agent import (
    Agent,
    AgentTool,
    Approve,
    Decision,
    Deny,
    RunState,
    ToolResult,
    agent_tool,
)
from tau.ai import Context, TextContent, ToolResultMessage
from tau.ai.providers.faux import FauxResponse, faux_model, text, tool_call

EXECUTED: list[str] = []


def reply(context: Context, options: Mapping[str, Any]) -> FauxResponse:
    """Call three tools for a prompt; report the tool results it was sent, once it has them."""
    last = context.messages[-1]
    if isinstance(last, ToolResultMessage):
        results = [m for m in context.messages if isinstance(m, ToolResultMessage)]
        lines = [
            f"{m.tool_name}={'error:' if m.is_error else ''}"
            + "".join(b.text for b in m.content if isinstance(b, TextContent))
            for m in results
        ]
        return FauxResponse([text("; ".join(lines))])
    return FauxResponse(
        [
            tool_call("note", {"text": "hello"}, id="call_note"),
            tool_call("delete", {"path": "build"}, id="call_delete"),
            tool_call("lookup", {"query": "weather"}, id="call_lookup"),
        ]
    )


def build_agent() -> Agent:
    @agent_tool
    def note(text: str) -> str:
        """Write a note."""
        EXECUTED.append(f"note:{text}")
        return f"noted {text}"

    @agent_tool(requires_approval=True)
    def delete(path: str) -> str:
        """Delete a folder."""
        EXECUTED.append(f"delete:{path}")
        return f"deleted {path}"

    lookup = AgentTool(
        "lookup",
        "Look something up in the browser.",
        {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
        external=True,
    )
    return Agent(model=faux_model(reply), tools=[note, delete, lookup])


def parse_decision(data: dict[str, Any]) -> Decision:
    kind = data["kind"]
    if kind == "approve":
        return Approve(arguments=data.get("arguments"))
    if kind == "deny":
        return Deny(data["reason"])
    return ToolResult(data["content"], is_error=data.get("isError", False))


async def main(command: str) -> None:
    agent = build_agent()
    if command == "pause":
        result = await agent.prompt("Clean up and look up the weather")
        assert result.state is not None
        print(result.state.to_json())
        return
    request = json.loads(sys.stdin.read())
    state = RunState.from_json(request["state"])
    decisions = {key: parse_decision(value) for key, value in request["decisions"].items()}
    result = await agent.resume(state, decisions)
    print(json.dumps({"status": result.status, "text": result.text, "executed": EXECUTED}))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
