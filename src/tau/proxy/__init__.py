"""tau.proxy: LLM calls through a server that keeps the provider keys, on ``tau.ai`` alone.

* :func:`stream_proxy` (the client, :mod:`tau.proxy.client`): the signature of
  :func:`tau.ai.stream_simple` plus ``proxy_url`` and ``auth_token``, a drop-in ``stream_fn``;
* :mod:`tau.proxy.server`: the Starlette app (:func:`tau.proxy.server.create_proxy_app`) and
  ``python -m tau.proxy`` (needs the ``[server]`` extra, imported only there);
* :mod:`tau.proxy.sse`: the server's request limits and SSE relay (a client that stalls is
  dropped, one that leaves stops its source), public for other tau servers (``tau.ui``).
"""

from tau.proxy.client import *  # noqa: F403 (the client's public names are the package's)
from tau.proxy.client import __all__ as __all__
