"""tau.ai's three public faces: what each exports, that every name is documented, and that a
name which left ``tau.ai`` still resolves there with a DeprecationWarning naming its new face."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from functools import cache
from pathlib import Path
from types import ModuleType

import pytest

import tau.ai
import tau.ai.adapters
import tau.ai.oauth
import tau.ai.structured

FACES = (tau.ai, tau.ai.adapters, tau.ai.structured, tau.ai.oauth)
SRC = Path(tau.ai.__file__).resolve().parents[2]


def test_the_user_face_is_curated() -> None:
    assert len(tau.ai.__all__) <= 90
    # What a user calls is there; the plumbing is not.
    for name in ("stream", "complete", "complete_sync", "Context", "get_model", "AbortController"):
        assert name in tau.ai.__all__
    for name in ("MessageBuilder", "launch_http", "run_http_adapter", "structured_request"):
        assert name not in tau.ai.__all__


def test_each_face_exports_each_name_once_and_sorted() -> None:
    for face in FACES:
        assert len(face.__all__) == len(set(face.__all__)), face.__name__
        assert not [name for name in face.__all__ if name.startswith("_")]


@cache
def _tree(module: str) -> ast.Module:
    path = SRC.joinpath(*module.split("."))
    file = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
    return ast.parse(file.read_text(encoding="utf-8"))


def _home(face: ModuleType, name: str) -> str:
    """The module that defines ``face.name``: the face's lazy table, else its own imports."""
    lazy: dict[str, str] = getattr(face, "_LAZY", {})
    if name in lazy:
        return lazy[name]
    for node in _tree(face.__name__).body:
        if isinstance(node, ast.ImportFrom) and any(a.name == name for a in node.names):
            assert node.module is not None
            return node.module
    modules: dict[str, str] = getattr(face, "_LAZY_MODULES", {})
    return modules[name]


def _documented(module: str, name: str) -> bool:
    """Whether ``module`` gives ``name`` a docstring: a def's or class's own, or the string
    right after the assignment of a constant or type alias (followed through re-exports)."""
    if module.endswith(f".{name}"):
        return ast.get_docstring(_tree(module)) is not None
    body = _tree(module).body
    for at, node in enumerate(body):
        defines = isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
        if defines and node.name == name:
            # Of overloads, the implementation (the last one) carries the docstring.
            if not [n for n in body[at + 1 :] if getattr(n, "name", None) == name]:
                return ast.get_docstring(node) is not None
            continue
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AnnAssign):
            targets = [node.target]
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            after = body[at + 1] if at + 1 < len(body) else None
            return (
                isinstance(after, ast.Expr)
                and isinstance(after.value, ast.Constant)
                and isinstance(after.value.value, str)
            )
        if isinstance(node, ast.ImportFrom) and any(a.name == name for a in node.names):
            assert node.module is not None
            return _documented(node.module, name)
    raise AssertionError(f"{name} is not defined in {module}")


@pytest.mark.parametrize("face", FACES, ids=lambda face: face.__name__)
def test_every_public_name_has_a_docstring(face: ModuleType) -> None:
    assert face.__doc__
    missing = [name for name in face.__all__ if not _documented(_home(face, name), name)]
    assert missing == []


def test_a_name_that_moved_warns_and_names_its_new_face() -> None:
    moved: dict[str, str] = tau.ai._MOVED_NAMES
    assert not set(moved) & set(tau.ai.__all__)
    for name, new_place in moved.items():
        with pytest.warns(DeprecationWarning, match=f"tau.ai.{name} is deprecated; .*{new_place}"):
            value = getattr(tau.ai, name)
        assert value is getattr(importlib.import_module(new_place), name)
        if new_place in ("tau.ai.adapters", "tau.ai.structured"):
            assert name in importlib.import_module(new_place).__all__


def test_the_warning_points_at_the_users_line() -> None:
    code = "from tau.ai import MessageBuilder\n"
    result = subprocess.run(
        [sys.executable, "-W", "default", "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stderr.startswith("<string>:1: DeprecationWarning: tau.ai.MessageBuilder")
    assert "import it from tau.ai.adapters" in result.stderr


def test_an_unknown_name_is_still_an_attribute_error() -> None:
    for face in FACES:
        with pytest.raises(AttributeError, match="no attribute 'nope'"):
            _ = face.nope


def test_importing_a_face_loads_nothing_it_does_not_need() -> None:
    code = (
        "import sys, json\n"
        "before = set(sys.modules)\n"
        "import tau.ai.adapters, tau.ai.structured\n"
        "print(json.dumps(sorted(set(sys.modules) - before)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = set(__import__("json").loads(out.stdout))
    # The faces' own modules and what `import tau.ai` loads; no capability, no adapter.
    assert not [m for m in loaded if m.startswith(("tau.ai.capabilities", "tau.ai.providers"))]
    assert "tau.ai.structured.run" not in loaded and "tau.ai.streaming.adapter" not in loaded


def test_tau_ai_never_loads_the_logins_until_a_key_is_looked_for_in_the_store(
    tmp_path: Path,
) -> None:
    code = (
        "import sys, json, asyncio\n"
        "import tau.ai\n"
        "from tau.ai import Context, UserMessage, complete, get_env_api_key, get_model\n"
        "asyncio.run(complete(get_model('faux', 'echo'), Context([UserMessage('x')])))\n"
        "after_call = 'tau.ai.oauth' in sys.modules\n"
        "get_env_api_key('openai')\n"  # set in the environment: the store is not asked
        "after_env_key = 'tau.ai.oauth' in sys.modules\n"
        "print(json.dumps([after_call, after_env_key]))\n"
    )
    env = {"PATH": "/usr/bin:/bin", "TAU_HOME": str(tmp_path), "OPENAI_API_KEY": "sk-env-123456"}
    env["PYTHONPATH"] = str(SRC)
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )
    assert __import__("json").loads(out.stdout) == [False, False]
