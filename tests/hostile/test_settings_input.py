"""Hostile settings and provider records: wrong types, secrets in misspelt keys, broken
third-party entry points. Each is a clear error at the call or an error event, never a
traceback from inside tau, a secret echoed, or a break of the other providers."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tau.agent import Agent
from tau.ai import Context, Model, UserMessage, complete, complete_sync, stream
from tau.ai.lookup import registry
from tau.ai.providers.faux import FauxResponse, faux_model, text

CTX = Context([UserMessage("hi")])


@pytest.mark.parametrize("bad", ["max_tokens=5", [("max_tokens", 5)], 5])
def test_settings_that_are_not_a_dict_are_refused_at_the_call(bad: Any) -> None:
    model = faux_model()
    with pytest.raises(TypeError, match="settings must be a dict"):
        stream(model, CTX, settings=bad)
    with pytest.raises(TypeError, match="settings must be a dict"):
        Agent(model=model, settings=bad)


def test_a_misspelt_key_holding_a_secret_is_named_but_its_value_never_shown() -> None:
    secret = "sk-ant-very-secret-value"
    with pytest.raises(TypeError) as caught:
        Agent(model=faux_model(), settings={"api_kye": secret})  # type: ignore[typeddict-unknown-key]
    assert "'api_kye'" in str(caught.value) and "'api_key'" in str(caught.value)
    assert secret not in str(caught.value)


async def test_keys_that_are_not_strings_are_refused_not_crashed_on() -> None:
    with pytest.raises(TypeError, match="unknown setting"):
        await complete(faux_model(), CTX, settings={1: "x"})  # type: ignore[dict-item]


@pytest.fixture
def broken_entry_points(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    target = registry._Target
    points = {
        "not-a-record": target("not-a-record", "json:loads"),
        "raises-on-import": target("raises-on-import", "tests.hostile.no_such_module"),
        "wrong-api": target("wrong-api", "tau.ai.providers.faux.provider:PROVIDER"),
    }
    monkeypatch.setattr(registry, "_entry_points", lambda: points)
    monkeypatch.setattr(registry, "_entry_points_loaded", False)
    saved = dict(registry._registry)
    yield
    registry._registry.clear()
    registry._registry.update(saved)


@pytest.mark.usefixtures("broken_entry_points")
@pytest.mark.parametrize("api", ["not-a-record", "raises-on-import", "wrong-api"])
def test_a_broken_third_party_provider_is_its_calls_error_event(api: str) -> None:
    model = Model(id="m", name="m", api=api, provider="p", base_url="http://127.0.0.1:9")
    message = complete_sync(model, "hi")
    assert message.stop_reason == "error"
    assert "entry points) failed to load" in (message.error_message or "")
    # The others are untouched, and a settings check that loads every entry point still works.
    ok = faux_model([FauxResponse([text("fine")])])
    assert complete_sync(ok, "hi", settings={"max_tokens": 5}).stop_reason == "stop"
    with pytest.raises(TypeError, match="did you mean 'max_tokens'"):
        complete_sync(ok, "hi", settings={"max_tokns": 5})  # type: ignore[typeddict-unknown-key]
