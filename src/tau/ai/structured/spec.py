"""What the output must be: :class:`OutputSpec` resolves an ``output_type`` once.

An ``output_type`` is a pydantic model, any type a pydantic ``TypeAdapter`` accepts
(``list[City]``, a ``Literal``, a ``TypedDict``, a dataclass, a union), or a JSON Schema dict.
The spec holds the JSON Schema the model is shown, validates a complete answer into the value
(or raises :class:`OutputValidationError` with a message written for the model), and
validates partial answers while they stream.

On the wire the output is always a JSON object, because tool arguments and the providers'
strict schemas must be objects: a type whose schema is not an object (``list[City]``, a
union, ``int``) is wrapped as ``{"response": ...}`` and unwrapped on validation.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, Generic, TypeVar, cast, overload

from tau.ai.capabilities.validation import _copy, _error_path, _no_remote_refs
from tau.ai.core.options import OutputSchema
from tau.ai.core.types import Tool

T = TypeVar("T")

OUTPUT_TOOL_NAME = "final_result"
"""The name of the output tool of ``tool`` mode."""

WRAPPER_KEY = "response"
"""The one property of the object a non-object output is wrapped in."""

_NAME = re.compile(r"[^a-zA-Z0-9_-]+")
_MAX_SHOWN = 2000  # characters of a rejected answer quoted back to the model
MAX_OUTPUT_DEPTH = 100
"""Outputs nested deeper are rejected (and not copied or validated): validating and copying
recurse, and a recursive schema (``{"$ref": "#"}``) allows any depth."""


class OutputValidationError(ValueError):
    """An answer that does not fit the output type.

    ``str(error)`` is the message sent back to the model; ``errors`` are the ``(path,
    message)`` pairs; ``raw`` is the text (or value) that was validated.
    """

    def __init__(self, message: str, errors: list[tuple[str, str]], raw: Any) -> None:
        super().__init__(message)
        self.errors = errors
        self.raw = raw


class OutputSpec(Generic[T]):
    """An ``output_type`` resolved into a JSON Schema, a name and validators.

    Build one with :meth:`of` (cheap to call again with the same spec). ``json_schema`` is
    the wire schema (an object), ``name`` a provider-safe name, ``wrapped`` whether the value
    travels as ``{"response": value}``.
    """

    __slots__ = (
        "_adapter",
        "_partial_adapter",
        "_validator",
        "description",
        "json_schema",
        "name",
        "output_type",
        "wrapped",
    )

    def __init__(
        self,
        output_type: type[T] | Any,
        *,
        name: str | None = None,
        description: str | None = None,
    ) -> None:
        self.output_type = output_type
        self._adapter: Any = None
        self._partial_adapter: Any = None
        self._validator: Any = None
        if isinstance(output_type, str):
            # pydantic would read it as a forward reference to a type name.
            raise TypeError(
                "output_type is a str: pass a type, or a JSON Schema dict (json.loads a "
                "schema's text first)"
            )
        if isinstance(output_type, Mapping):
            schema = _check_schema(dict(output_type))
            self._validator = _compile(schema)
            default_name = schema.get("title")
            description = description or schema.get("description")
        else:
            from pydantic import PydanticSchemaGenerationError, PydanticUserError, TypeAdapter

            try:
                self._adapter = TypeAdapter(output_type)
                schema = self._adapter.json_schema()
            except (PydanticSchemaGenerationError, PydanticUserError, TypeError) as exc:
                raise TypeError(
                    f"output_type {output_type!r} is neither a type pydantic can validate nor "
                    f"a JSON Schema dict: {exc}"
                ) from exc
            default_name = getattr(output_type, "__name__", None)
            doc = getattr(output_type, "__doc__", None) if isinstance(output_type, type) else None
            description = description or schema.get("description") or _own_doc(doc)
        schema = _inline_root(schema)
        self.wrapped = not _is_object_schema(schema)
        self.json_schema: dict[str, Any] = _wrap(schema) if self.wrapped else schema
        self.name = _safe_name(name or default_name or "output")
        self.description: str | None = description

    @overload
    @classmethod
    def of(cls, output_type: OutputSpec[T]) -> OutputSpec[T]: ...
    @overload
    @classmethod
    def of(cls, output_type: type[T]) -> OutputSpec[T]: ...
    @overload
    @classmethod
    def of(cls, output_type: Any) -> OutputSpec[Any]: ...
    @classmethod
    def of(cls, output_type: Any) -> OutputSpec[Any]:
        """``output_type`` as a spec (a spec is returned as it is)."""
        if isinstance(output_type, OutputSpec):
            return output_type
        return cls(output_type)

    # ------------------------------------------------------------------ what the model sees

    @property
    def tool(self) -> Tool:
        """The output tool of ``tool`` mode: calling it with the output as arguments ends the
        answer."""
        text = f"Deliver the final answer ({self.name})."
        if self.description:
            text = f"{text} {self.description}"
        return Tool(OUTPUT_TOOL_NAME, text, self.json_schema)

    @property
    def output_schema(self) -> OutputSchema:
        """The ``output_schema`` option asking an adapter for native structured output."""
        option: OutputSchema = {"name": self.name, "schema": self.json_schema}
        if self.description:
            option["description"] = self.description
        return option

    @property
    def instructions(self) -> str:
        """What ``prompted`` mode adds to the system prompt."""
        from tau.ai.providers.output_schema import output_instructions

        return output_instructions(self.output_schema)

    # ------------------------------------------------------------------ validation

    def validate_json(self, text: str) -> T:
        """The value of a complete JSON answer; :class:`OutputValidationError` if it does not
        fit."""
        if self._adapter is not None and not self.wrapped:
            # pydantic's own JSON parsing: one pass, no intermediate dicts.
            from pydantic import ValidationError

            try:
                return cast(T, self._adapter.validate_json(text))
            except ValidationError as exc:
                raise _error(_pydantic_errors(exc), text) from None
        try:
            data = json.loads(text)
        except (ValueError, RecursionError) as exc:
            raise _error([("root", f"not valid JSON: {exc}")], text) from None
        return self.validate_object(data, raw=text)

    def validate_object(self, data: Any, *, raw: Any = None) -> T:
        """The value of a decoded wire object (unwrapped if :attr:`wrapped`)."""
        shown = data if raw is None else raw
        if _deeper_than(data, MAX_OUTPUT_DEPTH):
            raise _error([("root", f"nested deeper than {MAX_OUTPUT_DEPTH} levels")], shown)
        if self.wrapped:
            if not isinstance(data, dict) or WRAPPER_KEY not in data:
                raise _error([("root", f'expected an object with the key "{WRAPPER_KEY}"')], shown)
            data = data[WRAPPER_KEY]
        if self._adapter is None:
            errors = [(_error_path(e), e.message) for e in self._validator.iter_errors(data)]
            if errors:
                raise _error(errors, shown)
            return cast(T, data)
        from pydantic import ValidationError

        try:
            return cast(T, self._adapter.validate_python(data))
        except ValidationError as exc:
            raise _error(_pydantic_errors(exc), shown) from None

    def validate_partial(self, data: dict[str, Any]) -> tuple[bool, Any]:
        """``(True, value)`` for the partial wire object ``data`` as far as it validates, or
        ``(False, None)`` when it does not validate yet.

        A pydantic type is validated with pydantic's partial validation
        (``experimental_allow_partial``) against its partial form, in which every field of a
        model, dataclass or ``TypedDict`` may be missing: a partial model is an instance of
        ``Partial<Name>``, with ``None`` for what has not arrived. A JSON Schema output's
        partial is a copy of the object so far.
        """
        if _deeper_than(data, MAX_OUTPUT_DEPTH):
            return False, None  # the complete answer is rejected for it, with a retry
        if self.wrapped:
            if WRAPPER_KEY not in data:
                return False, None
            value: Any = data[WRAPPER_KEY]
        else:
            value = data
        if self._adapter is None:
            return True, _copy(value)
        if self._partial_adapter is None:
            from pydantic import TypeAdapter

            from tau.ai.structured.partial_type import partial_type

            self._partial_adapter = TypeAdapter(partial_type(self.output_type))
        from pydantic import ValidationError

        try:
            return True, self._partial_adapter.validate_python(
                value, experimental_allow_partial=True
            )
        except ValidationError:
            return False, None

    def __repr__(self) -> str:
        return f"OutputSpec({self.name!r}, wrapped={self.wrapped})"

    def __reduce__(self) -> tuple[Any, ...]:
        # The compiled validator cannot be pickled: a spec travels (to a Ray worker) as what
        # it was built from, and is compiled again there.
        return (_rebuild_spec, (self.output_type, self.name, self.description))


# --------------------------------------------------------------------------- helpers


def _rebuild_spec(output_type: Any, name: str, description: str | None) -> OutputSpec[Any]:
    return OutputSpec(output_type, name=name, description=description)


def _own_doc(doc: str | None) -> str | None:
    # BaseModel's own docstring is inherited by models without one: it says nothing here.
    if not doc or doc.startswith("!!! abstract"):
        return None
    return " ".join(doc.split()) or None


def _safe_name(name: str) -> str:
    return _NAME.sub("_", name).strip("_")[:64] or "output"


def _inline_root(schema: dict[str, Any]) -> dict[str, Any]:
    """A recursive model's schema is a ``$ref`` to its own definition: inline that, so the
    root is the object itself (the definition stays for the inner references)."""
    ref = schema.get("$ref")
    defs = schema.get("$defs")
    if len(schema) != 2 or not isinstance(ref, str) or not isinstance(defs, dict):
        return schema
    target = defs.get(ref.removeprefix("#/$defs/"))
    if not ref.startswith("#/$defs/") or not isinstance(target, dict):
        return schema
    return {**target, "$defs": defs}


def _is_object_schema(schema: Mapping[str, Any]) -> bool:
    return schema.get("type") == "object" and not any(
        key in schema for key in ("anyOf", "oneOf", "allOf", "$ref")
    )


def _wrap(schema: dict[str, Any]) -> dict[str, Any]:
    inner = {k: v for k, v in schema.items() if k not in ("$defs", "definitions", "$schema")}
    wrapper: dict[str, Any] = {
        "type": "object",
        "properties": {WRAPPER_KEY: inner},
        "required": [WRAPPER_KEY],
        "additionalProperties": False,
    }
    # References point at the root ("#/$defs/X"), which is now the wrapper.
    for key in ("$defs", "definitions"):
        if key in schema:
            wrapper[key] = schema[key]
    return wrapper


def _check_schema(schema: dict[str, Any]) -> dict[str, Any]:
    import jsonschema_rs

    try:
        jsonschema_rs.meta.validate(schema)
    except jsonschema_rs.ValidationError as exc:
        raise ValueError(f"output_type is not a valid JSON Schema: {exc.message}") from None
    except (ValueError, jsonschema_rs.ReferencingError) as exc:
        raise ValueError(f"output_type is not a valid JSON Schema: {exc}") from None
    return schema


def _deeper_than(value: Any, limit: int) -> bool:
    """Whether ``value`` nests containers more than ``limit`` deep (without recursing)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list | tuple):
            children = item
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


def _compile(schema: dict[str, Any]) -> Any:
    import jsonschema_rs

    try:
        return jsonschema_rs.validator_for(schema, validate_formats=True, retriever=_no_remote_refs)
    except (ValueError, jsonschema_rs.ReferencingError) as exc:
        raise ValueError(f"output_type is not a usable JSON Schema: {exc}") from None


def _pydantic_errors(exc: Any) -> list[tuple[str, str]]:
    return [("/".join(str(p) for p in e["loc"]) or "root", e["msg"]) for e in exc.errors()]


def _error(errors: list[tuple[str, str]], raw: Any) -> OutputValidationError:
    lines = "\n".join(f"  - {path}: {message}" for path, message in errors)
    if isinstance(raw, str):
        shown = raw
    else:
        try:
            shown = json.dumps(raw, ensure_ascii=False, default=repr)
        except (ValueError, RecursionError):
            shown = repr(raw)
    if len(shown) > _MAX_SHOWN:
        shown = f"{shown[:_MAX_SHOWN]}… ({len(shown)} characters in all)"
    return OutputValidationError(
        f"The output does not match the required schema:\n{lines}\n\nReceived:\n{shown}",
        errors,
        raw,
    )
