"""Example tools for demos: a weather lookup with made-up data and a calculator.

``get_weather`` never touches the network: it answers from a small fixed table (and a
deterministic made-up reading for other cities), so a demo runs offline and the same way each
time. Enable them with ``--tools weather,calculator``. Their schemas are kept bare (no
per-argument descriptions) because the embedded 135M model answers worse with longer prompts.
"""

from __future__ import annotations

import ast
import math
import operator
import time
import zlib
from collections.abc import Callable
from typing import Any

from tau.agent import AgentTool, tool_from_function

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


_BINARY: dict[type, Callable[[Any, Any], float | int]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_UNARY: dict[type, Callable[[Any], Any]] = {ast.UAdd: operator.pos, ast.USub: operator.neg}
_ONLY = "only numbers and + - * / // % ** and parentheses are allowed"

# Bounds that keep every step small, so that no expression can take long or use much memory
# (`((10**1000)**1000)**1000` would otherwise compute for hours): a result has at most about
# 1,000 digits, is checked before it is computed, and the whole evaluation has a deadline.
MAX_EXPRESSION = 1000
"""Characters in an expression."""
MAX_RESULT_BITS = 3400
"""An integer result of more bits (about 1,000 decimal digits) is refused."""
MAX_EXPONENT = 10_000
MAX_SECONDS = 1.0


def _too_large() -> ValueError:
    return ValueError("result too large (more than about 1,000 digits)")


def _checked_power(base: float | int, exponent: float | int) -> float | int:
    if abs(exponent) > MAX_EXPONENT:
        raise ValueError(f"exponent too large (at most {MAX_EXPONENT:,})")
    # |base| ** exponent has at least (bit_length - 1) * exponent bits: refuse before computing.
    if (
        isinstance(base, int)
        and isinstance(exponent, int)
        and (abs(base).bit_length() - 1) * exponent >= MAX_RESULT_BITS
    ):
        raise _too_large()
    return base**exponent


def _checked(op: ast.operator, left: float | int, right: float | int) -> float | int:
    if isinstance(op, ast.Pow):
        return _checked_power(left, right)
    # A product has at least bit_length(a) + bit_length(b) - 1 bits.
    if (
        isinstance(op, ast.Mult)
        and isinstance(left, int)
        and isinstance(right, int)
        and abs(left).bit_length() + abs(right).bit_length() > MAX_RESULT_BITS + 1
    ):
        raise _too_large()
    return _BINARY[type(op)](left, right)


class _Evaluator:
    def __init__(self) -> None:
        self.deadline = time.monotonic() + MAX_SECONDS

    def value(self, node: ast.AST) -> float | int:
        if time.monotonic() > self.deadline:
            raise ValueError(f"took longer than {MAX_SECONDS:g} s")
        if isinstance(node, ast.Expression):
            return self.value(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
            if isinstance(node.value, bool):
                raise ValueError(_ONLY)
            return node.value
        if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
            left, right = self.value(node.left), self.value(node.right)
            result = _checked(node.op, left, right)
        elif isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
            result = _UNARY[type(node.op)](self.value(node.operand))
        else:
            raise ValueError(_ONLY)
        if isinstance(result, int) and result.bit_length() > MAX_RESULT_BITS:
            raise _too_large()
        if isinstance(result, complex):
            raise ValueError("result is not a real number")
        if isinstance(result, float) and not math.isfinite(result):
            raise ValueError("result out of range")
        return result


def calculate(expression: str) -> str:
    """Evaluate an arithmetic expression."""
    text = expression.strip()
    if len(text) > MAX_EXPRESSION:
        raise ValueError(f"expression too long (at most {MAX_EXPRESSION:,} characters)")
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as exc:
        if "too many nested" in str(exc):
            raise ValueError("expression nested too deeply") from None
        raise ValueError(f"not an arithmetic expression: {expression!r}") from None
    except (RecursionError, MemoryError):
        raise ValueError("expression nested too deeply") from None
    try:
        value = _Evaluator().value(tree)
    except ZeroDivisionError:
        raise ValueError("division by zero") from None
    except OverflowError:
        raise ValueError("result out of range") from None
    except RecursionError:
        raise ValueError("expression nested too deeply") from None
    return f"{text} = {value}"


def example_tools() -> dict[str, AgentTool]:
    """The example tools by their ``--tools`` names."""
    return {
        "weather": tool_from_function(get_weather, label="Weather"),
        "calculator": tool_from_function(calculate, label="Calculator"),
    }
