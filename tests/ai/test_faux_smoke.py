"""The faux provider streams a scripted response through the real machinery."""

from __future__ import annotations

from tau.ai import Context, UserMessage, stream
from tau.ai.providers.faux import FauxResponse, faux_model, text, tool_call


async def test_scripted_text_and_tool_call() -> None:
    model = faux_model([FauxResponse([text("Hello"), tool_call("get", {"a": 1})])])
    s = stream(model, Context([UserMessage("hi")]))
    types = [e.type async for e in s]
    message = await s.result()
    assert types[0] == "start" and types[-1] == "done"
    assert message.text == "Hello"
    assert message.tool_calls[0].arguments == {"a": 1}
    assert message.stop_reason == "toolUse"
