"""tau.agent's public face: what applications call, each name documented; names that left it
keep working for a minor version with a DeprecationWarning that names their new place."""

from __future__ import annotations

import ast
import inspect
import itertools
import sys
import warnings
from pathlib import Path

import pytest

import tau.agent

SRC = Path(__file__).resolve().parents[2] / "src"


def _attribute_docstrings(module_name: str) -> set[str]:
    """Names assigned at a module's top level with a docstring right after them."""
    source = Path(sys.modules[module_name].__file__ or "").read_text(encoding="utf-8")
    body = ast.parse(source).body
    documented: set[str] = set()
    for node, following in itertools.pairwise(body):
        target = None
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            target = node.target.id
        elif isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            target = node.targets[0].id
        if (
            target is not None
            and isinstance(following, ast.Expr)
            and isinstance(following.value, ast.Constant)
            and isinstance(following.value.value, str)
        ):
            documented.add(target)
    return documented


@pytest.mark.parametrize("name", sorted(tau.agent.__all__))
def test_every_public_name_is_documented(name: str) -> None:
    value = getattr(tau.agent, name)
    if inspect.isclass(value) or inspect.isfunction(value):
        assert inspect.getdoc(value), name
        assert value.__module__.startswith("tau.agent"), name
        return
    # A type alias or a constant: a docstring after its assignment, where it is defined.
    homes = [m for m, mod in sys.modules.items() if m.startswith("tau.agent") and mod is not None]
    defining = [m for m in homes if name in vars(sys.modules[m]) and name in _defined_in(m)]
    assert defining, name
    assert any(name in _attribute_docstrings(m) for m in defining), (name, defining)


def _defined_in(module_name: str) -> set[str]:
    source = Path(sys.modules[module_name].__file__ or "").read_text(encoding="utf-8")
    names: set[str] = set()
    for node in ast.parse(source).body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return names


def test_the_face_exports_no_private_name() -> None:
    assert not [name for name in tau.agent.__all__ if name.startswith("_")]


@pytest.mark.parametrize(
    ("module", "name", "home"),
    [
        ("tau.agent", "AGENT_EVENT_TYPES", "tau.agent.events"),
        ("tau.agent", "registered_message_types", "tau.agent.messages"),
        ("tau.agent.loop", "ABORTED_TOOL_MESSAGE", "tau.agent.tool_batch"),
        ("tau.agent.loop", "BLOCKED_MESSAGE", "tau.agent.tool_batch"),
        ("tau.agent.loop", "SKIPPED_MESSAGE", "tau.agent.tool_batch"),
    ],
)
def test_a_name_that_left_keeps_working_with_a_deprecation_warning(
    module: str, name: str, home: str
) -> None:
    namespace: dict[str, object] = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        exec(f"from {module} import {name}", namespace)  # as a user's module would
    assert namespace[name] is getattr(sys.modules[home], name)
    # A package's from-import looks the name up twice: one warning each time, all the same.
    assert caught and {w.category for w in caught} == {DeprecationWarning}
    assert home in str(caught[0].message)
    assert name not in getattr(sys.modules[module], "__all__", ())


def test_an_unknown_name_is_still_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'nothing_here'"):
        _ = tau.agent.nothing_here
