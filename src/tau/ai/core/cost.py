"""Cost of a response from the model's prices."""

from __future__ import annotations

from tau.ai.core.types import Model, Usage, UsageCost


def calculate_cost(model: Model, usage: Usage, multiplier: float = 1.0) -> UsageCost:
    """Fill ``usage.cost`` from ``model.cost`` (USD per million tokens) and return it.

    ``usage.input`` is the non-cached prompt tokens only: cache reads and writes are priced at
    their own rates and never counted twice. ``multiplier`` scales every price (a service
    tier's discount or surcharge relative to the catalog's standard prices).
    """
    price = model.cost
    cost = usage.cost
    cost.input = price.input * usage.input / 1e6 * multiplier
    cost.output = price.output * usage.output / 1e6 * multiplier
    cost.cache_read = price.cache_read * usage.cache_read / 1e6 * multiplier
    cost.cache_write = price.cache_write * usage.cache_write / 1e6 * multiplier
    cost.total = cost.input + cost.output + cost.cache_read + cost.cache_write
    return cost
