"""Typed settings: one object from ``Agent``/the CLI/``complete`` down to the adapter.

``tau.ai.Settings`` is a ``TypedDict`` (pydantic-ai's ``ModelSettings`` is the model): the
common keys (``CommonSettings``: ``max_tokens``, ``temperature``, ``reasoning``,
``timeout``, ``max_retries``, ``headers``, ``tool_choice``…) and each provider's own keys under
its prefix (``anthropic_effort``, ``openai_service_tier``, ``bedrock_region``…)::

    settings = Settings(max_tokens=2000, reasoning="high", anthropic_effort="max")
    await complete(model, "hi", settings=settings)
    Agent(model=model, settings=settings)

A misspelt key is a ``TypeError`` where the settings are given (and a type checker's error
before that); a key of another provider is ignored by an adapter, so one object serves a
fallback across providers. A provider record's ``resolve`` turns settings into its options,
once per request (:meth:`tau.ai.lookup.provider.Provider.resolve`), applying the one
``max_tokens`` default written here (:func:`default_max_tokens`).

The types are generated from the provider records into :mod:`tau.ai.core.settings_types`
(loaded when first used: ``import tau.ai`` does not need them); this module holds the rules.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tau.ai.core.types import Model

__all__ = ["MAX_TOKENS_DEFAULT_CAP", "default_max_tokens", "request_max_tokens"]

MAX_TOKENS_DEFAULT_CAP = 32_000
"""The default ``max_tokens`` is the model's limit, but no more than this."""


def default_max_tokens(model: Model) -> int:
    """The ``max_tokens`` of a request that does not set it: the model's output limit, capped
    at :data:`MAX_TOKENS_DEFAULT_CAP` (a long answer must be asked for)."""
    return max(1, min(model.max_tokens, MAX_TOKENS_DEFAULT_CAP))


def request_max_tokens(model: Model, options: Mapping[str, Any]) -> int:
    """The request's ``max_tokens`` option when it is a positive integer, else the default."""
    given = options.get("max_tokens")
    if isinstance(given, int) and not isinstance(given, bool) and given > 0:
        return given
    return default_max_tokens(model)
