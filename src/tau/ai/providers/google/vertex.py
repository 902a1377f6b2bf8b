"""``google-vertex``: Gemini on Vertex AI.

The body and stream are those of the Gemini API (:mod:`.request`, :mod:`.decoder`); this
module finds the endpoint and the credentials:

* With an API key (the ``api_key`` option or ``GOOGLE_CLOUD_API_KEY``) it is sent as
  ``x-goog-api-key``: to the project's endpoint when a project and location are known,
  otherwise to Vertex AI's express endpoint (``/v1/publishers/google/models/...``).
* Otherwise Application Default Credentials from ``google-auth`` (the ``[vertex]`` extra,
  imported only on this path) give a bearer token, refreshed when it expires.

Project: the ``project`` option, ``GOOGLE_CLOUD_PROJECT``, ``GCLOUD_PROJECT``, or the ADC's
own project. Location: the ``location`` option or ``GOOGLE_CLOUD_LOCATION``. ``global`` uses
the location-less host ``aiplatform.googleapis.com``. ``model.base_url`` is not used (the
host depends on the location), except that a non-``googleapis.com`` base URL (a proxy, a
test server) replaces the host.

``stream_function_call_arguments=True`` streams function-call arguments as the model writes
them (``toolConfig.functionCallingConfig.streamFunctionCallArguments``); :func:`stream_simple`
turns it on for Gemini 3 and later, the models Vertex AI serves it for.
"""

from __future__ import annotations

import asyncio
import os
import threading
from typing import Any, cast

from tau.ai.core.errors import ProviderError
from tau.ai.core.types import Context, Model
from tau.ai.lookup.env_keys import AUTHENTICATED
from tau.ai.providers.google.decoder import GoogleDecoder
from tau.ai.providers.google.options import GoogleVertexOptions, GoogleVertexSimpleOptions
from tau.ai.providers.google.request import request_body, simple_options
from tau.ai.streaming.adapter import ProviderRequest, launch_http
from tau.ai.streaming.event_stream import AssistantMessageEventStream
from tau.ai.streaming.headers import request_headers

__all__ = [
    "OPTIONS",
    "SIMPLE_OPTIONS",
    "adc_token",
    "build_request",
    "stream",
    "stream_simple",
    "stream_url",
]

OPTIONS = GoogleVertexOptions
SIMPLE_OPTIONS = GoogleVertexSimpleOptions

SCOPES = ("https://www.googleapis.com/auth/cloud-platform",)
_EXTRA_HINT = "pip install 'tau[vertex]'"


def _env(*names: str) -> str | None:
    for name in names:
        value = os.environ.get(name)
        if value:
            return value
    return None


def api_key(options: GoogleVertexOptions) -> str | None:
    """A Vertex API key, never the ``<authenticated>`` marker of an environment lookup."""
    key = options.get("api_key")
    if key and key != AUTHENTICATED:
        return str(key)
    return _env("GOOGLE_CLOUD_API_KEY")


def resolve_project(options: GoogleVertexOptions) -> str | None:
    """The ``project`` option, else ``GOOGLE_CLOUD_PROJECT`` / ``GCLOUD_PROJECT``."""
    return options.get("project") or _env("GOOGLE_CLOUD_PROJECT", "GCLOUD_PROJECT")


def resolve_location(options: GoogleVertexOptions) -> str | None:
    """The ``location`` option, else ``GOOGLE_CLOUD_LOCATION``."""
    return options.get("location") or _env("GOOGLE_CLOUD_LOCATION")


def _host(model: Model, location: str | None) -> str:
    base = (model.base_url or "").rstrip("/")
    if base and "googleapis.com" not in base:
        return base
    if location is None or location == "global":
        return "https://aiplatform.googleapis.com"
    return f"https://{location}-aiplatform.googleapis.com"


def stream_url(model: Model, project: str | None, location: str | None) -> str:
    """The streaming endpoint: the project's, or the express one without a project."""
    host = _host(model, location)
    if project and location:
        path = f"v1/projects/{project}/locations/{location}/publishers/google/models/{model.id}"
    else:
        path = f"v1/publishers/google/models/{model.id}"
    return f"{host}/{path}:streamGenerateContent?alt=sse"


class _Adc:
    """Application Default Credentials, loaded once and refreshed when expired."""

    credentials: Any = None
    project: str | None = None
    # A thread lock, not an asyncio one: calls may come from several event loops.
    lock = threading.Lock()


def _load_adc() -> tuple[Any, str | None]:
    try:
        import google.auth
        import google.auth.exceptions
        import google.auth.transport.requests
    except ImportError as exc:
        raise ProviderError(
            "Vertex AI without an API key needs Application Default Credentials from "
            f"google-auth, which is not installed ({exc}): {_EXTRA_HINT}, or set "
            "GOOGLE_CLOUD_API_KEY"
        ) from None
    try:
        credentials, project = google.auth.default(scopes=list(SCOPES))
    except google.auth.exceptions.DefaultCredentialsError as exc:
        raise ProviderError(
            f"No Google Application Default Credentials ({exc}); run "
            "`gcloud auth application-default login` or set GOOGLE_CLOUD_API_KEY"
        ) from None
    return credentials, project


def _refresh(credentials: Any) -> None:
    import google.auth.exceptions
    import google.auth.transport.requests

    try:
        credentials.refresh(google.auth.transport.requests.Request())
    except google.auth.exceptions.GoogleAuthError as exc:
        raise ProviderError(f"Refreshing Google credentials failed: {exc}") from None


def _token() -> tuple[str, str | None]:
    with _Adc.lock:
        if _Adc.credentials is None:
            _Adc.credentials, _Adc.project = _load_adc()
        credentials = _Adc.credentials
        if not credentials.valid:
            _refresh(credentials)
        return str(credentials.token), _Adc.project


async def adc_token() -> tuple[str, str | None]:
    """A valid ADC access token and the ADC's project (file reads and refreshes off-loop)."""
    return await asyncio.to_thread(_token)


def build_request(model: Model, context: Context, options: GoogleVertexOptions) -> ProviderRequest:
    """The streaming request. With an API key it is complete; without one, :func:`stream`
    completes it with Application Default Credentials (which may also name the project)."""
    key = api_key(options)
    auth = {"x-goog-api-key": key} if key else None
    return ProviderRequest(
        stream_url(model, resolve_project(options), resolve_location(options)),
        request_headers(model, options, auth),
        request_body(model, context, options),
    )


def stream(
    model: Model, context: Context, options: GoogleVertexOptions
) -> AssistantMessageEventStream:
    """Stream one Gemini response from Vertex AI; see the module docstring for auth."""

    async def authorize(request: ProviderRequest, body: bytes) -> ProviderRequest:
        if api_key(options):
            return request
        token, adc_project = await adc_token()
        project = resolve_project(options) or adc_project
        if not project:
            raise ProviderError(
                "Vertex AI needs a project: pass project= or set GOOGLE_CLOUD_PROJECT"
            )
        location = resolve_location(options)
        if not location:
            raise ProviderError(
                "Vertex AI needs a location: pass location= or set GOOGLE_CLOUD_LOCATION "
                "(for example us-central1 or global)"
            )
        auth = {"authorization": f"Bearer {token}"}
        return ProviderRequest(
            stream_url(model, project, location),
            request_headers(model, options, auth),
            request.body,
        )

    return launch_http(model, context, options, build_request, GoogleDecoder, authorize=authorize)


def stream_simple(
    model: Model, context: Context, options: GoogleVertexSimpleOptions
) -> AssistantMessageEventStream:
    """:func:`stream` with the unified ``reasoning`` level mapped to Gemini thinking
    (``project`` and ``location`` are passed on)."""
    return stream(model, context, cast(GoogleVertexOptions, simple_options(model, options)))
