"""An upstream that never stops talking, asked for ``max_tokens=10``.

Unchecked, a client keeps every delta (296 MB of text in 6 s), and a proxy in front of it
too. The rule, in :class:`tau.ai.MessageBuilder` (the one place every adapter's output passes
through): a response may stream at most 1 Mi characters + 64 per token of ``max_tokens``
(text, thinking and tool-call arguments together), or ``max_output_chars`` when given; the
delta that passes the cap ends the stream with a clear ``error``, and the connection closes.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Iterator

import httpx2
import pytest

from tau.ai import AssistantMessage, Context, UserMessage, stream
from tau.ai.streaming.output_cap import OUTPUT_CAP_BASE, OUTPUT_CAP_PER_TOKEN, output_cap
from tau.proxy import stream_proxy
from tests.ai.fault_cases import CASES, AdapterCase, case_params
from tests.ai.servers import LocalServer, Reply
from tests.factories import model

PIECE = "x" * 997
CASE_PARAMS = case_params()


def endless_answer(case: AdapterCase) -> Iterator[bytes]:
    """The case's response opening, then its text-delta event repeated for ever."""
    events = case.events([PIECE])
    at = next(i for i, event in enumerate(events) if PIECE.encode() in event)
    return itertools.chain([b"".join(events[:at])], itertools.repeat(events[at]))


async def _closed(server: LocalServer) -> bool:
    for _ in range(100):
        if not server.open_connections:
            return True
        await asyncio.sleep(0.02)
    return False


def _cut(message: AssistantMessage, cap: int) -> None:
    assert message.stop_reason == "error"
    assert f"output cap of {cap} characters" in (message.error_message or ""), message
    # Everything before the cap is kept, nothing past it.
    assert cap - len(PIECE) < len(message.text) <= cap


@pytest.mark.parametrize("case", CASE_PARAMS)
async def test_an_endless_answer_is_cut_after_max_tokens_with_margin(
    case: AdapterCase, client: httpx2.AsyncClient
) -> None:
    reply = Reply(200, {"content-type": case.content_type}, endless_answer(case))
    async with LocalServer([reply]) as server:
        # Hostile: max_tokens=10, and text without end.
        async with asyncio.timeout(60):
            s = stream(
                case.model(server.url),
                Context([UserMessage("hi")]),
                api_key="k",
                client=client,
                max_tokens=10,
            )  # type: ignore[arg-type]
            final = await s.result()
        # Clean: cut at 1 Mi + 64 x 10 characters, with a clear error; connection closed.
        _cut(final, OUTPUT_CAP_BASE + OUTPUT_CAP_PER_TOKEN * 10)
        assert await _closed(server)


async def test_max_output_chars_sets_the_cap(client: httpx2.AsyncClient) -> None:
    case = CASES[0]
    reply = Reply(200, {"content-type": case.content_type}, endless_answer(case))
    async with LocalServer([reply]) as server:
        async with asyncio.timeout(30):
            final = await stream(
                case.model(server.url), Context([UserMessage("hi")]), api_key="k",
                client=client, max_output_chars=20_000,
            ).result()  # fmt: skip
    _cut(final, 20_000)


def test_the_rule() -> None:
    m = model(max_tokens=4096)
    assert output_cap(m, {}) == (1 << 20) + 64 * 4096  # the model's limit
    assert output_cap(m, {"max_tokens": 10}) == (1 << 20) + 640  # the call's
    assert output_cap(m, {"max_tokens": 10, "max_output_chars": 77}) == 77


async def test_a_bad_max_output_chars_is_an_error_event() -> None:
    final = await stream(model(), Context([UserMessage("hi")]), max_output_chars=-1).result()  # type: ignore[arg-type]
    assert final.stop_reason == "error" and "max_output_chars" in (final.error_message or "")


async def test_an_endless_answer_through_the_proxy_is_cut() -> None:
    pytest.importorskip("starlette")
    from tau.proxy.server import create_proxy_app
    from tests.factories import serving
    from tests.proxy.test_proxy import TOKEN, client_view

    case = next(c for c in CASES if c.api == "openai-completions")
    reply = Reply(200, {"content-type": case.content_type}, endless_answer(case))
    async with LocalServer([reply]) as upstream:
        served = case.model(upstream.url)
        app = create_proxy_app(token=TOKEN, models=[served], stream_options={"api_key": "k"})
        async with serving(app) as url, asyncio.timeout(60):
            # Hostile: through the proxy, max_tokens=10 and an upstream without end.
            final = await stream_proxy(
                client_view(served), Context([UserMessage("hi")]), proxy_url=url,
                auth_token=TOKEN, max_tokens=10,
            ).result()  # fmt: skip
        # Clean: the proxy's own stream was cut at the cap (so is its memory), the client
        # gets the error, and the proxy closed its upstream connection.
        _cut(final, OUTPUT_CAP_BASE + OUTPUT_CAP_PER_TOKEN * 10)
        assert (final.error_message or "").startswith("The response passed its output cap")
        assert await _closed(upstream)
