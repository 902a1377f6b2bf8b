"""One header rule for every HTTP adapter, checked on the headers actually sent.

The rule (tau.ai.streaming.headers): adapter defaults < ``model.headers`` < the adapter's auth < the
call's ``headers`` option, names compared without regard to case, each header sent once.
"""

from __future__ import annotations

from dataclasses import dataclass

import httpx2
import pytest

from tau.ai import Context, Model, UserMessage, complete
from tau.ai.streaming.headers import request_headers


@dataclass(frozen=True)
class Adapter:
    api: str
    provider: str
    auth_name: str
    auth_value: str
    default_accept: str


KEY = "k-123"
ADAPTERS = [
    Adapter("anthropic-messages", "anthropic", "x-api-key", KEY, "application/json"),
    Adapter("openai-completions", "openai", "authorization", f"Bearer {KEY}", "text/event-stream"),
    Adapter("openai-responses", "openai", "authorization", f"Bearer {KEY}", "text/event-stream"),
    Adapter(
        "azure-openai-responses", "azure-openai-responses", "api-key", KEY, "text/event-stream"
    ),
    Adapter("google-generative-ai", "google", "x-goog-api-key", KEY, "text/event-stream"),
    Adapter("google-vertex", "google-vertex", "x-goog-api-key", KEY, "text/event-stream"),
    Adapter(
        "mistral-conversations", "mistral", "authorization", f"Bearer {KEY}", "text/event-stream"
    ),
    Adapter(
        "bedrock-converse-stream",
        "amazon-bedrock",
        "authorization",
        f"Bearer {KEY}",
        "application/vnd.amazon.eventstream",
    ),
]


async def sent_headers(
    adapter: Adapter, model_headers: dict[str, str], **options: object
) -> httpx2.Headers:
    """The headers of the one request ``adapter`` sends (the answer is a 400: no retries)."""
    seen: list[httpx2.Request] = []

    def answer(request: httpx2.Request) -> httpx2.Response:
        seen.append(request)
        return httpx2.Response(400, json={"error": {"message": "stop here"}})

    model = Model(
        id="model-1",
        name="m",
        api=adapter.api,
        provider=adapter.provider,
        base_url="http://127.0.0.1:9/v1",
        headers=model_headers or None,
    )
    async with httpx2.AsyncClient(transport=httpx2.MockTransport(answer)) as client:
        message = await complete(
            model,
            Context([UserMessage("hi")]),
            api_key=KEY,
            client=client,
            max_retries=0,
            **options,
        )  # type: ignore[arg-type]
    assert message.stop_reason == "error" and "stop here" in (message.error_message or "")
    assert len(seen) == 1
    return seen[0].headers


def once(headers: httpx2.Headers, name: str) -> str:
    values = headers.get_list(name)
    assert len(values) == 1, (name, values)
    return values[0]


@pytest.mark.parametrize("adapter", ADAPTERS, ids=lambda a: a.api)
async def test_defaults_then_model_then_auth(adapter: Adapter) -> None:
    plain = await sent_headers(adapter, {})
    assert once(plain, "accept") == adapter.default_accept
    assert once(plain, adapter.auth_name) == adapter.auth_value
    # The model overrides a default, never the authentication; names are case-insensitive.
    model_headers = {"Accept": "from-model", adapter.auth_name.title(): "from-model", "X-M": "m"}
    headers = await sent_headers(adapter, model_headers)
    assert once(headers, "accept") == "from-model"
    assert once(headers, adapter.auth_name) == adapter.auth_value
    assert once(headers, "x-m") == "m"


@pytest.mark.parametrize("adapter", ADAPTERS, ids=lambda a: a.api)
async def test_the_calls_headers_win_over_everything(adapter: Adapter) -> None:
    call = {adapter.auth_name.upper(): "from-call", "x-m": "call", "ACCEPT": "call/accept"}
    headers = await sent_headers(adapter, {"X-M": "m", "Accept": "from-model"}, headers=call)
    assert once(headers, adapter.auth_name) == "from-call"
    assert once(headers, "x-m") == "call"
    assert once(headers, "accept") == "call/accept"


def test_request_headers_layers() -> None:
    model = Model("m", "m", "x", "p", "http://h", headers={"A": "model", "B": "model"})
    headers = request_headers(
        model, {"headers": {"c": "call"}}, {"b": "auth", "C": "auth"}, {"a": "default", "d": "1"}
    )
    assert headers == {"a": "model", "b": "auth", "c": "call", "d": "1"}
