"""Validating a tool call's arguments against its tool's parameters, before running the tool.

A tool's ``parameters`` is a pydantic model class, validated by pydantic in lax mode (which
coerces ``"5"`` to ``5`` and the like), or a JSON Schema dict, validated by ``jsonschema-rs``
after a schema-guided coercion of primitives that follows Ajv's ``coerceTypes`` rules (what pi
runs), plus two repairs models often need: a scalar where an array is expected becomes a
one-item array, and an object or array sent as a JSON-encoded string is decoded.

Every problem is reported at once, in one message meant to go back to the model::

    Validation failed for tool "write":
      - path: "path" is a required property
      - mode: 7 is not one of ["w", "a"]

    Received arguments:
    {
      "mode": 7
    }
"""

from __future__ import annotations

import json
import math
import re
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, NoReturn, cast

from tau.ai.core.types import Tool, ToolCall

if TYPE_CHECKING:
    import jsonschema_rs

# pydantic and jsonschema_rs are imported where they are used: together they would add a
# third of a second to ``import tau.ai``.

__all__ = ["ToolValidationError", "validate_tool_arguments", "validate_tool_call"]


class ToolValidationError(ValueError):
    """A tool call that names no known tool, or whose arguments do not fit the tool's schema.

    ``str(error)`` is the readable message for the model; ``errors`` the ``(path, message)``
    pairs; ``arguments`` what the model sent.
    """

    def __init__(
        self,
        message: str,
        tool_name: str,
        errors: list[tuple[str, str]] | None = None,
        arguments: Any = None,
    ) -> None:
        super().__init__(message)
        self.tool_name = tool_name
        self.errors = errors or []
        self.arguments = arguments


def validate_tool_call(tools: Iterable[Tool], tool_call: ToolCall) -> dict[str, Any]:
    """Find the tool ``tool_call`` names (exact match) and return its validated arguments.

    Raises :class:`ToolValidationError` when no tool has that name or the arguments do not fit.
    """
    tools = list(tools)
    for tool in tools:
        if tool.name == tool_call.name:
            return validate_tool_arguments(tool, tool_call)
    names = ", ".join(f'"{t.name}"' for t in tools) or "none"
    raise ToolValidationError(
        f'Tool "{tool_call.name}" not found (available tools: {names})', tool_call.name
    )


def validate_tool_arguments(tool: Tool, tool_call: ToolCall) -> dict[str, Any]:
    """The arguments of ``tool_call`` validated against ``tool.parameters``, coerced.

    Returns a new dict (the call's own arguments are never modified). For a pydantic model the
    result is ``model_dump()`` of the validated model (defaults filled in); for a JSON Schema
    dict it is the coerced arguments. Raises :class:`ToolValidationError` listing every problem.
    """
    arguments = tool_call.arguments
    params = tool.parameters
    if isinstance(params, dict):
        validator = _validator(params, tool.name)
        # The common case first: arguments that already fit need no coercion, only a copy
        # (unless a whole float may have to become an int); one check of the compiled schema.
        if validator.is_valid(arguments):
            copied = _copy_exact(arguments, 0)
            if copied is not _NO:
                return cast(dict[str, Any], copied)
        coerced: dict[str, Any] = _coerce(arguments, params, params, 0)
        if not validator.is_valid(coerced):
            errors = [(_error_path(e), e.message) for e in validator.iter_errors(coerced)]
            _fail(tool.name, errors, arguments)
        return coerced
    import pydantic

    try:
        model = params.model_validate(arguments)
    except pydantic.ValidationError as exc:
        _fail(
            tool.name,
            [("/".join(str(p) for p in e["loc"]) or "root", e["msg"]) for e in exc.errors()],
            arguments,
        )
    return model.model_dump()


def _fail(name: str, errors: list[tuple[str, str]], arguments: Any) -> NoReturn:
    lines = "\n".join(f"  - {path}: {message}" for path, message in errors)
    try:
        shown = json.dumps(arguments, indent=2, ensure_ascii=False, default=repr)
    except ValueError:  # a circular structure
        shown = repr(arguments)
    raise ToolValidationError(
        f'Validation failed for tool "{name}":\n{lines}\n\nReceived arguments:\n{shown}',
        name,
        errors,
        arguments,
    )


def _error_path(error: jsonschema_rs.ValidationError) -> str:
    import jsonschema_rs

    path = [str(p) for p in error.instance_path]
    kind = error.kind
    if isinstance(kind, jsonschema_rs.ValidationErrorKind.Required):
        path.append(str(kind.property))
    return "/".join(path) or "root"


# --------------------------------------------------------------------------- compiled schemas

_CACHE_SIZE = 512
# id(schema) -> (schema, validator). The schema is kept alive by the entry, so its id cannot be
# reused while cached; the identity check guards against a reused id after eviction.
_validators: OrderedDict[int, tuple[dict[str, Any], Any]] = OrderedDict()


def _no_remote_refs(uri: str) -> Any:
    raise ValueError(f"remote $ref {uri!r} is not fetched: tau does no network I/O for schemas")


def _validator(schema: dict[str, Any], tool_name: str) -> Any:
    """The compiled validator of ``schema``, compiled once per schema object."""
    entry = _validators.get(id(schema))
    if entry is not None and entry[0] is schema:
        _validators.move_to_end(id(schema))
        return entry[1]
    import jsonschema_rs

    try:
        validator = jsonschema_rs.validator_for(
            schema, validate_formats=True, retriever=_no_remote_refs
        )
    except (ValueError, jsonschema_rs.ReferencingError) as exc:
        raise ValueError(f'Tool "{tool_name}" has an invalid parameters schema: {exc}') from exc
    _validators[id(schema)] = (schema, validator)
    if len(_validators) > _CACHE_SIZE:
        _validators.popitem(last=False)
    return validator


# --------------------------------------------------------------------------- coercion

_MAX_DEPTH = 64  # $ref chains and nesting deeper than this are copied without coercion
_NUMBER_TEXT = re.compile(r"[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")
_INTEGER_TEXT = re.compile(r"[-+]?[0-9]+")
_NO: Any = object()  # "cannot be converted"


def _copy(value: Any) -> Any:
    """A fresh copy of JSON-like containers, so the result never aliases the input."""
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


def _copy_exact(value: Any, depth: int) -> Any:
    """A fresh copy of arguments that fit their schema, or ``_NO`` where coercion could still
    change something (a whole float, which an integer field turns into an int) or the nesting
    is deeper than coercion goes."""
    if isinstance(value, dict):
        if depth > _MAX_DEPTH:
            return _NO
        out = {}
        for key, item in value.items():
            item = _copy_exact(item, depth + 1)
            if item is _NO:
                return _NO
            out[key] = item
        return out
    if isinstance(value, list):
        if depth > _MAX_DEPTH:
            return _NO
        items = []
        for item in value:
            item = _copy_exact(item, depth + 1)
            if item is _NO:
                return _NO
            items.append(item)
        return items
    if isinstance(value, float) and value.is_integer():
        return _NO
    return value


def _resolve(schema: Any, root: dict[str, Any], depth: int) -> Any:
    """Follow local ``$ref`` pointers (``#/$defs/X``, ``#/definitions/X``) to their target."""
    while isinstance(schema, dict) and isinstance(schema.get("$ref"), str) and depth < _MAX_DEPTH:
        ref: str = schema["$ref"]
        if not ref.startswith("#"):
            return schema  # a remote ref: left to the validator, which reports it
        target: Any = root
        for part in ref[1:].split("/")[1:]:
            part = part.replace("~1", "/").replace("~0", "~")
            if isinstance(target, dict) and part in target:
                target = target[part]
            elif isinstance(target, list) and part.isdigit() and int(part) < len(target):
                target = target[int(part)]
            else:
                return schema
        if not isinstance(target, dict):
            return target
        if len(schema) > 1:  # keywords beside $ref (allowed since 2019-09) still apply
            target = {**target, **{k: v for k, v in schema.items() if k != "$ref"}}
        schema = target
        depth += 1
    return schema


def _json_type(value: Any) -> str:
    """The JSON Schema type of a value; an integral float counts as an integer, as in JSON."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "integer" if value.is_integer() else "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return "unknown"


def _declared_types(schema: Mapping[str, Any]) -> list[str]:
    """The types a schema allows: its ``type``, else the one type all its enum values share."""
    declared = schema.get("type")
    if isinstance(declared, str):
        return [declared]
    if isinstance(declared, list):
        return [t for t in declared if isinstance(t, str)]
    # Models send "5" for an enum of numbers just as for a number.
    options = [schema["const"]] if "const" in schema else schema.get("enum")
    if isinstance(options, list) and options:
        kinds = {_json_type(o) for o in options}
        if len(kinds) == 1:
            return list(kinds)
    return []


def _fits(kind: str, types: list[str]) -> bool:
    return kind in types or (kind == "integer" and "number" in types)


def _to_number(value: Any, integer: bool) -> Any:
    if value is None or isinstance(value, bool):
        return int(bool(value))  # Ajv: null -> 0, false -> 0, true -> 1
    number: Any = value
    if isinstance(value, str):
        text = value.strip()
        if not _NUMBER_TEXT.fullmatch(text):
            return _NO
        try:
            number = int(text) if _INTEGER_TEXT.fullmatch(text) else float(text)
        except ValueError:  # more digits than int() accepts
            return _NO
    if isinstance(number, float):
        if not math.isfinite(number):
            return _NO
        if integer:
            return int(number) if number.is_integer() else _NO
    return number if isinstance(number, int | float) else _NO


def _to_scalar(value: Any, target: str) -> Any:
    """``value`` converted to JSON type ``target`` by Ajv's coercion rules, or ``_NO``."""
    if target == "string":
        if value is None:
            return ""
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, int):
            return str(value)
        if isinstance(value, float) and math.isfinite(value):
            # JavaScript's String(): no ".0" on integral values below 1e21.
            return str(int(value)) if value.is_integer() and abs(value) < 1e21 else repr(value)
        return _NO
    if target == "number" or target == "integer":
        return _to_number(value, target == "integer")
    if target == "boolean":
        if value is None:
            return False
        if value == "true" or value == "false":
            return value == "true"
        if isinstance(value, int | float) and not isinstance(value, bool) and value in (0, 1):
            return value == 1
        return _NO
    if target == "null":
        if value == "" or value is False or (isinstance(value, int | float) and value == 0):
            return None
        return _NO
    return _NO


def _convert(value: Any, types: list[str]) -> Any:
    """``value`` as the first of ``types`` it can be converted to, else ``value`` itself."""
    for target in types:
        if target == "array" or target == "object":
            if isinstance(value, str):
                decoded = _decode_json(value)
                if _json_type(decoded) == target:
                    return decoded
            if target == "array" and not isinstance(value, dict | list):
                return [value]  # a scalar where an array is expected: a one-item array
            continue
        converted = _to_scalar(value, target)
        if converted is not _NO:
            return converted
    return value


def _coerce(value: Any, schema: Any, root: dict[str, Any], depth: int) -> Any:
    """A copy of ``value`` with primitives converted where ``schema`` asks for another type."""
    schema = _resolve(schema, root, depth)
    if depth > _MAX_DEPTH or not isinstance(schema, dict):
        return _copy(value)
    for sub in schema.get("allOf") or []:
        value = _coerce(value, sub, root, depth + 1)
    branches = (schema.get("anyOf") or []) + (schema.get("oneOf") or [])
    if branches:
        value = _coerce_branches(value, branches, root, depth + 1)

    types = _declared_types(schema)
    if types:
        if not _fits(_json_type(value), types):
            value = _convert(value, types)
        elif isinstance(value, float) and value.is_integer() and "integer" in types:
            value = int(value)  # 5.0 where an integer is asked for: the tool gets an int

    if isinstance(value, dict):
        props = schema.get("properties")
        props = props if isinstance(props, dict) else {}
        patterns = schema.get("patternProperties")
        patterns = patterns if isinstance(patterns, dict) else {}
        extra = schema.get("additionalProperties")
        out: dict[str, Any] = {}
        for key, item in value.items():
            sub = props.get(key, _NO)
            if sub is _NO:
                sub = next((s for p, s in patterns.items() if _search(p, key)), extra)
            out[key] = _coerce(item, sub, root, depth + 1)
        return out
    if isinstance(value, list):
        prefix = schema.get("prefixItems")
        items = schema.get("items")
        if isinstance(items, list):  # the tuple form of drafts 4 to 7
            prefix, items = items, schema.get("additionalItems")
        prefix = prefix if isinstance(prefix, list) else []
        return [
            _coerce(item, prefix[i] if i < len(prefix) else items, root, depth + 1)
            for i, item in enumerate(value)
        ]
    return value


def _coerce_branches(value: Any, branches: list[Any], root: dict[str, Any], depth: int) -> Any:
    """anyOf/oneOf: a value that has a branch's type follows that branch; any other value is
    converted to the first branch type it can take."""
    kind = _json_type(value)
    resolved = [b for b in (_resolve(b, root, depth) for b in branches) if isinstance(b, dict)]
    for branch in resolved:
        types = _declared_types(branch)
        if not types or _fits(kind, types):
            return _coerce(value, branch, root, depth)
    for branch in resolved:
        converted = _convert(value, _declared_types(branch))
        if converted is not value:
            return _coerce(converted, branch, root, depth)
    return _copy(value)


def _decode_json(text: str) -> Any:
    stripped = text.strip()
    if not stripped or stripped[0] not in "[{":
        return _NO
    try:
        return json.loads(stripped)
    except (ValueError, RecursionError):
        return _NO


def _search(pattern: str, key: str) -> bool:
    try:
        return re.search(pattern, key) is not None
    except re.error:
        return False
