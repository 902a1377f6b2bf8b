"""The one rule for the headers of a provider request.

Four layers, each overriding the one before it:

1. the adapter's defaults (``accept``, ``content-type``, protocol versions, betas…);
2. ``model.headers``, the catalog's or the user's per-model headers;
3. the authentication the adapter derived from the key or credentials;
4. the ``headers`` option of the call.

So a model can change a protocol default but never clobber the key the call authenticates
with, and the caller has the last word on everything. Header names are compared without
regard to case and sent in lower case, so ``Authorization`` in one layer and
``authorization`` in another are one header, never two.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tau.ai.core.types import Model

__all__ = ["JSON_EVENT_STREAM", "request_headers"]

JSON_EVENT_STREAM: Mapping[str, str] = {
    "accept": "text/event-stream",
    "content-type": "application/json",
}
"""The defaults of an adapter that posts JSON and reads server-sent events."""


def request_headers(
    model: Model,
    options: Mapping[str, Any],
    auth: Mapping[str, str] | None = None,
    defaults: Mapping[str, str] = JSON_EVENT_STREAM,
) -> dict[str, str]:
    """The headers to send: ``defaults`` < ``model.headers`` < ``auth`` < ``options["headers"]``."""
    headers = {name.lower(): value for name, value in defaults.items()}
    for layer in (model.headers, auth, options.get("headers")):
        if layer:
            for name, value in layer.items():
                headers[name.lower()] = value
    return headers
