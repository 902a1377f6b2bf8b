"""A peer that accepts a request and never reads its body: the upload stalls, and the call
ends with the first-byte timeout (which runs from the moment the request is sent), never
hangs, whatever the size of the body."""

from __future__ import annotations

import pytest

from tau.ai.core.errors import ProviderError
from tau.ai.streaming.http import open_stream
from tests.ai.servers import STALL, LocalServer


async def test_a_peer_that_never_reads_the_body_hits_the_first_byte_limit() -> None:
    # 16 MB: more than the socket buffers hold, so the client's write waits on the peer.
    async with LocalServer(body_delay=STALL) as server:
        with pytest.raises(ProviderError, match="first-byte timeout"):
            async with open_stream(
                {"timeout": {"first_byte": 0.5}}, "POST", server.url, content=b"x" * (16 << 20)
            ):
                pass
    assert server.requests == []  # the body was never read
