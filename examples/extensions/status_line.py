"""A status-line widget: the number of turns and tool calls of this session, after tau's own
status (in RPC mode, `setStatus` requests to the client)."""

from typing import Any

from tau.cli.extensions import ExtensionAPI


def setup(tau: ExtensionAPI) -> None:
    counts = {"turns": 0, "tools": 0}

    def show() -> None:
        tau.set_status("counter", f"turns: {counts['turns']} · tool calls: {counts['tools']}")

    @tau.on("session_start")
    def started(event: Any) -> None:
        show()

    @tau.on("turn_end")
    def turn(event: Any) -> None:
        counts["turns"] += 1
        show()

    @tau.on("tool_execution_end")
    def tool(event: Any) -> None:
        counts["tools"] += 1
        show()
