"""calculate_cost: prices per million tokens, cache tokens priced once at their own rate."""

from __future__ import annotations

import pytest

from tau.ai import Context, Model, ModelCost, UserMessage, complete
from tau.ai.adapters import calculate_cost
from tau.ai.core.types import Usage
from tau.ai.providers.faux import FauxResponse, faux_model, text


def _model(**prices: float) -> Model:
    model = faux_model()
    model.cost = ModelCost(**prices)
    return model


def test_cache_tokens_are_not_billed_as_input() -> None:
    # Sonnet prices: $3 in, $15 out, $0.30 cache read, $3.75 cache write per million tokens.
    model = _model(input=3, output=15, cache_read=0.3, cache_write=3.75)
    usage = Usage(input=1_000, output=200, cache_read=9_000, cache_write=500)
    cost = calculate_cost(model, usage)
    assert cost.input == pytest.approx(0.003)  # 1 000 × 3 / 1e6, not (1 000 + 9 500) × 3 / 1e6
    assert cost.output == pytest.approx(0.003)
    assert cost.cache_read == pytest.approx(0.0027)
    assert cost.cache_write == pytest.approx(0.001875)
    assert cost.total == pytest.approx(0.010575)
    # The double-counting bug would bill input as 10 500 tokens: 0.0315 for input alone.
    assert cost.total < 0.0315


def test_fills_usage_cost_in_place_and_returns_it() -> None:
    usage = Usage(input=2_000_000, output=500_000)
    cost = calculate_cost(_model(input=0.5, output=2), usage)
    assert cost is usage.cost
    assert (usage.cost.input, usage.cost.output, usage.cost.total) == pytest.approx((1.0, 1.0, 2.0))


def test_multiplier_scales_every_component_and_the_total() -> None:
    model = _model(input=3, output=15, cache_read=0.3, cache_write=3.75)
    usage = Usage(input=1_000, output=200, cache_read=9_000, cache_write=500)
    cost = calculate_cost(model, usage, 0.5)
    assert (cost.input, cost.output, cost.cache_read, cost.cache_write) == pytest.approx(
        (0.0015, 0.0015, 0.00135, 0.0009375)
    )
    assert cost.total == pytest.approx(0.0052875)


def test_recalculation_replaces_earlier_values() -> None:
    model = _model(input=1, output=1, cache_read=1, cache_write=1)
    usage = Usage(input=1_000_000, output=1_000_000, cache_read=1_000_000, cache_write=1_000_000)
    calculate_cost(model, usage)
    usage.input = 0
    calculate_cost(model, usage)
    assert usage.cost.input == 0
    assert usage.cost.total == pytest.approx(3.0)


def test_zero_prices_cost_nothing() -> None:
    cost = calculate_cost(_model(), Usage(input=10**9, output=10**9, cache_read=10**9))
    assert cost.total == 0


async def test_stream_usage_carries_cost() -> None:
    model = faux_model(
        [FauxResponse([text("hi")], usage=Usage(input=100, output=10, cache_read=1_000))]
    )
    model.cost = ModelCost(input=2, output=8, cache_read=0.2)
    message = await complete(model, Context([UserMessage("x")]))
    assert message.usage.cost.input == pytest.approx(0.0002)
    assert message.usage.cost.output == pytest.approx(0.00008)
    assert message.usage.cost.cache_read == pytest.approx(0.0002)
    assert message.usage.cost.total == pytest.approx(0.00048)
