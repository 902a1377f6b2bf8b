"""The faux provider streams a scripted response through the real machinery."""

from __future__ import annotations

from tau.ai import Context, ImageContent, TextContent, UserMessage, complete, get_model, stream
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


async def test_the_echo_model_keeps_text_blocks_apart_with_a_blank_line() -> None:
    # A prompt and an attached file are two text blocks: echoed run together, the prompt's
    # last word would merge with the file's first line. Images are not text: left out.
    blocks = [
        TextContent("summarise @notes.txt please"),
        ImageContent("aGk=", "image/png"),
        TextContent('<file path="notes.txt">\nmilk\n</file>'),
    ]
    message = await complete(get_model("faux", "echo"), Context([UserMessage(blocks)]))
    assert message.text == 'summarise @notes.txt please\n\n<file path="notes.txt">\nmilk\n</file>'
