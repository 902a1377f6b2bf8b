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


def _agent_imports() -> dict[str, set[str]]:
    """Each tau.agent module's imports of other tau.agent modules (TYPE_CHECKING included)."""
    import ast

    root = REPO / "src"
    graph: dict[str, set[str]] = {}
    for path in (root / "tau" / "agent").rglob("*.py"):
        parts = path.relative_to(root).with_suffix("").parts
        module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [f"{node.module}.{alias.name}" for alias in node.names]
                targets.update([node.module, *names])
            elif isinstance(node, ast.Import):
                targets.update(alias.name for alias in node.names)
        graph[module] = {t for t in targets if t.startswith("tau.agent")}
    modules = set(graph)
    # "from tau.agent.mcp import server" names a module; "from tau.agent import Agent" does not.
    return {m: {t for t in ts if t in modules and t != m} for m, ts in graph.items()}


def test_tau_agent_modules_import_each_other_without_cycles() -> None:
    graph = _agent_imports()
    # A package's __init__ re-exports its modules: an edge into a package is not a cycle
    # unless the package's own modules lead back out of it, so __init__ files are left out.
    graph = {m: ts for m, ts in graph.items() if not (REPO / "src" / m.replace(".", "/")).is_dir()}
    state: dict[str, int] = {}

    def visit(module: str, path: list[str]) -> None:
        state[module] = 1
        for target in sorted(graph.get(module, ())):
            if state.get(target) == 1:
                raise AssertionError(" -> ".join([*path, module, target]))
            if target not in state:
                visit(target, [*path, module])
        state[module] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [])


def test_tau_agent_never_loads_a_layer_above_it_by_name() -> None:
    # Telemetry plugs in through the observer interface (tau.agent.observe), never by name.
    import re

    pattern = re.compile(
        r"import_module\(|__import__\(|^\s*(from|import) tau\.(telemetry|cli)", re.M
    )
    for path in (REPO / "src" / "tau" / "agent").rglob("*.py"):
        assert not pattern.search(path.read_text(encoding="utf-8")), path
