"""``--model faux/<script.json>``: a scripted model, for trying the CLI and testing it without
a key or a model file.

The script is a JSON list of responses, used in order; each is an object with any of
``text``, ``thinking``, ``tool_calls`` (a list of ``{"name", "arguments"}``), ``echo`` (true:
reply with the last user message), ``error`` (end with this error), ``status`` (the error's
HTTP status: 529 plays an overloaded provider, which a fallback model answers), ``delay``
(seconds before each delta), ``first_delay`` (seconds before the first) and ``chunk_size``
(characters per delta).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tau.ai.providers.faux import FauxResponse, faux_model, text, thinking, tool_call
from tau.ai.types import AssistantContent, Context, Model, TextContent, UserMessage


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


def _response(entry: Mapping[str, Any], context: Context) -> FauxResponse:
    content: list[AssistantContent | str] = []
    if entry.get("thinking"):
        content.append(thinking(str(entry["thinking"])))
    if entry.get("echo"):
        content.append(text(_last_user_text(context)))
    if entry.get("text"):
        content.append(text(str(entry["text"])))
    for call in entry.get("tool_calls") or []:
        content.append(tool_call(str(call["name"]), dict(call.get("arguments") or {})))
    return FauxResponse(
        content,
        error=entry.get("error"),
        error_status=int(entry["status"]) if entry.get("status") is not None else None,
        delay=float(entry.get("delay", 0.0)),
        first_delay=float(entry.get("first_delay", 0.0)),
        chunk_size=int(entry.get("chunk_size", 4)),
    )


def scripted_model(path: Path) -> Model:
    """A faux model playing the script in ``path``."""
    try:
        entries = json.loads(path.expanduser().read_text(encoding="utf-8"))
    except OSError as exc:
        raise FauxScriptError(f"cannot read faux script {str(path)!r}: {exc.strerror}") from None
    except ValueError as exc:
        raise FauxScriptError(f"faux script {str(path)!r} is not JSON: {exc}") from None
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise FauxScriptError(f"faux script {str(path)!r} must be a JSON list of objects")
    position = 0

    def next_response(context: Context, options: Mapping[str, Any]) -> FauxResponse:
        nonlocal position
        if position >= len(entries):
            return FauxResponse(error=f"faux script {path.name}: no response left")
        entry = entries[position]
        position += 1
        return _response(entry, context)

    return faux_model(next_response, id=str(path))
