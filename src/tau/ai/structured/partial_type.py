"""The partial form of a type: what a prefix of a valid answer validates as.

pydantic's partial validation (``experimental_allow_partial``) forgives an unfinished last item
of a list or dict, but not a missing required field of a model, dataclass or ``TypedDict``,
which every answer lacks until its end. The partial form makes every such field optional
(``None`` until it arrives), recursively through containers and unions, and drops
``Annotated`` constraints that a prefix cannot meet yet (``min_length``…).
"""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from typing import Annotated, Any, Union, get_args, get_origin, get_type_hints

from pydantic import BaseModel, ConfigDict, Field, create_model
from typing_extensions import TypedDict, is_typeddict

# Built with names and fields known only at run time, which the static signatures do not allow.
_typed_dict: Any = TypedDict
_create_model: Any = create_model

_CONTAINERS = {list, set, frozenset, tuple, dict}
_ABSTRACT = {
    typing.Sequence: list,
    typing.MutableSequence: list,
    typing.List: list,  # noqa: UP006
    typing.Set: set,  # noqa: UP006
    typing.AbstractSet: set,
    typing.Mapping: dict,
    typing.MutableMapping: dict,
    typing.Dict: dict,  # noqa: UP006
    typing.Tuple: tuple,  # noqa: UP006
}


def partial_type(tp: Any) -> Any:
    """The partial form of ``tp`` (``tp`` itself when nothing in it has required fields)."""
    try:
        return _cached(tp)
    except TypeError:  # an unhashable type expression (Annotated with a dict…): not cached
        return _partial(tp, set())


@functools.lru_cache(maxsize=256)
def _cached(tp: Any) -> Any:
    return _partial(tp, set())


def _partial(tp: Any, seen: set[Any]) -> Any:
    origin = get_origin(tp)
    if origin is Annotated:
        return _partial(get_args(tp)[0], seen)
    if origin in (Union, types.UnionType):
        return Union[tuple(_partial(arg, seen) for arg in get_args(tp))]  # noqa: UP007
    origin = _ABSTRACT.get(origin, origin)
    if origin in _CONTAINERS:
        args = get_args(tp)
        if not args:
            return tp
        return origin[tuple(a if a is Ellipsis else _partial(a, seen) for a in args)]
    if not isinstance(tp, type):
        return tp
    if tp in seen:
        return Any  # a recursive type: its nested occurrences are not checked while partial
    if issubclass(tp, BaseModel):
        fields = {
            name: (field.annotation, field.alias or name) for name, field in tp.model_fields.items()
        }
        return _partial_model(tp, fields, seen)
    if dataclasses.is_dataclass(tp):
        hints = get_type_hints(tp, include_extras=True)
        fields = {f.name: (hints.get(f.name, Any), f.name) for f in dataclasses.fields(tp)}
        return _partial_model(tp, fields, seen)
    if is_typeddict(tp):
        hints = get_type_hints(tp, include_extras=True)
        seen = seen | {tp}
        return _typed_dict(
            f"Partial{tp.__name__}",
            {name: _partial(hint, seen) for name, hint in hints.items()},
            total=False,
        )
    return tp


def _partial_model(tp: type, fields: dict[str, tuple[Any, str]], seen: set[Any]) -> Any:
    seen = seen | {tp}
    definitions: dict[str, Any] = {
        name: (Union[_partial(hint, seen), None], Field(default=None, alias=alias))  # noqa: UP007
        for name, (hint, alias) in fields.items()
    }
    return _create_model(
        f"Partial{tp.__name__}",
        __config__=ConfigDict(extra="ignore", populate_by_name=True),
        __module__=tp.__module__,
        **definitions,
    )
