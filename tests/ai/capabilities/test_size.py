"""context_chars: what each part of a context adds."""

from __future__ import annotations

import json

from tau.ai import (
    Context,
    ImageContent,
    TextContent,
    ThinkingContent,
    Tool,
    ToolCall,
    UserMessage,
    context_chars,
)
from tests.factories import assistant, model


def test_every_text_part_counts_and_images_do_not() -> None:
    call = ToolCall("c1", "lookup", {"q": "ünïcode"})
    reply = assistant(model(), ThinkingContent("hmm"), "ok", call)
    tool = Tool("lookup", "Look it up", {"type": "object"})
    context = Context(
        messages=[UserMessage([TextContent("abcd"), ImageContent("aGk=", "image/png")]), reply],
        system_prompt="sys",
        tools=[tool],
    )
    text = len("sys") + len("abcd") + len("hmm") + len("ok")
    calls = len("lookup") + len(json.dumps({"q": "ünïcode"}))
    assert context_chars(context) == text + calls
    schema = len("lookup") + len("Look it up") + len(json.dumps({"type": "object"}))
    assert context_chars(context, tools=True) == text + calls + schema
    assert context_chars(Context(messages=[UserMessage("plain")])) == 5
