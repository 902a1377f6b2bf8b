"""The tau proxy server: :func:`tau.ai.stream_simple` over HTTP + SSE, keys kept server-side.

Needs the ``[server]`` extra (Starlette and uvicorn). Start it with one command::

    TAU_PROXY_TOKEN=s3cret python -m tau.proxy --port 8787 \\
        --model anthropic/claude-sonnet-4-5 --model openai/gpt-5-mini

(``--token`` works too, but a token on the command line is visible to other local users.)
Clients use :func:`tau.proxy.stream_proxy` with the same token. Or mount the ASGI app from
:func:`create_proxy_app` in your own server.

One endpoint, ``POST /api/stream`` (wire format in :mod:`tau.proxy.client`). Checks, in order,
before anything is streamed:

* ``401`` unless ``Authorization: Bearer <token>`` matches (compared in constant time; the
  body is not even read);
* ``413`` if the body is larger than ``max_body_bytes`` (by ``Content-Length`` or while
  reading a chunked body);
* ``408`` if the whole body has not arrived within ``body_timeout`` seconds (a client that
  promised a body and never sent it does not hold a connection for ever);
* ``400`` for a body that is not a valid request (the message says what is wrong);
* ``403`` unless the model (provider and id) is on the allow-list.

Hardening beyond pi's reference server: the request's model only *selects* one of the
server's own models (its base URL, headers and compat come from the server, so a client
cannot point the server's keys at another host), and only the options ``temperature``,
``maxTokens``, ``reasoning``, ``thinkingBudgets``, ``sessionId`` and ``outputSchema`` (native
structured output) are accepted (type-checked). A client that disconnects cancels its upstream
request. Error messages relayed to a client name neither the server's keys nor upstream
addresses (:mod:`tau.proxy.redact`).

Before the app: ``python -m tau.proxy`` serves with :func:`tau.proxy.guard.guarded_protocol`,
so request headers must arrive within ``--header-timeout`` seconds (``408``), and one address
may hold at most ``--max-waiting-per-ip`` connections that have not sent them (its token)
yet; a ``401`` closes its connection.

Bounded per client: while a client leaves more than ``max_buffered_events`` events unread,
the server stops reading the upstream response (TCP pushes back on the provider); a client
whose socket accepts nothing for ``send_timeout`` seconds is dropped, which cancels the
upstream request and closes its connection.
"""

from __future__ import annotations

import argparse
import hmac
import json
import math
import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from typing import Any, TypeAlias

try:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import Route
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError(
        "tau.proxy.server needs the [server] extra: pip install 'tau[server]'"
    ) from exc

import jiter

from tau.ai import (
    AssistantMessageEventStream,
    Model,
    SerializationError,
    find_model,
    load_context,
    load_model,
    stream_simple,
)
from tau.ai.adapters import describe_error
from tau.proxy.client import encode_proxy_event
from tau.proxy.guard import DEFAULT_HEADER_TIMEOUT, DEFAULT_MAX_WAITING_PER_IP, guarded_protocol
from tau.proxy.redact import Redactor, model_hosts, server_secrets
from tau.proxy.sse import EventStreamResponse, HTTPError, error_response, read_json

__all__ = [
    "DEFAULT_BODY_TIMEOUT",
    "DEFAULT_MAX_BODY_BYTES",
    "DEFAULT_MAX_BUFFERED_EVENTS",
    "DEFAULT_SEND_TIMEOUT",
    "StreamFn",
    "create_proxy_app",
    "main",
]

StreamFn: TypeAlias = Callable[
    ..., "AssistantMessageEventStream | Awaitable[AssistantMessageEventStream]"
]
"""What serves a request: ``(model, context, **options) -> stream`` (or an awaitable of one),
like :func:`tau.ai.stream_simple`, the default."""

DEFAULT_MAX_BODY_BYTES = 8 * 1024 * 1024
DEFAULT_BODY_TIMEOUT = 30.0
"""Seconds a client has to send its whole request body (else ``408``)."""
DEFAULT_MAX_BUFFERED_EVENTS = 256
"""Events a client may leave unread before the server stops reading upstream for it."""
DEFAULT_SEND_TIMEOUT = 60.0
"""Seconds a client may accept no data before it is dropped (and its upstream cancelled)."""
_LEVELS = ("minimal", "low", "medium", "high", "xhigh")


def _parse_options(raw: Any) -> dict[str, Any]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise HTTPError(400, "options must be an object")
    out: dict[str, Any] = {}
    for key, value in raw.items():
        if value is None:
            continue
        if key == "temperature":
            if not isinstance(value, int | float) or isinstance(value, bool):
                raise HTTPError(400, "options.temperature must be a number")
            # 1e999 parses as infinity, and a huge integer has no float at all.
            if (isinstance(value, int) and abs(value) > 1_000_000) or not math.isfinite(value):
                raise HTTPError(400, "options.temperature must be a finite number")
            out["temperature"] = float(value)
        elif key == "maxTokens":
            if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
                raise HTTPError(400, "options.maxTokens must be a positive integer")
            out["max_tokens"] = value
        elif key == "reasoning":
            if value not in _LEVELS:
                raise HTTPError(400, f"options.reasoning must be one of {', '.join(_LEVELS)}")
            out["reasoning"] = value
        elif key == "thinkingBudgets":
            if not isinstance(value, dict) or not all(
                k in _LEVELS and isinstance(v, int) and not isinstance(v, bool)
                for k, v in value.items()
            ):
                raise HTTPError(400, "options.thinkingBudgets must map levels to integers")
            out["thinking_budgets"] = dict(value)
        elif key == "sessionId":
            if not isinstance(value, str):
                raise HTTPError(400, "options.sessionId must be a string")
            out["session_id"] = value
        elif key == "outputSchema":
            out["output_schema"] = _output_schema(value)
        else:
            raise HTTPError(400, f"option {key!r} is not accepted by this proxy")
    return out


def _output_schema(value: Any) -> dict[str, Any]:
    if not (
        isinstance(value, dict)
        and isinstance(value.get("name"), str)
        and isinstance(value.get("schema"), dict)
        and isinstance(value.get("description", ""), str)
        and set(value) <= {"name", "schema", "description"}
    ):
        raise HTTPError(
            400, "options.outputSchema must be {name: string, schema: object, description?}"
        )
    return dict(value)


def create_proxy_app(
    *,
    token: str,
    models: Sequence[Model],
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    stream_fn: StreamFn | None = None,
    stream_options: Mapping[str, Any] | None = None,
    body_timeout: float | None = DEFAULT_BODY_TIMEOUT,
    max_buffered_events: int = DEFAULT_MAX_BUFFERED_EVENTS,
    send_timeout: float | None = DEFAULT_SEND_TIMEOUT,
) -> Starlette:
    """The ASGI app of the proxy.

    ``models`` is the allow-list: a request names a model by provider and id and is served
    with the server's own :class:`~tau.ai.Model`. ``stream_fn`` defaults to
    :func:`tau.ai.stream_simple` (keys from the server's environment); ``stream_options`` are
    added to every call (``api_key``, ``headers``, ``timeout``…) and win over the client's.
    ``body_timeout`` bounds the wait for a request body (``408``), ``max_buffered_events`` the
    events a slow client may leave unread before upstream reading pauses, ``send_timeout``
    how long a client may accept nothing before it is dropped (None: no limit).
    """
    if not token:
        raise ValueError("the proxy needs a non-empty token")
    if not models:
        raise ValueError("the proxy needs at least one allowed model")
    allowed = {(m.provider, m.id): m for m in models}
    expected = f"Bearer {token}".encode()
    extra = {"max_buffered_events": max_buffered_events, **(stream_options or {})}
    call: StreamFn = stream_fn or stream_simple

    async def stream_endpoint(request: Request) -> Response:
        given = request.headers.get("authorization", "").encode()
        if not hmac.compare_digest(given, expected):
            # Connection: close: an unauthenticated client does not keep the connection.
            return error_response(
                401,
                "missing or invalid bearer token",
                {"www-authenticate": "Bearer", "connection": "close"},
            )
        try:
            data = await read_json(request, max_body_bytes, body_timeout)
            try:
                requested = load_model(data.get("model"), "model")
                context = load_context(data.get("context"), "context")
            except SerializationError as exc:
                raise HTTPError(400, str(exc)) from exc
            options = _parse_options(data.get("options"))
            model = allowed.get((requested.provider, requested.id))
            if model is None:
                raise HTTPError(
                    403, f"model {requested.provider}/{requested.id} is not allowed on this proxy"
                )
        except HTTPError as exc:
            return error_response(exc.status, str(exc))
        served = {**options, **extra}

        def redactor() -> Redactor:
            return Redactor(server_secrets(model, served), model_hosts(model))

        try:
            made = call(model, context, **served)
            # Any async iterator of events will do (a stream_fn may wrap the real one).
            stream: Any = made if hasattr(made, "__aiter__") else await made
        except Exception as exc:
            return error_response(
                502, redactor()(f"the upstream call failed: {describe_error(exc)}")
            )
        return EventStreamResponse(
            _frames(stream, redactor), send_timeout=send_timeout, on_close=stream.aclose
        )

    return Starlette(routes=[Route("/api/stream", stream_endpoint, methods=["POST"])])


async def _frames(stream: Any, redactor: Callable[[], Redactor]) -> AsyncIterator[bytes]:
    """The events of ``stream`` as SSE frames; the message of an ``error`` event passes
    through ``redactor()`` (:mod:`tau.proxy.redact`)."""
    dumps = json.dumps
    async for event in stream:
        wire = encode_proxy_event(event)
        if event.type == "error":
            # Upstream text can echo the server's key and names upstream hosts.
            wire["errorMessage"] = redactor()(wire["errorMessage"] or "")
        payload = dumps(wire, separators=(",", ":"), ensure_ascii=False)
        yield f"data: {payload}\n\n".encode()


# --------------------------------------------------------------------------- command line


def _resolve_models(specs: Sequence[str], models_file: str | None) -> list[Model]:
    models: list[Model] = []
    for spec in specs:
        provider, sep, model_id = spec.partition("/")
        if not sep or not provider or not model_id:
            raise ValueError(f"--model {spec!r}: use provider/model-id")
        model = find_model(provider, model_id)
        if model is None:
            raise ValueError(f"--model {spec!r}: not in the model catalog (use --models-file)")
        models.append(model)
    if models_file:
        with open(models_file, "rb") as fh:
            data = jiter.from_json(fh.read())
        items = data if isinstance(data, list) else [data]
        models.extend(load_model(item, f"{models_file}[{i}]") for i, item in enumerate(items))
    return models


def main(argv: Sequence[str] | None = None, *, serve: Callable[..., Any] | None = None) -> int:
    """``python -m tau.proxy``: parse the arguments and serve until stopped."""
    parser = argparse.ArgumentParser(
        prog="python -m tau.proxy",
        description="Serve tau.ai stream_simple over HTTP+SSE with bearer-token auth.",
    )
    parser.add_argument("--host", default="127.0.0.1", help="interface to bind (127.0.0.1)")
    parser.add_argument("--port", type=int, default=8787, help="port to bind (8787)")
    parser.add_argument("--token", help="bearer token clients must send (or TAU_PROXY_TOKEN)")
    parser.add_argument(
        "--model",
        action="append",
        default=[],
        metavar="PROVIDER/ID",
        help="allow a catalog model (repeatable)",
    )
    parser.add_argument("--models-file", help="JSON file with pi-format model objects to allow")
    parser.add_argument(
        "--max-body-bytes",
        type=int,
        default=DEFAULT_MAX_BODY_BYTES,
        help=f"largest accepted request body ({DEFAULT_MAX_BODY_BYTES})",
    )
    parser.add_argument(
        "--body-timeout",
        type=float,
        default=DEFAULT_BODY_TIMEOUT,
        help=f"seconds a client has to send its request body, else 408 ({DEFAULT_BODY_TIMEOUT:g})",
    )
    parser.add_argument(
        "--header-timeout",
        type=float,
        default=DEFAULT_HEADER_TIMEOUT,
        help="seconds a client has to send its request headers, else 408 "
        f"({DEFAULT_HEADER_TIMEOUT:g})",
    )
    parser.add_argument(
        "--max-waiting-per-ip",
        type=int,
        default=DEFAULT_MAX_WAITING_PER_IP,
        help="connections one address may hold before sending its headers (its token) "
        f"({DEFAULT_MAX_WAITING_PER_IP})",
    )
    parser.add_argument(
        "--send-timeout",
        type=float,
        default=DEFAULT_SEND_TIMEOUT,
        help=f"seconds a client may accept no data before it is dropped ({DEFAULT_SEND_TIMEOUT:g})",
    )
    args = parser.parse_args(argv)
    token = args.token or os.environ.get("TAU_PROXY_TOKEN")
    if not token:
        parser.error("a token is required: --token or the TAU_PROXY_TOKEN environment variable")
    try:
        models = _resolve_models(args.model, args.models_file)
    except (OSError, ValueError) as exc:
        parser.error(str(exc))
    if not models:
        parser.error("allow at least one model with --model or --models-file")
    app = create_proxy_app(
        token=token,
        models=models,
        max_body_bytes=args.max_body_bytes,
        body_timeout=args.body_timeout,
        send_timeout=args.send_timeout,
    )
    if serve is None:
        import uvicorn

        serve = uvicorn.run
    names = ", ".join(f"{m.provider}/{m.id}" for m in models)
    print(f"tau proxy on http://{args.host}:{args.port}/api/stream for {names}", file=sys.stderr)
    try:
        protocol = guarded_protocol(args.header_timeout, args.max_waiting_per_ip)
    except ValueError as exc:
        parser.error(str(exc))
    serve(app, host=args.host, port=args.port, http=protocol)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
