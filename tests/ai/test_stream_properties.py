"""Property test: any scripted response streams with a valid grammar and rebuilds exactly."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tau.ai import Context, TextContent, ThinkingContent, ToolCall, UserMessage, stream
from tau.ai.providers.faux import FauxResponse, faux_model

from .stream_checks import check_grammar

_text = st.text(max_size=40)
_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | _text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_text, inner, max_size=3),
    max_leaves=8,
)
_block = st.one_of(
    _text.map(TextContent),
    _text.map(ThinkingContent),
    st.dictionaries(_text, _json, max_size=4).map(lambda a: ToolCall("id", "tool", a)),
)


@settings(max_examples=60, deadline=None)
@given(blocks=st.lists(_block, max_size=5), chunk_size=st.integers(0, 7), fail=st.booleans())
def test_any_script_streams_a_valid_grammar(blocks: list[Any], chunk_size: int, fail: bool) -> None:
    response = FauxResponse(blocks, chunk_size=chunk_size, error="boom" if fail else None)

    async def run() -> list[Any]:
        return [e async for e in stream(faux_model([response]), Context([UserMessage("x")]))]

    events = asyncio.run(run())
    check_grammar(events)
    final = events[-1]
    message = final.error if fail else final.message
    assert final.type == ("error" if fail else "done")
    assert message.content == blocks
    deltas: dict[int, str] = {}
    for e in events:
        if e.type.endswith("_delta"):
            deltas[e.content_index] = deltas.get(e.content_index, "") + e.delta
    for i, block in enumerate(blocks):
        if isinstance(block, ToolCall):
            assert json.loads(deltas[i]) == block.arguments
        elif isinstance(block, TextContent):
            assert deltas.get(i, "") == block.text
        else:
            assert deltas.get(i, "") == block.thinking
