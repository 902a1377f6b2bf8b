"""Ask before the model runs `rm -rf` (or `rm -fr`, `rm -r -f`) through bash.

In the terminal the question waits at the prompt; in RPC mode the client gets a `confirm`
request; in print mode nobody can answer, so the command is blocked.
"""

import re

from tau.cli.extensions import Block, ExtensionAPI, ToolCallEvent

DANGEROUS = re.compile(r"\brm\s+(-[a-zA-Z]*r[a-zA-Z]*f|-[a-zA-Z]*f[a-zA-Z]*r|-r\s+-f|-f\s+-r)\b")


def setup(tau: ExtensionAPI) -> None:
    @tau.on("tool_call")
    async def gate(event: ToolCallEvent) -> Block | None:
        if event.tool_name != "bash":
            return None
        command = str(event.input.get("command", ""))
        if not DANGEROUS.search(command):
            return None
        if await tau.confirm("Dangerous command", f"Allow `{command}`?", default=False):
            return None
        tau.notify(f"blocked: {command}", "warning")
        return Block(f"The user did not allow `{command}`.")
