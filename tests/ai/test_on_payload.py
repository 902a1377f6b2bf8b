"""The on_payload hook: sees the request body, may replace it, and its errors end the stream."""

from __future__ import annotations

from typing import Any

from tau.ai import Context, Model, UserMessage, stream
from tau.ai.providers.faux import FauxResponse, faux_calls, faux_model, faux_payloads

from .stream_checks import check_grammar

CTX = Context([UserMessage("hello")], system_prompt="be brief")


async def test_hook_sees_the_payload_and_the_model() -> None:
    model = faux_model([FauxResponse(["ok"])])
    seen: list[tuple[dict[str, Any], Model]] = []

    def hook(payload: dict[str, Any], m: Model) -> None:
        seen.append((payload, m))

    message = await stream(model, CTX, on_payload=hook, max_tokens=77, temperature=0.5).result()
    assert message.stop_reason == "stop"
    ((payload, m),) = seen
    assert m is model
    assert payload["model"] == "faux-model"
    assert payload["systemPrompt"] == "be brief"
    assert payload["messages"][0]["content"] == "hello"
    assert (payload["max_tokens"], payload["temperature"]) == (77, 0.5)
    assert faux_payloads(model) == [payload]  # None keeps the payload


async def test_returned_dict_replaces_the_payload_sync_and_async() -> None:
    model = faux_model([FauxResponse(["a"]), FauxResponse(["b"])])

    def sync_hook(payload: dict[str, Any], m: Model) -> dict[str, Any]:
        return {**payload, "injected": "sync"}

    async def async_hook(payload: dict[str, Any], m: Model) -> dict[str, Any]:
        return {"replaced": True}

    await stream(model, CTX, on_payload=sync_hook).result()
    await stream(model, CTX, on_payload=async_hook).result()
    first, second = faux_payloads(model)
    assert first["injected"] == "sync" and first["messages"]
    assert second == {"replaced": True}


async def test_raising_hook_becomes_an_error_event() -> None:
    model = faux_model([FauxResponse(["never sent"])])

    def hook(payload: dict[str, Any], m: Model) -> None:
        raise ValueError("payload rejected by policy")

    s = stream(model, CTX, on_payload=hook)
    events = [e async for e in s]
    check_grammar(events)
    assert events[-1].type == "error" and events[-1].reason == "error"
    assert events[-1].error.error_message == "payload rejected by policy"
    # The request was never "sent": no scripted response was used.
    assert faux_calls(model) == [] and faux_payloads(model) == []


async def test_raising_async_hook_becomes_an_error_event() -> None:
    model = faux_model([FauxResponse(["never sent"])])

    async def hook(payload: dict[str, Any], m: Model) -> None:
        raise RuntimeError("async hook failed")

    message = await stream(model, CTX, on_payload=hook).result()
    assert message.stop_reason == "error"
    assert message.error_message == "async hook failed"


async def test_hook_returning_a_non_dict_is_a_clear_error() -> None:
    model = faux_model([FauxResponse(["x"])])
    message = await stream(model, CTX, on_payload=lambda p, m: "oops").result()  # type: ignore[arg-type,return-value]
    assert message.stop_reason == "error"
    assert message.error_message == "on_payload must return a dict or None, not str"
