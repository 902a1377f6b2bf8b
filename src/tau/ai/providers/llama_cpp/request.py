"""A local turn's request: the ChatML prompt, the tools' grammars and the settings."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tau.ai.core.errors import ProviderError
from tau.ai.core.options import OutputSchema
from tau.ai.core.types import (
    AssistantMessage,
    Context,
    ImageContent,
    Model,
    TextContent,
    Tool,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from tau.ai.lookup.local_models import gguf_path
from tau.ai.providers.llama_cpp.options import LlamaCppOptions
from tau.ai.providers.output_schema import output_instructions
from tau.ai.streaming.sanitize import sanitize_surrogates

__all__ = ["Constraint", "LocalRequest", "Settings", "build_request", "render_prompt"]

DEFAULT_SYSTEM_PROMPT = "You are a helpful assistant."
DEFAULT_TEMPERATURE = 0.0  # greedy: small models wander when sampled, and runs repeat
MAX_CALLS_PER_TURN = 8
# A message starts with the header of the format the system prompt shows (see the package
# docstring for why its first token is constrained).
MESSAGE_PREFIX = "message:\n"
# One token that starts with neither whitespace nor the opener of a placeholder or an object.
_OPENING_GBNF = "root ::= [^<{\\x00-\\x20] [^\\x00-\\x20]*\n"
# JSON as compact as Python's json.dumps writes it: no free whitespace for a small model to
# wander in (llguidance's JSON options, read from the schema's top level).
_COMPACT = {"whitespace_flexible": False, "item_separator": ", ", "key_separator": ": "}
# Keywords whose values are data, not subschemas: an object there is left as it is.
_DATA_KEYWORDS = frozenset({"enum", "const", "default", "examples"})
# Keywords whose values map names to subschemas.
_SCHEMA_MAPS = frozenset({"properties", "patternProperties", "$defs", "definitions"})

Constraint = dict[str, Any]
"""The request fields that constrain one generation: ``{"grammar": gbnf}`` or
``{"json_schema": schema}`` (compiled by the backend, llama.cpp's GBNF engine or llguidance)."""


@dataclass(slots=True)
class Settings:
    """How to sample: the temperature and the output budget in tokens."""

    temperature: float
    max_tokens: int


@dataclass(frozen=True, slots=True)
class LocalRequest:
    """What one local turn needs: the model file, the prompt, the tools and the settings."""

    path: Path
    n_ctx: int
    prompt: str
    tools: list[Tool]
    previous_calls: list[ToolCall]
    """Calls made since the last user message: a repeat of one is answered with text."""
    settings: Settings
    output_schema: dict[str, Any] | None = None
    """The JSON Schema the answer must follow (native structured output): the answer is then
    generated under the grammar compiled from it, with no tool calls."""


def build_request(model: Model, context: Context, options: LlamaCppOptions) -> LocalRequest:
    """The turn for ``context`` (the model file is located, not loaded)."""
    temperature = _temperature(options.get("temperature"))
    output = options.get("output_schema")
    tools = list(context.tools or [])
    if output is not None:
        # The grammar admits only the JSON: the prompt shows the schema and offers no tools.
        shown: OutputSchema = {**output, "schema": _without_titles(output["schema"])}
        system = context.system_prompt or DEFAULT_SYSTEM_PROMPT
        context = Context(context.messages, f"{system}\n\n{output_instructions(shown)}", None)
        tools = []
    return LocalRequest(
        path=gguf_path(model),
        n_ctx=model.context_window,
        prompt=render_prompt(context),
        tools=tools,
        previous_calls=_calls_since_last_user(context),
        settings=Settings(
            temperature=temperature,
            max_tokens=int(options.get("max_tokens") or model.max_tokens),
        ),
        output_schema=None if output is None else output["schema"],
    )


def _temperature(value: float | None) -> float:
    # llama.cpp samples NaN as garbage and infinity as uniform noise, silently.
    if value is None:
        return DEFAULT_TEMPERATURE
    number = float(value)
    if not math.isfinite(number):
        raise ProviderError(
            f"The temperature option is the non-finite number {number!r}: a local model "
            "samples only at a finite temperature (0 is greedy; check the option that set it)"
        )
    return number


def _tool_section(tools: Sequence[Tool]) -> str:
    lines = ["", "", "You have access to the following functions:"]
    for tool in tools:
        lines.append("")
        lines.append(f"functions.{tool.name}:")
        if tool.description:
            lines.append(f"// {tool.description}")
        lines.append(json.dumps(_without_titles(tool.json_schema)))
    lines.extend(
        [
            "",
            "Respond to the user with either a single message or one or more function calls.",
            "",
            "To respond with a message, begin with 'message:', in this format:",
            "",
            "message:",
            "<message>",
            "",
            "To call functions, begin each call with 'functions.<function_name>:', in this format:",
            "",
            "functions.<function_name>:",
            '{ "arg1": "value1", "arg2": "value2" }',
        ]
    )
    return "\n".join(lines)


def _without_titles(schema: Any) -> Any:
    """The schema without pydantic's ``title`` keywords: noise that costs a small model its focus."""
    if isinstance(schema, list):
        return [_without_titles(v) for v in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "title" and isinstance(value, str):
            continue
        if key in ("properties", "$defs", "definitions") and isinstance(value, dict):
            # Names here are property names, not keywords: a property may be called "title".
            out[key] = {name: _without_titles(sub) for name, sub in value.items()}
        else:
            out[key] = _without_titles(value)
    return out


def _turn(role: str, body: str) -> str:
    return f"<|im_start|>{role}\n{body}<|im_end|>\n"


def _user_text(content: str | list[TextContent | ImageContent]) -> str:
    if isinstance(content, str):
        return content
    return "".join(
        b.text if isinstance(b, TextContent) else "(image omitted: this model reads text only)"
        for b in content
    )


def render_prompt(context: Context) -> str:
    """The ChatML prompt for ``context``, ending where the assistant's answer begins."""
    tools = context.tools or []
    system = context.system_prompt or DEFAULT_SYSTEM_PROMPT
    parts = [_turn("system", system + (_tool_section(tools) if tools else ""))]
    for message in context.messages:
        if isinstance(message, UserMessage):
            parts.append(_turn("user", _user_text(message.content)))
        elif isinstance(message, AssistantMessage):
            if message.stop_reason in ("error", "aborted") and not message.content:
                continue
            body: list[str] = []
            text = message.text
            if text:
                body.append(f"{MESSAGE_PREFIX}{text}" if tools else text)
            for call in message.tool_calls:
                body.append(f"functions.{call.name}:\n{json.dumps(call.arguments)}")
            if body:
                parts.append(_turn("assistant", "\n".join(body)))
        elif isinstance(message, ToolResultMessage):
            # ChatML has no tool role this model knows: the result comes back as a user turn
            # that names the function, which is what lets it answer instead of calling again.
            label = "error" if message.is_error else "result"
            parts.append(
                _turn(
                    "user", f"functions.{message.tool_name} {label}:\n{_user_text(message.content)}"
                )
            )
    parts.append("<|im_start|>assistant\n")
    # Lone surrogates (undecodable bytes of a terminal) cannot be encoded for the tokenizer.
    return sanitize_surrogates("".join(parts))


def _literal(text: str) -> str:
    # GBNF string literals use JSON's escapes.
    return json.dumps(text)


def choice_grammar(tools: Sequence[Tool], *, first: bool) -> Constraint:
    """The header of the next step: ``message:`` or a call (after a call, also the end)."""
    calls = " | ".join(_literal(f"functions.{t.name}:") for t in tools)
    # The first choice must pick one; after a call, the empty match lets the turn end.
    root = f'root ::= "message:" | {calls}\n' if first else f"root ::= ({calls})?\n"
    return {"grammar": root}


def opening_grammar() -> Constraint:
    """The first token of a message: no whitespace, no ``<`` or ``{`` (a small model's copy of
    its prompt starts there)."""
    return {"grammar": _OPENING_GBNF}


def arguments_grammar(tool: Tool) -> Constraint:
    """A tool call's arguments: JSON following the tool's schema."""
    return schema_grammar(tool.json_schema)


def schema_grammar(schema: dict[str, Any]) -> Constraint:
    """JSON that follows ``schema``: its objects closed (no property the schema does not name)
    and written compactly.

    A schema that does not compile (an unresolvable ``$ref``, an unknown type) would be
    dropped by the backend without a word, leaving the generation free; it gets any JSON
    object instead, as before.
    """
    import jsonschema_rs

    try:
        jsonschema_rs.validator_for(schema)
    except (jsonschema_rs.ValidationError, ValueError, TypeError):
        schema = {"type": "object"}
    return {"json_schema": {**_closed(schema), "x-guidance": _COMPACT}}


def _closed(schema: Any) -> Any:
    """``schema`` with ``additionalProperties: false`` on every object that does not say."""
    if isinstance(schema, list):
        return [_closed(v) for v in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in _DATA_KEYWORDS:
            out[key] = value
        elif key in _SCHEMA_MAPS and isinstance(value, dict):
            # Names here are property names, not keywords: a property may be called "properties".
            out[key] = {name: _closed(sub) for name, sub in value.items()}
        else:
            out[key] = _closed(value)
    if "properties" in out and "additionalProperties" not in out:
        out["additionalProperties"] = False
    return out


def _calls_since_last_user(context: Context) -> list[ToolCall]:
    calls: list[ToolCall] = []
    for message in reversed(context.messages):
        if isinstance(message, UserMessage):
            break
        if isinstance(message, AssistantMessage):
            calls.extend(message.tool_calls)
    return calls
