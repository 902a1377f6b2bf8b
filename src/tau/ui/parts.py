"""tau transcripts as the AI SDK's ``UIMessage``s, and the page's ``UIMessage``s as tau's.

:func:`to_ui_messages` is what a page shows for a stored chat: a user message per tau user
message, and one assistant message per run (a ``step-start`` and the parts of each of its
assistant messages, each tool call a ``tool-<name>`` part carrying its result), which is
what the stream of that run assembles to (see :mod:`tau.ui.ai_sdk`).

:func:`decode_ui_messages` reads the page's messages (text, image files, reasoning, tool
parts with their outputs) into tau messages; :func:`decode_decisions` reads the last
assistant message of a paused run's page (its ``approval-responded`` tool parts and the
outputs of the page's own tools) into :meth:`tau.agent.Agent.resume`'s decisions. Anything
malformed is a :class:`UIMessageError` naming where.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic_core import to_jsonable_python

from tau.agent import AgentMessage, Approve, Decision, Deny, PendingCall, ToolResult
from tau.ai import (
    AssistantMessage,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserContent,
    UserMessage,
)
from tau.ai.adapters import dump_content

__all__ = [
    "Approval",
    "UIMessageError",
    "decode_decisions",
    "decode_ui_messages",
    "decode_user_message",
    "shown",
    "to_ui_messages",
    "tool_output",
]

Approval = dict[str, Any]
"""A page's answer to an approval request: ``{"approved": bool, "reason"?: str}``."""

_DATA_URL = re.compile(r"data:([\w.+-]+/[\w.+-]+);base64,(.*)", re.S)
_USER_ROLES = ("user", "system")


class UIMessageError(ValueError):
    """A ``UIMessage`` (or a part of one) that tau cannot read; the message names where."""


def tool_output(content: Sequence[Any], details: Any) -> Any:
    """A tool result as the page sees it: its text when it is only text (without details),
    else ``{"content": [...], "details": ...}``."""
    if (details is None or details == {}) and all(
        isinstance(block, TextContent) for block in content
    ):
        return "".join(block.text for block in content)
    return {
        "content": [dump_content(block) for block in content],
        "details": to_jsonable_python(details, fallback=repr),
    }


def _text_of(content: Sequence[Any]) -> str:
    return "".join(block.text for block in content if isinstance(block, TextContent))


# --------------------------------------------------------------------------- tau -> page


def to_ui_messages(
    messages: Sequence[AgentMessage],
    *,
    approvals: Mapping[str, Approval] | None = None,
    pending: Sequence[PendingCall] = (),
    output: Any = None,
    has_output: bool = False,
) -> list[dict[str, Any]]:
    """The ``UIMessage``s of a transcript (see the module docstring). ``approvals`` are the
    page's answers by call id, ``pending`` the calls a paused run waits on, ``output`` the
    last run's validated output (a ``data-output`` part when ``has_output``). Message ids are
    ``m<index of its first tau message>``."""
    approvals = approvals or {}
    waiting = {call.path[0] if call.path else call.id: call for call in pending}
    results = {m.tool_call_id: m for m in messages if isinstance(m, ToolResultMessage)}
    out: list[dict[str, Any]] = []
    current: dict[str, Any] | None = None
    for index, message in enumerate(messages):
        if isinstance(message, AssistantMessage):
            if current is None:
                current = {"id": f"m{index}", "role": "assistant", "parts": []}
                out.append(current)
            current["parts"].append({"type": "step-start"})
            for block in message.content:
                current["parts"].append(_assistant_part(block, results, approvals, waiting))
        elif isinstance(message, UserMessage):
            current = None
            out.append({"id": f"m{index}", "role": "user", "parts": _user_parts(message)})
    if has_output and current is not None:
        current["parts"].append(
            {
                "type": "data-output",
                "id": "output",
                "data": to_jsonable_python(output, fallback=repr),
            }
        )
    return out


def _user_parts(message: UserMessage) -> list[dict[str, Any]]:
    if isinstance(message.content, str):
        return [{"type": "text", "text": message.content}]
    parts: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, TextContent):
            parts.append({"type": "text", "text": block.text})
        else:
            url = f"data:{block.mime_type};base64,{block.data}"
            parts.append({"type": "file", "mediaType": block.mime_type, "url": url})
    return parts


def _assistant_part(
    block: Any,
    results: Mapping[str, ToolResultMessage],
    approvals: Mapping[str, Approval],
    waiting: Mapping[str, PendingCall],
) -> dict[str, Any]:
    if isinstance(block, TextContent):
        return {"type": "text", "text": block.text, "state": "done"}
    if isinstance(block, ThinkingContent):
        return {"type": "reasoning", "text": block.thinking, "state": "done"}
    call: ToolCall = block
    part: dict[str, Any] = {
        "type": f"tool-{call.name}",
        "toolCallId": call.id,
        "state": "input-available",
        "input": to_jsonable_python(call.arguments, fallback=repr),
    }
    answer = approvals.get(call.id)
    if answer is not None:
        part["approval"] = {"id": call.id, **answer}
    result = results.get(call.id)
    if result is not None:
        if answer is not None and not answer.get("approved"):
            part["state"] = "output-denied"
        elif result.is_error:
            part["state"] = "output-error"
            part["errorText"] = _text_of(result.content)
        else:
            part["state"] = "output-available"
            part["output"] = tool_output(result.content, result.details)
    elif call.id in waiting and waiting[call.id].kind == "approval" and answer is None:
        part["state"] = "approval-requested"
        part["approval"] = {"id": waiting[call.id].id}
    return part


# --------------------------------------------------------------------------- page -> tau


def shown(value: Any, limit: int = 60) -> str:
    """``repr(value)`` cut to ``limit`` characters: errors quote the page's input, bounded."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _object(value: Any, path: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise UIMessageError(f"{path}: expected an object")
    return value


def _string(value: Any, path: str) -> str:
    if not isinstance(value, str):
        raise UIMessageError(f"{path}: expected a string")
    return value


def _parts(message: Mapping[str, Any], path: str) -> list[Mapping[str, Any]]:
    parts = message.get("parts")
    if not isinstance(parts, list):
        raise UIMessageError(f"{path}.parts: expected a list")
    return [_object(part, f"{path}.parts[{i}]") for i, part in enumerate(parts)]


def _image(part: Mapping[str, Any], path: str) -> ImageContent:
    url = _string(part.get("url"), f"{path}.url")
    matched = _DATA_URL.fullmatch(url)
    if matched is None or not matched.group(1).startswith("image/"):
        raise UIMessageError(
            f"{path}: only images sent as base64 data URLs are accepted (data:image/...;base64,)"
        )
    data = matched.group(2)
    try:
        base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        raise UIMessageError(f"{path}.url: the image is not valid base64") from None
    return ImageContent(data, matched.group(1))


def decode_user_message(message: Any, path: str = "message") -> UserMessage:
    """One page ``UIMessage`` with role ``user`` as a tau user message."""
    message = _object(message, path)
    if message.get("role") not in _USER_ROLES:
        raise UIMessageError(f"{path}.role: expected user, got {shown(message.get('role'))}")
    content: list[UserContent] = []
    for i, part in enumerate(_parts(message, path)):
        where = f"{path}.parts[{i}]"
        kind = part.get("type")
        if kind == "text":
            content.append(TextContent(_string(part.get("text"), f"{where}.text")))
        elif kind == "file":
            content.append(_image(part, where))
        elif kind == "step-start" or (isinstance(kind, str) and kind.startswith("data-")):
            continue
        else:
            raise UIMessageError(f"{where}.type: a user message cannot hold {shown(kind)} parts")
    if not content:
        raise UIMessageError(f"{path}: the message has no text or image")
    return UserMessage(content)


def decode_ui_messages(messages: Any, path: str = "messages") -> list[AgentMessage]:
    """The page's ``UIMessage``s as tau messages: user text and images; assistant text,
    reasoning and tool calls, each finished tool part followed by its result."""
    if not isinstance(messages, list):
        raise UIMessageError(f"{path}: expected a list of UIMessages")
    out: list[AgentMessage] = []
    for i, raw in enumerate(messages):
        where = f"{path}[{i}]"
        message = _object(raw, where)
        role = message.get("role")
        if role in _USER_ROLES:
            out.append(decode_user_message(message, where))
        elif role == "assistant":
            out.extend(_decode_assistant(message, where))
        else:
            raise UIMessageError(f"{where}.role: expected user or assistant, got {shown(role)}")
    return out


def _decode_assistant(message: Mapping[str, Any], path: str) -> list[AgentMessage]:
    out: list[AgentMessage] = []
    content: list[Any] = []
    results: list[ToolResultMessage] = []

    def flush() -> None:
        if content:
            out.append(AssistantMessage(list(content), api="ui", provider="ui", model="ui"))
            out.extend(results)
        content.clear()
        results.clear()

    for i, part in enumerate(_parts(message, path)):
        where = f"{path}.parts[{i}]"
        kind = _string(part.get("type"), f"{where}.type")
        if kind == "step-start":
            flush()
        elif kind == "text":
            content.append(TextContent(_string(part.get("text"), f"{where}.text")))
        elif kind == "reasoning":
            content.append(ThinkingContent(_string(part.get("text"), f"{where}.text")))
        elif kind.startswith("tool-") or kind == "dynamic-tool":
            call, result = _decode_tool(part, kind, where)
            content.append(call)
            if result is not None:
                results.append(result)
        # file, source and data parts are the page's to show: the model never saw them.
    flush()
    return out


def _decode_tool(
    part: Mapping[str, Any], kind: str, path: str
) -> tuple[ToolCall, ToolResultMessage | None]:
    name = (
        _string(part.get("toolName"), f"{path}.toolName")
        if kind == "dynamic-tool"
        else kind.removeprefix("tool-")
    )
    call_id = _string(part.get("toolCallId"), f"{path}.toolCallId")
    arguments = part.get("input")
    if not isinstance(arguments, dict):
        raise UIMessageError(f"{path}.input: expected an object")
    state = part.get("state")
    result: ToolResultMessage | None = None
    if state == "output-available":
        output = part.get("output")
        text = output if isinstance(output, str) else _json_text(output)
        result = ToolResultMessage(call_id, name, [TextContent(text)])
    elif state == "output-error":
        text = _string(part.get("errorText"), f"{path}.errorText")
        result = ToolResultMessage(call_id, name, [TextContent(text)], is_error=True)
    elif state == "output-denied":
        result = ToolResultMessage(call_id, name, [TextContent(Deny().reason)], is_error=True)
    return ToolCall(call_id, name, dict(arguments)), result


def _json_text(value: Any) -> str:
    from pydantic_core import to_json

    return to_json(value, fallback=repr).decode()


def decode_decisions(
    message: Any, pending: Sequence[PendingCall], path: str = "message"
) -> tuple[dict[str, Decision], dict[str, Approval]]:
    """The decisions in the page's last assistant ``message`` for a paused run's ``pending``
    calls, and the page's approval answers by call id. A call the page did not decide is a
    :class:`UIMessageError` naming it."""
    message = _object(message, path)
    if message.get("role") != "assistant":
        raise UIMessageError(f"{path}.role: a resumed run needs the assistant message")
    by_call: dict[str, Mapping[str, Any]] = {}
    by_approval: dict[str, Mapping[str, Any]] = {}
    for part in _parts(message, path):
        call_id = part.get("toolCallId")
        if isinstance(call_id, str):
            by_call[call_id] = part
        approval = part.get("approval")
        if isinstance(approval, Mapping) and isinstance(approval.get("id"), str):
            by_approval[approval["id"]] = approval
    decisions: dict[str, Decision] = {}
    answers: dict[str, Approval] = {}
    for call in pending:
        approval = by_approval.get(call.id) or {}
        if isinstance(approval.get("approved"), bool):
            reason = approval.get("reason")
            answer: Approval = {"approved": approval["approved"]}
            if isinstance(reason, str):
                answer["reason"] = reason
            answers[call.id] = answer
            if approval["approved"] and call.kind == "approval":
                decisions[call.id] = Approve()
                continue
            if not approval["approved"]:
                decisions[call.id] = Deny(reason) if isinstance(reason, str) else Deny()
                continue
        tool_part = by_call.get(call.id)
        if call.kind == "external" and tool_part is not None:
            if tool_part.get("state") == "output-available":
                decisions[call.id] = ToolResult(to_jsonable_python(tool_part.get("output")))
                continue
            if tool_part.get("state") == "output-error":
                text = _string(tool_part.get("errorText"), f"{path}: call {call.id!r}.errorText")
                decisions[call.id] = ToolResult(text, is_error=True)
                continue
        need = "an approval response" if call.kind == "approval" else "its output"
        raise UIMessageError(f"{path}: call {call.id!r} ({call.tool_name}) needs {need}")
    return decisions, answers
