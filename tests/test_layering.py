"""The layers import each other only through their public faces.

``tau.ai`` is the bottom: it imports no other tau package. ``tau.agent``, ``tau.proxy`` and
``tau.telemetry`` import from ``tau.ai`` only ``from tau.ai import X`` with ``X`` in
``tau.ai.__all__``; ``tau.batch`` and ``tau.cli`` do the same, and reach ``tau.agent`` only
through ``from tau.agent import X`` (``tau.cli`` also through the public subpackage
``tau.agent.mcp``, and ``tau.batch`` through ``from tau.batch import X``). So everything the
upper layers need is public, and documented in the README.
"""

from __future__ import annotations

import ast
import importlib
from collections.abc import Iterator
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "tau"

# package -> the tau packages it may import, each only through the listed public modules
ALLOWED: dict[str, dict[str, tuple[str, ...]]] = {
    "ai": {},
    "agent": {"ai": ("tau.ai",)},
    "proxy": {"ai": ("tau.ai",)},
    "telemetry": {"ai": ("tau.ai",), "agent": ("tau.agent",)},
    "batch": {"ai": ("tau.ai",), "agent": ("tau.agent",)},
    "cli": {
        "ai": ("tau.ai",),
        "agent": ("tau.agent", "tau.agent.mcp"),
        "batch": ("tau.batch",),
    },
}


def _imports(path: Path) -> Iterator[tuple[int, str, list[str]]]:
    """``(line, module, names)`` of every tau import in ``path`` (``names`` empty for a plain
    ``import tau.x``)."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module == "tau" or node.module.startswith("tau."):
                yield node.lineno, node.module, [alias.name for alias in node.names]
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("tau."):
                    yield node.lineno, alias.name, []


def _violations(package: str, root: Path = SRC) -> list[str]:
    found: list[str] = []
    for path in sorted((root / package).rglob("*.py")):
        where = path.relative_to(root.parent)
        for line, module, names in _imports(path):
            target = module.split(".")[1] if "." in module else ""
            if target == package or not target:
                continue
            public = ALLOWED[package].get(target)
            if public is None:
                found.append(f"{where}:{line}: {package} may not import {module}")
            elif module not in public:
                found.append(f"{where}:{line}: {module} is private; import from {public[0]}")
            elif not names:
                found.append(f"{where}:{line}: 'import {module}': use 'from {module} import …'")
            else:
                exported = set(importlib.import_module(module).__all__)
                hidden = [name for name in names if name not in exported]
                if hidden:
                    found.append(f"{where}:{line}: {module} does not export {hidden}")
    return found


@pytest.mark.parametrize("package", sorted(ALLOWED))
def test_each_layer_imports_only_the_public_names_below_it(package: str) -> None:
    if not (SRC / package).is_dir():
        pytest.skip(f"no tau.{package}")
    assert _violations(package) == []


def test_the_rule_catches_a_private_import(tmp_path: Path) -> None:
    # The checker itself: a private module, a hidden name and a forbidden layer are all found.
    (tmp_path / "tau" / "cli").mkdir(parents=True)
    module = tmp_path / "tau" / "cli" / "probe.py"
    module.write_text(
        "from tau.ai.streaming.builder import MessageBuilder\n"
        "from tau.ai import _LAZY\n"
        "from tau.agent.loop import run_agent_loop\n"
        "import tau.ai.streaming.http\n",
        encoding="utf-8",
    )
    problems = _violations("cli", tmp_path / "tau")
    assert len(problems) == 4, problems


def test_every_public_name_resolves() -> None:
    for module in ("tau.ai", "tau.agent", "tau.proxy", "tau.batch"):
        imported = importlib.import_module(module)
        for name in imported.__all__:
            assert getattr(imported, name) is not None, (module, name)
