"""Where a Bedrock request goes (the region) and how it is authenticated.

Credentials: ``AWS_BEARER_TOKEN_BEDROCK`` (or an ``api_key`` option other than the
``<authenticated>`` marker) is a Bedrock API key, sent as a bearer token; otherwise botocore's
standard chain (environment, profile files, SSO, container and instance roles) signs the
request with SigV4. ``AWS_BEDROCK_SKIP_AUTH=1`` sends it unsigned.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.session import Session

from tau.ai.core.errors import ProviderError
from tau.ai.core.types import Model
from tau.ai.lookup.env_keys import AUTHENTICATED
from tau.ai.streaming.adapter import ProviderRequest
from tau.ai.streaming.headers import request_headers

if TYPE_CHECKING:
    from tau.ai.providers.bedrock.options import BedrockOptions

__all__ = ["bearer_token", "resolve_region", "sign"]


def resolve_region(options: BedrockOptions) -> str:
    """The ``region`` option, else ``AWS_REGION``/``AWS_DEFAULT_REGION``, else the profile's
    configured region, else ``us-east-1``."""
    region = options.get("region") or os.environ.get("AWS_REGION")
    region = region or os.environ.get("AWS_DEFAULT_REGION")
    if region:
        return str(region)
    profile = options.get("profile") or os.environ.get("AWS_PROFILE")
    if profile:
        configured = _session(profile).get_config_variable("region")
        if configured:
            return str(configured)
    return "us-east-1"


def bearer_token(options: BedrockOptions) -> str | None:
    """A Bedrock API key: the ``api_key`` option (unless the marker), else the env var."""
    key = options.get("api_key")
    if key and key != AUTHENTICATED:
        return str(key)
    return os.environ.get("AWS_BEARER_TOKEN_BEDROCK") or None


_sessions: dict[str | None, Session] = {}


def _session(profile: str | None) -> Session:
    # One botocore session per profile: its config is read once, and refreshable
    # credentials are cached and reused across calls.
    session = _sessions.get(profile)
    if session is None:
        session = _sessions[profile] = Session(profile=profile)
    return session


def _frozen_credentials(profile: str | None) -> Any:
    credentials = _session(profile).get_credentials()
    if credentials is None:
        where = f"profile {profile!r}" if profile else "the standard AWS credential chain"
        raise ProviderError(
            f"No AWS credentials found in {where}: set AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, "
            "AWS_PROFILE, or AWS_BEARER_TOKEN_BEDROCK"
        )
    return credentials.get_frozen_credentials()


async def sign(
    model: Model,
    options: BedrockOptions,
    request: ProviderRequest,
    body: bytes,
    defaults: Mapping[str, str],
) -> ProviderRequest:
    """``request`` with the headers that authenticate it: as it is when it carries a bearer
    token (or ``AWS_BEDROCK_SKIP_AUTH=1``), else signed with SigV4 over ``body`` (the
    signature takes the auth layer of the header rule, above ``defaults``)."""
    if bearer_token(options) or os.environ.get("AWS_BEDROCK_SKIP_AUTH") == "1":
        return request
    profile = options.get("profile")
    # The chain may read files or ask an instance-metadata endpoint: keep it off the loop.
    credentials = await asyncio.to_thread(_frozen_credentials, profile)
    signed = AWSRequest(
        method="POST", url=request.url, data=body, headers={"Content-Type": "application/json"}
    )
    SigV4Auth(credentials, "bedrock", resolve_region(options)).add_auth(signed)
    auth = {k: v for k, v in signed.headers.items() if k.lower() != "content-type"}
    headers = request_headers(model, options, auth, defaults)
    return ProviderRequest(request.url, headers, request.body)
