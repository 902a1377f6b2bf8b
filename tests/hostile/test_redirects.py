"""A provider endpoint that redirects, with a caller's client that follows redirects.

A redirect hands the request, headers included, to another address. ``httpx2`` drops only
``Authorization`` when the origin changes; the key of Anthropic (``x-api-key``), Gemini and
Vertex (``x-goog-api-key``), Azure (``api-key``), a SigV4 signature, or a header the caller
added for its gateway would travel on. tau's rule, in ``tau.ai.streaming.http``: provider requests never
follow a redirect, so no header of any scheme reaches the next address; the redirect is a
clear error naming where it pointed.

Each case is one adapter against two servers on 127.0.0.1 with different ports (different
origins): the first answers ``307`` to the second.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx2
import pytest

from tau.ai import Context, Model, UserMessage, complete
from tau.proxy import stream_proxy
from tests.ai.servers import LocalServer, Reply
from tests.ai.streaming.test_headers import ADAPTERS, KEY, Adapter

CUSTOM = {"x-gateway-token": "gw-secret-456"}
"""An auth header of the caller's own (a gateway's), sent with the ``headers`` option."""


@pytest.fixture
async def following() -> AsyncIterator[httpx2.AsyncClient]:
    """A caller-supplied client that follows redirects."""
    client = httpx2.AsyncClient(follow_redirects=True)
    yield client
    await client.aclose()


def _redirecting(status: int, target: LocalServer) -> Reply:
    return Reply(status, {"location": f"{target.url}/v1/elsewhere?k=1", "content-length": "0"})


def _model(adapter: Adapter, base_url: str) -> Model:
    return Model(
        id="model-1", name="m", api=adapter.api, provider=adapter.provider, base_url=base_url
    )


def _refused(message: str, target: LocalServer) -> None:
    assert "redirected" in message and f"{target.url}/v1/elsewhere" in message, message
    assert "?k=1" not in message  # a query string can hold a token: not repeated


@pytest.mark.parametrize("status", [307, 308, 302])
@pytest.mark.parametrize("adapter", ADAPTERS, ids=lambda a: a.api)
async def test_a_redirect_to_another_origin_carries_no_key(
    adapter: Adapter, status: int, following: httpx2.AsyncClient
) -> None:
    async with LocalServer() as target:
        async with LocalServer([_redirecting(status, target)]) as origin:
            # Hostile: the endpoint redirects to another origin; the client would follow.
            message = await complete(
                _model(adapter, origin.url + "/v1"),
                Context([UserMessage("hi")]),
                api_key=KEY,
                client=following,
                max_retries=0,
                headers=CUSTOM,
            )  # type: ignore[arg-type]
        assert len(origin.requests) == 1
        # The first hop did get the key (it is the configured endpoint)...
        assert origin.requests[0].headers[adapter.auth_name] == adapter.auth_value
    # Clean: ...the other origin got nothing at all (so no header of any scheme), and the
    # stream ends with an error naming the redirect.
    assert target.requests == []
    assert message.stop_reason == "error"
    _refused(message.error_message or "", target)


async def test_a_redirect_of_a_sigv4_signed_bedrock_request(
    monkeypatch: pytest.MonkeyPatch, tmp_path: object, following: httpx2.AsyncClient
) -> None:
    pytest.importorskip("botocore")
    from tau.ai.providers.bedrock import auth as bedrock_auth

    for name in ("AWS_PROFILE", "AWS_BEARER_TOKEN_BEDROCK", "AWS_BEDROCK_SKIP_AUTH"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", f"{tmp_path}/config")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", f"{tmp_path}/credentials")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret")
    monkeypatch.setenv("AWS_SESSION_TOKEN", "session-token")
    monkeypatch.setattr(bedrock_auth, "_sessions", {})
    bedrock = next(a for a in ADAPTERS if a.api == "bedrock-converse-stream")
    async with LocalServer() as target:
        async with LocalServer([_redirecting(307, target)]) as origin:
            # Hostile: a SigV4-signed request (no bearer key) redirected to another origin.
            message = await complete(
                _model(bedrock, origin.url),
                Context([UserMessage("hi")]),
                client=following,
                max_retries=0,
            )
        signed = origin.requests[0].headers
        assert signed["authorization"].startswith("AWS4-HMAC-SHA256")
        assert signed["x-amz-security-token"] == "session-token"
    # Clean: neither the signature nor the session token went anywhere else.
    assert target.requests == []
    _refused(message.error_message or "", target)


async def test_the_proxy_client_does_not_follow_a_redirect(
    following: httpx2.AsyncClient,
) -> None:
    async with LocalServer() as target:
        async with LocalServer([_redirecting(307, target)]) as proxy:
            # Hostile: the proxy URL redirects; the proxy token would follow.
            final = await stream_proxy(
                _model(ADAPTERS[0], ""),
                Context([UserMessage("hi")]),
                proxy_url=proxy.url,
                auth_token="proxy-token",
                client=following,
                max_retries=0,
            ).result()
        assert proxy.requests[0].headers["authorization"] == "Bearer proxy-token"
    # Clean: the token stayed with the proxy; a proxy error names the redirect.
    assert target.requests == []
    assert (final.error_message or "").startswith("Proxy error")
    _refused(final.error_message or "", target)


async def test_a_same_origin_redirect_is_refused_too(following: httpx2.AsyncClient) -> None:
    # The rule has no exceptions: a provider endpoint does not redirect, and a base_url that
    # does is a configuration to fix, said once, rather than a hop to reason about.
    async with LocalServer() as origin:
        origin.add(Reply(307, {"location": f"{origin.url}/v2/messages", "content-length": "0"}))
        message = await complete(
            _model(ADAPTERS[0], origin.url),
            Context([UserMessage("hi")]),
            api_key=KEY,
            client=following,
            max_retries=0,
        )
    assert len(origin.requests) == 1
    assert "redirected" in (message.error_message or "")
    assert "base_url" in (message.error_message or "")
