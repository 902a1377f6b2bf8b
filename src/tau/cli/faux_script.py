"""``--model faux/<script.json>``: a scripted model, for trying the CLI and testing it without
a key or a model file.

The script is a JSON list of responses, used in order; each is an object with any of
``text``, ``thinking``, ``tool_calls`` (a list of ``{"name", "arguments"}``), ``echo`` (true:
reply with the last user message), ``error`` (end with this error), ``status`` (the error's
HTTP status: 529 plays an overloaded provider, which a fallback model answers), ``stop_reason``
(``stop``, ``length`` or ``toolUse``; the default follows from the content), ``delay`` (seconds
before each delta), ``first_delay`` (seconds before the first) and ``chunk_size`` (characters per
delta).

The whole script is checked when it is loaded: a mistake is reported with the response and
key it is in, before the run starts.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any, get_args

from tau.ai import AssistantContent, Context, Model, StopReason, TextContent, UserMessage, faux

_STRINGS = ("text", "thinking", "error")
_NUMBERS = ("delay", "first_delay")
_STOP_REASONS = tuple(r for r in get_args(StopReason) if r not in ("error", "aborted"))
_KEYS = frozenset(
    {*_STRINGS, *_NUMBERS, "echo", "tool_calls", "chunk_size", "stop_reason", "status"}
)


class FauxScriptError(ValueError):
    """The script file is missing or malformed."""


def _last_user_text(context: Context) -> str:
    for message in reversed(context.messages):
        if isinstance(message, UserMessage):
            content = message.content
            if isinstance(content, str):
                return content
            return "".join(b.text for b in content if isinstance(b, TextContent))
    return ""


def _response(entry: Mapping[str, Any], context: Context) -> faux.FauxResponse:
    content: list[AssistantContent | str] = []
    if entry.get("thinking"):
        content.append(faux.thinking(str(entry["thinking"])))
    if entry.get("echo"):
        content.append(faux.text(_last_user_text(context)))
    if entry.get("text"):
        content.append(faux.text(str(entry["text"])))
    for call in entry.get("tool_calls") or []:
        content.append(faux.tool_call(call["name"], dict(call.get("arguments") or {})))
    return faux.FauxResponse(
        content,
        stop_reason=entry.get("stop_reason"),
        error=entry.get("error"),
        error_status=entry.get("status"),
        delay=float(entry.get("delay", 0.0)),
        first_delay=float(entry.get("first_delay", 0.0)),
        chunk_size=int(entry.get("chunk_size", 4)),
    )


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _problem(entry: Any) -> str | None:
    """What is wrong with one response of a script, or None."""
    if not isinstance(entry, dict):
        return "must be an object"
    for key in entry:
        if key not in _KEYS:
            return f"unknown key {json.dumps(key)} (known: {', '.join(sorted(_KEYS))})"
    for key in _STRINGS:
        if key in entry and not isinstance(entry[key], str):
            return f"{key} must be a string"
    for key in _NUMBERS:
        if key in entry and not (_is_number(entry[key]) and entry[key] >= 0):
            return f"{key} must be a number of seconds (0 or more)"
    size = entry.get("chunk_size", 0)
    if isinstance(size, bool) or not isinstance(size, int) or size < 0:
        return "chunk_size must be a whole number (0 or more)"
    if not isinstance(entry.get("echo", False), bool):
        return "echo must be true or false"
    status = entry.get("status")
    if status is not None and (isinstance(status, bool) or not isinstance(status, int)):
        return "status must be an HTTP status code (a whole number)"
    if "stop_reason" in entry and entry["stop_reason"] not in _STOP_REASONS:
        return f"stop_reason must be one of {', '.join(_STOP_REASONS)} (errors go in error)"
    calls = entry.get("tool_calls", [])
    if not isinstance(calls, list):
        return 'tool_calls must be a list of {"name", "arguments"} objects'
    for number, call in enumerate(calls):
        where = f"tool_calls[{number}]"
        if not isinstance(call, dict):
            return f"{where} must be an object"
        if not isinstance(call.get("name"), str) or not call["name"]:
            return f'{where} needs a "name" (a string)'
        if not isinstance(call.get("arguments", {}), dict):
            return f"{where}.arguments must be an object"
    return None


def scripted_model(path: Path) -> Model:
    """A faux model playing the script in ``path``."""
    try:
        entries = json.loads(path.expanduser().read_text(encoding="utf-8"))
    except OSError as exc:
        raise FauxScriptError(f"cannot read faux script {str(path)!r}: {exc.strerror}") from None
    except ValueError as exc:
        raise FauxScriptError(f"faux script {str(path)!r} is not JSON: {exc}") from None
    except RecursionError:
        raise FauxScriptError(f"faux script {str(path)!r} is nested too deeply") from None
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise FauxScriptError(f"faux script {str(path)!r} must be a JSON list of objects")
    for number, entry in enumerate(entries, 1):
        problem = _problem(entry)
        if problem is not None:
            raise FauxScriptError(f"faux script {str(path)!r}: response {number}: {problem}")
    position = 0

    def next_response(context: Context, options: Mapping[str, Any]) -> faux.FauxResponse:
        nonlocal position
        if position >= len(entries):
            return faux.FauxResponse(error=f"faux script {path.name}: no response left")
        entry = entries[position]
        position += 1
        return _response(entry, context)

    return faux.faux_model(next_response, id=str(path))
