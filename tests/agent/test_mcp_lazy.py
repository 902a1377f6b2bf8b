"""The MCP SDK is imported only by ``tau.agent.mcp``: an agent run without MCP never loads it,
and without the extra installed the import says what to install."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"

PROBE = """
import asyncio, json, sys
import tau.ai, tau.agent
from tau.agent import Agent
from tau.ai.providers.faux import FauxResponse, faux_model, text

agent = Agent(model=faux_model([FauxResponse([text("hi")])]), tool_sources=[])
asyncio.run(agent.prompt("hello"))
before = sorted(m for m in sys.modules if m.split(".")[0] in ("mcp", "mcp_types", "tau"))
import tau.agent.mcp
after = sorted(m for m in sys.modules if m.split(".")[0] in ("mcp", "mcp_types"))
print(json.dumps([before, after]))
"""


def _python(code: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60
    )


def test_mcp_is_imported_only_by_tau_agent_mcp() -> None:
    done = _python(PROBE)
    assert done.returncode == 0, done.stderr
    before, after = json.loads(done.stdout)
    assert not [m for m in before if not m.startswith("tau")], before
    assert "tau.agent.mcp" not in before
    assert "mcp" in after  # the probe itself is sound


def test_without_the_extra_the_import_error_says_what_to_install() -> None:
    done = _python("import sys\nsys.modules['mcp'] = None\nimport tau.agent.mcp")
    assert done.returncode == 1
    assert "ImportError: tau.agent.mcp needs the MCP SDK: pip install 'tau[mcp]'" in done.stderr
