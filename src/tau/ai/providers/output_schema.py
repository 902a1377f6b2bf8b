"""The ``output_schema`` option in the dialects of JSON Schema that providers accept.

OpenAI's strict mode (chat completions, Responses, Mistral) needs every object closed
(``additionalProperties: false``) with every property required, and rejects some keywords:
:func:`strict_schema` makes that form, or says the schema cannot have it (the adapter then
sends the schema as it is, not strict). Anthropic's structured outputs need closed objects and
take fewer keywords: :func:`closed_schema` moves the rest into the description, where the
model still reads them (the answer is validated against the full schema anyway).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from tau.ai.core.errors import ProviderError
from tau.ai.core.options import OutputSchema

_MAX_DEPTH = 64

# Keywords OpenAI's strict mode rejects; a schema using one is sent without strict.
_NOT_STRICT = frozenset(
    {
        "not",
        "if",
        "then",
        "else",
        "dependentRequired",
        "dependentSchemas",
        "patternProperties",
        "unevaluatedProperties",
        "unevaluatedItems",
        "propertyNames",
        "contains",
        "prefixItems",
        "oneOf",
        "allOf",
    }
)
_SUBSCHEMA_MAPS = ("properties", "$defs", "definitions")
_SUBSCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")

# What Anthropic's structured outputs take; other keywords go into the description.
_CLOSED_KEYWORDS = frozenset(
    {
        "type",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "enum",
        "const",
        "anyOf",
        "allOf",
        "$ref",
        "$defs",
        "definitions",
        "description",
        "title",
        "format",
        "minItems",
    }
)
_CLOSED_FORMATS = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4", "ipv6", "uuid"}
)


class _NotStrict(Exception):
    pass


def strict_schema(schema: dict[str, Any]) -> dict[str, Any] | None:
    """OpenAI's strict form of ``schema``: objects closed, all properties required, no
    ``default``; None when the schema needs what strict mode forbids (an open object such as
    ``dict[str, int]``, ``not``, ``patternProperties``…)."""
    try:
        result = _strict(schema, 0)
    except _NotStrict:
        return None
    return result if isinstance(result, dict) else None


def _walk(node: Any, depth: int, visit: Callable[[dict[str, Any], int], Any]) -> Any:
    """``visit`` applied to each schema object of ``node`` (a schema, or a list of them)."""
    if depth > _MAX_DEPTH:
        raise ProviderError(f"output schema nested deeper than {_MAX_DEPTH} levels")
    if isinstance(node, list):
        return [_walk(item, depth + 1, visit) for item in node]
    if not isinstance(node, dict):
        return node
    return visit(node, depth)


def _strict(node: Any, depth: int) -> Any:
    return _walk(node, depth, _strict_object)


def _strict_object(node: dict[str, Any], depth: int) -> Any:
    one = node.get("allOf")
    if isinstance(one, list) and len(one) == 1 and isinstance(one[0], dict):
        # A single allOf wraps a $ref to give it siblings (a description): merge it in.
        node = {**{k: v for k, v in node.items() if k != "allOf"}, **one[0]}
    if _NOT_STRICT.intersection(node):
        raise _NotStrict
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "default":
            continue
        if key in _SUBSCHEMA_MAPS and isinstance(value, dict):
            out[key] = {name: _strict(sub, depth + 1) for name, sub in value.items()}
        elif key in ("items", "anyOf", "additionalProperties"):
            out[key] = _strict(value, depth + 1)
        else:
            out[key] = value
    if node.get("type") == "object" or "properties" in node:
        extra = node.get("additionalProperties", False)
        if extra is not False:
            raise _NotStrict  # an open object cannot be strict
        out["additionalProperties"] = False
        out["required"] = list(out.get("properties", {}))
        out.setdefault("properties", {})
    return out


def closed_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """Anthropic's form of ``schema``: objects closed, keywords it does not take folded into
    the description."""
    result = _closed(schema, 0)
    assert isinstance(result, dict)
    return result


def _closed(node: Any, depth: int) -> Any:
    return _walk(node, depth, _closed_object)


def _closed_object(node: dict[str, Any], depth: int) -> Any:
    out: dict[str, Any] = {}
    folded: dict[str, Any] = {}
    for key, value in node.items():
        if key in _SUBSCHEMA_MAPS and isinstance(value, dict):
            out[key] = {name: _closed(sub, depth + 1) for name, sub in value.items()}
        elif key in ("items", "anyOf", "allOf"):
            out[key] = _closed(value, depth + 1)
        elif key == "oneOf":
            out["anyOf"] = _closed(value, depth + 1)
        elif key == "default":
            continue  # not taken, and no constraint on the answer
        elif key in _CLOSED_KEYWORDS and _closed_value(key, value):
            out[key] = value
        else:
            folded[key] = value
    if node.get("type") == "object" or "properties" in node:
        extra = node.get("additionalProperties")
        if isinstance(extra, dict):
            folded["additionalProperties"] = extra
        out["additionalProperties"] = False
    if folded:
        note = json.dumps(folded, ensure_ascii=False, default=str)
        text = out.get("description")
        out["description"] = f"{text}\n\n{note}" if isinstance(text, str) else note
    return out


def _closed_value(key: str, value: Any) -> bool:
    # Anthropic takes only some formats, and minItems of 0 or 1.
    if key == "format":
        return value in _CLOSED_FORMATS
    if key == "minItems":
        return value in (0, 1)
    return True


def output_instructions(output: OutputSchema) -> str:
    """The instruction that asks for JSON following the schema, for endpoints that constrain
    the output to JSON but take no schema (and the prompted mode)."""
    schema = json.dumps(output["schema"], ensure_ascii=False)
    about = output.get("description")
    extra = f"\n{about}" if about else ""
    return (
        "Answer with one JSON object that follows this JSON Schema, and nothing else "
        f"(no prose, no comments).{extra}\n\nJSON Schema:\n{schema}"
    )


def json_schema_format(output: OutputSchema) -> dict[str, Any]:
    """OpenAI's ``json_schema`` format object (chat ``response_format.json_schema``, the
    Responses ``text.format`` fields, Mistral's): strict where the schema allows it."""
    strict = strict_schema(output["schema"])
    fmt: dict[str, Any] = {
        "name": output["name"],
        "schema": output["schema"] if strict is None else strict,
        "strict": strict is not None,
    }
    description = output.get("description")
    if description:
        fmt["description"] = description
    return fmt
