"""Request bodies checked against the ``openai`` SDK's ``ResponseCreateParamsStreaming``."""

from __future__ import annotations

import json
from typing import Any

from openai.types.responses.response_create_params import ResponseCreateParamsStreaming
from pydantic import TypeAdapter
from pydantic_core import SchemaValidator


def _strict_validator() -> SchemaValidator:
    """The SDK's request type, validated strictly.

    As generated, pydantic ignores unknown keys of a TypedDict and validates ``Iterable``
    fields lazily (never, unless consumed): forbid the former, make the latter lists.
    """

    def tighten(node: Any) -> None:
        if isinstance(node, dict):
            if node.get("type") == "typed-dict":
                node["extra_behavior"] = "forbid"
            elif node.get("type") == "generator":
                node["type"] = "list"
            for value in node.values():
                tighten(value)
        elif isinstance(node, list):
            for value in node:
                tighten(value)

    schema = TypeAdapter(ResponseCreateParamsStreaming).core_schema
    tighten(schema)
    return SchemaValidator(schema)


_VALIDATOR = _strict_validator()


def validate_with_sdk(payload: dict[str, Any]) -> None:
    """Raise ``ValidationError`` unless ``payload`` (as JSON) is a valid streaming request."""
    _VALIDATOR.validate_python(json.loads(json.dumps(payload)))
