"""Gemini's legacy ``parameters``: a JSON Schema rewritten into its OpenAPI subset."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

__all__ = ["to_legacy_schema"]

# Keywords Gemini's OpenAPI-subset ``Schema`` understands (the legacy ``parameters`` field).
_LEGACY_KEYS = frozenset(
    {
        "type",
        "format",
        "title",
        "description",
        "nullable",
        "enum",
        "maxItems",
        "minItems",
        "properties",
        "required",
        "minProperties",
        "maxProperties",
        "minLength",
        "maxLength",
        "pattern",
        "example",
        "anyOf",
        "propertyOrdering",
        "default",
        "items",
        "minimum",
        "maximum",
    }
)


def to_legacy_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """Rewrite a JSON Schema into the OpenAPI subset of Gemini's legacy ``parameters``.

    Modern requests send the schema untouched as ``parametersJsonSchema``; this path serves
    models behind Google's API that still need ``parameters``. It inlines local ``$ref``s
    (a recursive reference becomes an unconstrained object), turns ``const`` into a one-value
    ``enum``, ``oneOf`` into ``anyOf``, a type list into ``anyOf`` (or ``nullable`` for
    ``[T, "null"]``), merges ``allOf``, uses ``exclusiveMinimum``/``exclusiveMaximum`` as
    bounds, and drops every keyword Gemini would reject (``$schema``, ``additionalProperties``,
    ``patternProperties``, ``not``…).
    """
    defs = {**schema.get("definitions", {}), **schema.get("$defs", {})}
    return _legacy(schema, defs, ())


def _legacy(node: Any, defs: Mapping[str, Any], seen: tuple[str, ...]) -> dict[str, Any]:
    if not isinstance(node, Mapping):
        return {}
    ref = node.get("$ref")
    if isinstance(ref, str):
        name = ref.rsplit("/", 1)[-1]
        if name in seen or name not in defs:
            return {"type": "object", "description": f"(recursive reference to {name})"}
        target = _legacy(defs[name], defs, (*seen, name))
        extra = {k: v for k, v in node.items() if k != "$ref"}
        return {**target, **_legacy(extra, defs, seen)} if extra else target
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "properties" and isinstance(value, Mapping):
            out["properties"] = {k: _legacy(v, defs, seen) for k, v in value.items()}
        elif key == "items":
            out["items"] = _legacy(value, defs, seen)
        elif key in ("anyOf", "oneOf") and isinstance(value, list):
            out["anyOf"] = [_legacy(v, defs, seen) for v in value]
        elif key == "allOf" and isinstance(value, list):
            for sub in value:
                merged = _legacy(sub, defs, seen)
                props = {**out.get("properties", {}), **merged.pop("properties", {})}
                required = [*out.get("required", []), *merged.pop("required", [])]
                out.update(merged)
                if props:
                    out["properties"] = props
                if required:
                    out["required"] = list(dict.fromkeys(required))
        elif key == "const":
            out["enum"] = [value]
        elif key == "exclusiveMinimum" and isinstance(value, int | float):
            out.setdefault("minimum", value)
        elif key == "exclusiveMaximum" and isinstance(value, int | float):
            out.setdefault("maximum", value)
        elif key == "type" and isinstance(value, list):
            kinds = [t for t in value if t != "null"]
            if len(kinds) < len(value):
                out["nullable"] = True
            if len(kinds) == 1:
                out["type"] = kinds[0]
            elif kinds:
                out["anyOf"] = [{"type": t} for t in kinds]
        elif key == "examples" and isinstance(value, list) and value:
            out.setdefault("example", value[0])
        elif key in _LEGACY_KEYS:
            out[key] = value
    if "enum" in out:
        # Gemini enums are strings only.
        out["enum"] = [v if isinstance(v, str) else json.dumps(v) for v in out["enum"]]
        out["type"] = "string"
    return out
