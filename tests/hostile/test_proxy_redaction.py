"""Upstream errors that echo the proxy server's key or name its upstream address.

A proxy exists so that clients never hold the provider key; an upstream 401 that repeats the
key, or a connection error that names the internal host, would hand it over anyway. Each
case makes the upstream fail that way; the client must get the error (status and gist kept)
with the key and the address taken out.
"""

from __future__ import annotations

import json

import pytest

from tau.ai import Context, Model, UserMessage
from tau.proxy import stream_proxy
from tests.ai.servers import JSON_HEADERS, LocalServer, Reply

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")

from tau.proxy.redact import Redactor
from tau.proxy.server import create_proxy_app
from tests.factories import serving
from tests.proxy.test_proxy import TOKEN, client_view

SERVER_KEY = "sk-server-secret-abc123"
ENV_KEY = "plainkey-0123456789"  # no recognisable shape: only knowing it finds it


def _served(base_url: str) -> Model:
    return Model(
        id="gpt-x", name="gpt-x", api="openai-completions", provider="openai",
        base_url=base_url + "/v1", max_tokens=1024,
    )  # fmt: skip


async def _through_proxy(served: Model, **stream_options: object) -> str:
    app = create_proxy_app(
        token=TOKEN, models=[served], stream_options={"max_retries": 0, **stream_options}
    )
    async with serving(app) as url:
        final = await stream_proxy(
            client_view(served), Context([UserMessage("hi")]), proxy_url=url, auth_token=TOKEN
        ).result()
    assert final.stop_reason == "error"
    return final.error_message or ""


def _leaks_nothing(message: str, *secrets: str) -> None:
    for secret in secrets:
        assert secret not in message, message
    assert "127.0.0.1" not in message, message


async def test_an_upstream_401_echoing_the_key_is_redacted() -> None:
    echo = {
        "error": {
            "message": f"Incorrect API key provided: Bearer {SERVER_KEY}. You can find your "
            "API key at https://platform.openai.com/account/api-keys.",
            "type": "invalid_request_error",
        }
    }
    async with LocalServer([Reply(401, JSON_HEADERS, [json.dumps(echo).encode()])]) as upstream:
        # Hostile: the upstream's 401 repeats the key the proxy sent, and a URL.
        message = await _through_proxy(_served(upstream.url), api_key=SERVER_KEY)
        port = str(upstream.port)
    # Clean: the status and the gist reach the client; the key and the URL do not.
    assert "401" in message and "Incorrect API key provided" in message, message
    assert "[redacted]" in message
    _leaks_nothing(message, SERVER_KEY, "abc123", "platform.openai.com", port)


async def test_a_key_from_the_servers_environment_is_redacted(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    body = {"error": {"message": f"key {ENV_KEY} was revoked", "type": "auth"}}
    async with LocalServer([Reply(403, JSON_HEADERS, [json.dumps(body).encode()])]) as upstream:
        # Hostile: the echoed key has no known shape; the proxy found it in its environment.
        message = await _through_proxy(_served(upstream.url))
    assert "was revoked" in message
    _leaks_nothing(message, ENV_KEY)


async def test_a_connection_error_does_not_name_the_upstream() -> None:
    # Hostile: the upstream is unreachable; the error names its address.
    async with LocalServer() as closed:
        base = closed.url
    message = await _through_proxy(_served(base), api_key=SERVER_KEY)
    # Clean: the client learns that the upstream could not be reached, not where it is.
    assert "Could not connect to [upstream]" in message, message
    _leaks_nothing(message, base.rsplit(":", 1)[1])


@pytest.mark.parametrize(
    ("text", "gone"),
    [
        ("Bearer abcdef0123456789xyz rejected", "abcdef0123456789xyz"),
        ("key AIzaSyA-0123456789abcdefghij invalid", "AIzaSyA-0123456789abcdefghij"),
        ("token ya29.a0AfH6SMBx-secret expired", "ya29.a0AfH6SMBx-secret"),
        ("access key AKIAIOSFODNN7EXAMPLE unknown", "AKIAIOSFODNN7EXAMPLE"),
        ('{"x-api-key": "anthropic-key-9876"}', "anthropic-key-9876"),
        ("Incorrect API key provided: sk-proj-****abcd", "sk-proj-****abcd"),
        ("upstream gateway.internal:8443 refused", "gateway.internal"),
        ("connect to [::1]:8080 failed", "[::1]:8080"),
    ],
)
def test_key_shapes_and_addresses(text: str, gone: str) -> None:
    redacted = Redactor([])(text)
    assert gone not in redacted, redacted
    assert "[redacted]" in redacted or "[upstream]" in redacted


def test_ordinary_text_is_kept() -> None:
    text = "This model's maximum context length is 8192 tokens; the token limit was passed."
    assert Redactor([])(text) == text
