"""``python -m tau.proxy``: serve :func:`tau.ai.stream_simple` over HTTP + SSE."""

from tau.proxy.server import main

raise SystemExit(main())
