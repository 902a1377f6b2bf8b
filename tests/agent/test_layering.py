"""tau.agent builds on tau.ai only, and importing it loads no server, HTTP or schema library."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_import_tau_agent_loads_only_what_it_needs() -> None:
    code = (
        "import sys, tau.agent\n"
        "bad = [m for m in sys.modules if m.split('.')[0] in "
        "('starlette', 'uvicorn', 'httpx2', 'jsonschema_rs') or m.startswith('tau.cli')]\n"
        "print(sorted(bad))"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_tau_agent_sources_never_import_tau_cli() -> None:
    for path in (REPO / "src" / "tau" / "agent").glob("*.py"):
        text = path.read_text(encoding="utf-8")
        assert "tau.cli" not in text, path
