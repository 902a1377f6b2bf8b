"""The request body the Gemini API and Vertex AI share (the URL and the authentication differ,
and live in :mod:`.gemini` and :mod:`.vertex`).

Deliberate differences from pi-ai in the request, in one place: thinking written by another
model, and unsigned thinking (Gemini's own thought summaries usually are), is left out of
requests instead of becoming text parts: as text it would read as something the model said.
Signatures are replayed only to the same provider, api and model.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, cast

from tau.ai.capabilities.transform_messages import normalize_id_anthropic, transform_messages
from tau.ai.core.errors import ProviderError
from tau.ai.core.types import (
    AssistantMessage,
    Context,
    ImageContent,
    Message,
    Model,
    TextContent,
    ThinkingBudgets,
    ThinkingContent,
    ThinkingLevel,
    Tool,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from tau.ai.providers.google.options import GoogleOptions, GoogleSimpleOptions
from tau.ai.providers.google.schema import to_legacy_schema
from tau.ai.providers.parts import text_parts
from tau.ai.providers.simple_options import base_options
from tau.ai.streaming.sanitize import sanitize_surrogates

SKIP_THOUGHT_SIGNATURE = "skip_thought_signature_validator"
"""What Gemini 3 accepts in place of a signature on a function call it did not sign."""

_BASE64 = re.compile(r"[A-Za-z0-9+/]+={0,2}")
_GEMINI3_PRO = re.compile(r"gemini-3(\.\d+)?-pro")
_GEMINI3_FLASH = re.compile(r"gemini-3(\.\d+)?-flash")

# Gemini 2.5 budgets for minimal/low/medium/high; others get -1 (dynamic).
_BUDGETS_25_PRO: ThinkingBudgets = {"minimal": 128, "low": 2048, "medium": 8192, "high": 32768}
_BUDGETS_25_FLASH: ThinkingBudgets = {"minimal": 128, "low": 2048, "medium": 8192, "high": 24576}


# --------------------------------------------------------------------------- small predicates


def is_gemini3(model_id: str) -> bool:
    """Gemini 3 models take images inside function responses and need call signatures."""
    return "gemini-3" in model_id


def requires_tool_call_id(model_id: str) -> bool:
    """Non-Gemini models behind Google's API (Claude, gpt-oss) need explicit call ids."""
    return model_id.startswith(("claude-", "gpt-oss-"))


def is_valid_signature(signature: str | None) -> bool:
    """A thought signature Gemini will accept back: non-empty standard base64."""
    if not signature:
        return False
    return len(signature) % 4 == 0 and _BASE64.fullmatch(signature) is not None


# --------------------------------------------------------------------------- messages


def _image_part(image: ImageContent) -> dict[str, Any]:
    return {"inlineData": {"mimeType": image.mime_type, "data": image.data}}


def _assistant_parts(message: AssistantMessage, model: Model) -> list[dict[str, Any]]:
    # After the handoff transform, signatures and thinking blocks left here are this model's.
    # Gemini signs only the first of parallel calls and expects the rest back unsigned; a
    # turn with no signed call at all (another model's, or an old one) needs the sentinel.
    sentinel = is_gemini3(model.id) and not any(
        isinstance(b, ToolCall) and is_valid_signature(b.thought_signature) for b in message.content
    )
    explicit_ids = requires_tool_call_id(model.id)
    parts: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, TextContent):
            if not block.text.strip():
                continue
            part: dict[str, Any] = {"text": sanitize_surrogates(block.text)}
            if is_valid_signature(block.text_signature):
                part["thoughtSignature"] = block.text_signature
        elif isinstance(block, ThinkingContent):
            valid = is_valid_signature(block.thinking_signature)
            if not valid and not block.thinking.strip():
                continue
            part = {"thought": True, "text": sanitize_surrogates(block.thinking)}
            if valid:
                part["thoughtSignature"] = block.thinking_signature
        else:
            call: dict[str, Any] = {"name": block.name, "args": block.arguments or {}}
            if explicit_ids:
                call["id"] = block.id
            part = {"functionCall": call}
            if is_valid_signature(block.thought_signature):
                part["thoughtSignature"] = block.thought_signature
            elif sentinel:
                part["thoughtSignature"] = SKIP_THOUGHT_SIGNATURE
        parts.append(part)
    return parts


def _tool_result(
    message: ToolResultMessage, model: Model
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The functionResponse part, and the image parts that go elsewhere (pre-Gemini 3)."""
    text = "\n".join(b.text for b in message.content if isinstance(b, TextContent))
    images = (
        [b for b in message.content if isinstance(b, ImageContent)] if model.supports_images else []
    )
    if not text:
        text = "(see attached image)" if images else ""
    text = sanitize_surrogates(text)
    response: dict[str, Any] = {
        "name": message.tool_name,
        "response": {"error": text} if message.is_error else {"output": text},
    }
    if requires_tool_call_id(model.id):
        response["id"] = message.tool_call_id
    loose: list[dict[str, Any]] = []
    if images:
        if is_gemini3(model.id):
            response["parts"] = [_image_part(i) for i in images]
        else:
            loose = [_image_part(i) for i in images]
    return {"functionResponse": response}, loose


def convert_messages(messages: Sequence[Message], model: Model) -> list[dict[str, Any]]:
    """Gemini ``contents`` for messages already passed through the handoff transform.

    Every outgoing text is cleaned of lone surrogates (they break Google's JSON).
    Consecutive tool results share one user turn, as Gemini requires; a pre-Gemini-3 image
    result adds a following user turn, which starts a new turn for later results.
    """
    contents: list[dict[str, Any]] = []
    for message in messages:
        if isinstance(message, UserMessage):
            parts = text_parts(message.content, _image_part if model.supports_images else None)
            if parts:
                contents.append({"role": "user", "parts": parts})
        elif isinstance(message, AssistantMessage):
            parts = _assistant_parts(message, model)
            if parts:
                contents.append({"role": "model", "parts": parts})
        else:
            part, images = _tool_result(message, model)
            last = contents[-1] if contents else None
            if (
                last is not None
                and last["role"] == "user"
                and any("functionResponse" in p for p in last["parts"])
            ):
                last["parts"].append(part)
            else:
                contents.append({"role": "user", "parts": [part]})
            if images:
                contents.append(
                    {"role": "user", "parts": [{"text": "Tool result image:"}, *images]}
                )
    return contents


# --------------------------------------------------------------------------- tools


def convert_tools(tools: Sequence[Tool] | None, *, legacy: bool = False) -> list[dict[str, Any]]:
    """``tools`` for the request: full JSON Schema as ``parametersJsonSchema``.

    ``legacy`` sends the converted schema as ``parameters`` instead (see
    :func:`to_legacy_schema`). An empty tool list gives an empty list (omit the field).
    """
    if not tools:
        return []
    declarations = []
    for tool in tools:
        schema = tool.json_schema
        declaration: dict[str, Any] = {"name": tool.name, "description": tool.description}
        if legacy:
            declaration["parameters"] = to_legacy_schema(schema)
        else:
            declaration["parametersJsonSchema"] = schema
        declarations.append(declaration)
    return [{"functionDeclarations": declarations}]


_TOOL_MODES = {"auto": "AUTO", "none": "NONE", "any": "ANY", "required": "ANY"}


def tool_config(tool_choice: Any) -> dict[str, Any] | None:
    """``toolConfig`` for a tool choice: auto/none/any (or required), or a tool name.

    A dict is taken as an already provider-shaped ``functionCallingConfig``.
    """
    if tool_choice is None:
        return None
    if isinstance(tool_choice, Mapping):
        return {"functionCallingConfig": dict(tool_choice)}
    if not isinstance(tool_choice, str):
        raise ProviderError(f"Unsupported tool_choice for Google: {tool_choice!r}")
    mode = _TOOL_MODES.get(tool_choice)
    if mode is not None:
        return {"functionCallingConfig": {"mode": mode}}
    # Any other string names the one function the model must call.
    return {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": [tool_choice]}}


# --------------------------------------------------------------------------- thinking


def thinking_config(model: Model, thinking: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """``generationConfig.thinkingConfig`` for the ``thinking`` option, or None to omit it.

    ``thinking`` is ``{"enabled": bool, "budget_tokens": int?, "level": str?}``; a level
    (Gemini 3) wins over a budget (-1 dynamic, 0 off). Non-reasoning models never get one.
    """
    if not model.reasoning or not thinking or not thinking.get("enabled"):
        return None
    config: dict[str, Any] = {"includeThoughts": True}
    level = thinking.get("level")
    budget = thinking.get("budget_tokens")
    if level is not None:
        config["thinkingLevel"] = str(level).upper()
    elif budget is not None:
        config["thinkingBudget"] = int(budget)
    return config


def simple_thinking(
    model: Model, level: ThinkingLevel | None, budgets: ThinkingBudgets | None
) -> dict[str, Any]:
    """The ``thinking`` option for a unified reasoning level."""
    if level is None:
        return {"enabled": False}
    clamped = cast(str, "high" if level == "xhigh" else level)
    if _GEMINI3_PRO.search(model.id):
        return {"enabled": True, "level": "LOW" if clamped in ("minimal", "low") else "HIGH"}
    if _GEMINI3_FLASH.search(model.id):
        return {"enabled": True, "level": clamped.upper()}
    custom = cast(dict[str, int], budgets or {})
    if clamped in custom:
        return {"enabled": True, "budget_tokens": custom[clamped]}
    if "2.5-pro" in model.id:
        table = cast(dict[str, int], _BUDGETS_25_PRO)
    elif "2.5-flash" in model.id:
        table = cast(dict[str, int], _BUDGETS_25_FLASH)
    else:
        return {"enabled": True, "budget_tokens": -1}
    return {"enabled": True, "budget_tokens": table[clamped]}


# --------------------------------------------------------------------------- request body


def request_body(model: Model, context: Context, options: GoogleOptions) -> dict[str, Any]:
    """The JSON body of ``streamGenerateContent`` (REST field names) for ``context``.

    Thinking another model wrote, and unsigned thinking, is left out (the transform's
    default): Gemini's own thought summaries need not go back, and as text they would read
    as things the model said.
    """
    # Only non-Gemini models behind Google's API take (and need) explicit call ids.
    normalize = normalize_id_anthropic if requires_tool_call_id(model.id) else None
    messages = transform_messages(context.messages, model, normalize)
    body: dict[str, Any] = {"contents": convert_messages(messages, model)}
    if context.system_prompt:
        body["systemInstruction"] = {
            "parts": [{"text": sanitize_surrogates(context.system_prompt)}]
        }
    tools = convert_tools(context.tools, legacy=requires_tool_call_id(model.id))
    if tools:
        body["tools"] = tools
        config = tool_config(options.get("tool_choice"))
        if options.get("stream_function_call_arguments"):
            config = config or {"functionCallingConfig": {}}
            config["functionCallingConfig"]["streamFunctionCallArguments"] = True
        if config is not None:
            body["toolConfig"] = config
    generation: dict[str, Any] = {}
    if options.get("temperature") is not None:
        generation["temperature"] = options["temperature"]
    if options.get("max_tokens"):
        generation["maxOutputTokens"] = options["max_tokens"]
    thinking = thinking_config(model, options.get("thinking"))
    if thinking is not None:
        generation["thinkingConfig"] = thinking
    output = options.get("output_schema")
    if output is not None:
        # responseJsonSchema takes JSON Schema as it is ($defs, anyOf…), unlike responseSchema.
        generation["responseMimeType"] = "application/json"
        generation["responseJsonSchema"] = output["schema"]
    if generation:
        body["generationConfig"] = generation
    return body


_GEMINI_MAJOR = re.compile(r"gemini-(\d+)")


def streams_call_arguments(model: Model) -> bool:
    """Whether ``stream_simple`` asks ``model`` to stream function-call arguments.

    Vertex AI serves ``streamFunctionCallArguments`` for Gemini 3 and later; the Gemini API
    does not take it (google-genai refuses to send it there), so it stays off there unless
    asked for with the ``stream_function_call_arguments`` option.
    """
    if model.api != "google-vertex":
        return False
    match = _GEMINI_MAJOR.search(model.id)
    return match is not None and int(match.group(1)) >= 3


def simple_options(model: Model, options: GoogleSimpleOptions) -> dict[str, Any]:
    """``stream_simple`` options: the base ones, ``thinking`` for the reasoning level, and
    streamed call arguments where the model has them (see :func:`streams_call_arguments`)."""
    out = base_options(model, options)
    out["thinking"] = simple_thinking(
        model, options.get("reasoning"), options.get("thinking_budgets")
    )
    streamed = options.get("stream_function_call_arguments")
    out["stream_function_call_arguments"] = (
        streams_call_arguments(model) if streamed is None else bool(streamed)
    )
    return out
