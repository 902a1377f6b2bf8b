"""Example tools for demos: a weather lookup with made-up data and a calculator.

``get_weather`` never touches the network: it answers from a small fixed table (and a
deterministic made-up reading for other cities), so a demo runs offline and the same way each
time. Enable them with ``--tools weather,calculator``. Their schemas are kept bare (no
per-argument descriptions) because the embedded 135M model answers worse with longer prompts.
"""

from __future__ import annotations

import ast
import operator
import zlib
from collections.abc import Callable
from typing import Any

from tau.agent.tools import AgentTool, tool_from_function

_KNOWN = {
    "paris": ("sunny", 22),
    "london": ("cloudy", 16),
    "new york": ("rainy", 18),
    "tokyo": ("clear", 25),
    "berlin": ("windy", 14),
}
_CONDITIONS = ("sunny", "cloudy", "rainy", "clear", "windy", "foggy")


def get_weather(city: str) -> str:
    """Get the current weather in a city."""
    key = city.strip().lower()
    if not key:
        raise ValueError("city must not be empty")
    if key in _KNOWN:
        condition, celsius = _KNOWN[key]
    else:
        seed = zlib.crc32(key.encode())
        condition, celsius = _CONDITIONS[seed % len(_CONDITIONS)], 5 + seed % 25
    return f"The weather in {city.strip()} is {condition}, {celsius}°C."


_BINARY: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_UNARY: dict[type, Callable[[Any], Any]] = {ast.UAdd: operator.pos, ast.USub: operator.neg}


def _evaluate(node: ast.AST) -> float | int:
    if isinstance(node, ast.Expression):
        return _evaluate(node.body)
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        if isinstance(node.value, bool):
            raise ValueError("only numbers and + - * / // % ** and parentheses are allowed")
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _evaluate(node.left), _evaluate(node.right)
        if isinstance(node.op, ast.Pow) and abs(right) > 1000:
            raise ValueError("exponent too large")
        return _BINARY[type(node.op)](left, right)  # type: ignore[no-any-return]
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_evaluate(node.operand))  # type: ignore[no-any-return]
    raise ValueError("only numbers and + - * / // % ** and parentheses are allowed")


def calculate(expression: str) -> str:
    """Evaluate an arithmetic expression."""
    try:
        tree = ast.parse(expression.strip(), mode="eval")
    except SyntaxError:
        raise ValueError(f"not an arithmetic expression: {expression!r}") from None
    try:
        value = _evaluate(tree)
    except ZeroDivisionError:
        raise ValueError("division by zero") from None
    return f"{expression.strip()} = {value}"


def example_tools() -> dict[str, AgentTool]:
    """The example tools by their ``--tools`` names."""
    return {
        "weather": tool_from_function(get_weather, label="Weather"),
        "calculator": tool_from_function(calculate, label="Calculator"),
    }
