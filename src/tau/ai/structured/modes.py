"""How each mode asks for the output, reads it back, and asks again after a bad answer.

``native``
    the ``output_schema`` option: each adapter maps it onto its provider's structured output;
``tool``
    one output tool (:attr:`OutputSpec.tool`), forced with ``tool_choice`` where the adapter
    takes one;
``prompted``
    the schema in the system prompt, the JSON picked out of the text;
``auto``
    ``native`` where :func:`supports_native_output` says the model has it, else ``tool``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, Literal, TypeAlias

from tau.ai.core.types import (
    AssistantMessage,
    Context,
    Message,
    Model,
    TextContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from tau.ai.lookup.registry import resolve_api_provider
from tau.ai.structured.extract import find_json
from tau.ai.structured.spec import OUTPUT_TOOL_NAME, OutputSpec, OutputValidationError

OutputMode: TypeAlias = Literal["auto", "native", "tool", "prompted"]
"""How the output is asked for (see :mod:`tau.ai.structured.modes`)."""

ResolvedMode: TypeAlias = Literal["native", "tool", "prompted"]

MODES: tuple[OutputMode, ...] = ("auto", "native", "tool", "prompted")

# Claude models with native structured outputs: Sonnet/Haiku/Opus 4.5 and later, Opus 4.1.
_CLAUDE_NATIVE = re.compile(r"claude-(?:opus-4-1|(?:sonnet|opus|haiku)-(?:4-[5-9]|[5-9]))")
_ALWAYS_NATIVE = frozenset(
    {
        "openai-responses",
        "azure-openai-responses",
        "google-generative-ai",
        "google-vertex",
        "mistral-conversations",
        "llama-cpp",
    }
)


def supports_native_output(model: Model) -> bool:
    """Whether ``model`` takes the ``output_schema`` option: what ``auto`` mode checks."""
    api = model.api
    if api in _ALWAYS_NATIVE:
        return True
    if api in ("anthropic-messages", "bedrock-converse-stream"):
        return _CLAUDE_NATIVE.search(model.id.lower()) is not None
    if api == "openai-completions":
        from tau.ai.providers.openai_completions.compat import resolve_compat

        return resolve_compat(model).json_output != "none"
    return False


def resolve_mode(model: Model, mode: OutputMode) -> ResolvedMode:
    """The mode a call uses: ``auto`` decided for ``model``; ``ValueError`` for an unknown
    mode."""
    match mode:
        case "auto":
            return "native" if supports_native_output(model) else "tool"
        case "native" | "tool" | "prompted":
            return mode
    raise ValueError(f"mode must be one of {', '.join(map(repr, MODES))}, got {mode!r}")


def structured_request(
    model: Model,
    context: Context,
    spec: OutputSpec[Any],
    mode: OutputMode,
    options: Mapping[str, Any],
) -> tuple[Context, dict[str, Any]]:
    """The context and options of a call in ``mode`` (``auto`` is resolved for ``model``):
    copies, the caller's are not changed."""
    options = dict(options)
    tools = list(context.tools) if context.tools else None
    system = context.system_prompt
    match resolve_mode(model, mode):
        case "native":
            options["output_schema"] = spec.output_schema
        case "tool":
            tools = [t for t in tools or [] if t.name != OUTPUT_TOOL_NAME] + [spec.tool]
            keys = resolve_api_provider(model.api).option_keys
            if "tool_choice" not in options and (keys is None or "tool_choice" in keys):
                options["tool_choice"] = OUTPUT_TOOL_NAME
        case "prompted":
            system = f"{system}\n\n{spec.instructions}" if system else spec.instructions
    return Context(list(context.messages), system, tools), options


def output_call(message: AssistantMessage) -> ToolCall | None:
    """The message's call of the output tool, if any."""
    for block in message.content:
        if isinstance(block, ToolCall) and block.name == OUTPUT_TOOL_NAME:
            return block
    return None


def answer_text(message: AssistantMessage) -> str:
    """The message's text blocks joined."""
    return "".join(b.text for b in message.content if isinstance(b, TextContent))


def raw_output(message: AssistantMessage, mode: ResolvedMode) -> str:
    """The text the output is read from (the output call's JSON in ``tool`` mode)."""
    if mode == "tool":
        call = output_call(message)
        if call is not None:
            return call.arguments_text or json.dumps(call.arguments, ensure_ascii=False)
    return answer_text(message)


def read_output(spec: OutputSpec[Any], message: AssistantMessage, mode: ResolvedMode) -> Any:
    """The validated output of a complete message; :class:`OutputValidationError` if none."""
    if mode == "tool":
        call = output_call(message)
        if call is not None:
            return spec.validate_object(call.arguments, raw=raw_output(message, mode))
        text = answer_text(message)
        if "{" not in text:
            raise OutputValidationError(
                f"No output: call the {OUTPUT_TOOL_NAME} tool with the answer as its arguments.",
                [("root", f"the {OUTPUT_TOOL_NAME} tool was not called")],
                text,
            )
    return spec.validate_json(find_json(answer_text(message)))


def output_feedback(
    message: AssistantMessage, error: OutputValidationError, mode: ResolvedMode
) -> list[Message]:
    """What follows a rejected answer in the next attempt's context: the answer, then the
    errors as the output call's result (``tool`` mode) or as a user message."""
    retry = f"{error}\n\nFix these errors and answer again."
    follow: list[Message] = [message]
    calls = [b for b in message.content if isinstance(b, ToolCall)]
    output = output_call(message) if mode == "tool" else None
    for call in calls:
        # Every call needs its result before the next turn; only the output call has one.
        text = retry if call is output else f"Not run: answer with the {OUTPUT_TOOL_NAME} tool."
        follow.append(ToolResultMessage(call.id, call.name, [TextContent(text)], is_error=True))
    if output is None:
        follow.append(UserMessage(retry))
    return follow
