"""``context_chars``: a cheap, provider-free measure of how big a prompt is."""

from __future__ import annotations

import json

from tau.ai.core.types import Context, TextContent, ThinkingContent, ToolCall


def context_chars(context: Context, *, tools: bool = False) -> int:
    """Characters of the text a context sends: the system prompt, every message's text and
    thinking, each tool call's name and JSON arguments, and with ``tools`` each tool's name,
    description and JSON schema. Images are not counted. About four characters make a token
    of English, which is what estimates built on it (the faux provider's usage, tau.batch's
    tokens-per-minute charge before a request) assume."""
    total = len(context.system_prompt or "")
    for message in context.messages:
        content = message.content
        if isinstance(content, str):
            total += len(content)
            continue
        for block in content:
            if isinstance(block, TextContent):
                total += len(block.text)
            elif isinstance(block, ThinkingContent):
                total += len(block.thinking)
            elif isinstance(block, ToolCall):
                total += len(block.name) + len(json.dumps(block.arguments))
    if tools:
        for tool in context.tools or ():
            total += len(tool.name) + len(tool.description) + len(json.dumps(tool.json_schema))
    return total
