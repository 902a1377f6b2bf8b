"""``anthropic-messages``: the Anthropic Messages API (and the endpoints that speak it: MiniMax,
Kimi coding, OpenCode, Vercel AI Gateway), spoken directly over :mod:`tau.ai.streaming.http`.

* :mod:`.options`: :class:`~.options.AnthropicOptions`, what ``stream`` takes;
* :mod:`.request`: ``build_request`` (body, headers, OAuth subscription tokens);
* :mod:`.decoder`: :class:`~.decoder.AnthropicDecoder`, the event stream into builder calls;
* :mod:`.adapter`: ``stream`` and ``stream_simple``.

Decoding choices for output tau does not model: blocks other than text, thinking,
redacted_thinking and tool_use (server tools such as web search, their results, MCP,
compaction…) and deltas other than text/thinking/signature/input_json (citations…) are
skipped without events, so the text and tool calls around them come through unchanged.
Events of unknown type are ignored. ``temperature`` is sent only when given and thinking is
off (current SDK types no longer list it; an endpoint that rejects it answers with a 400
whose message the error event carries). An event whose data is not valid JSON ends the stream
with an error naming the event (skipping it could silently drop text), and so does a stream
that ends before ``message_stop`` or starts another message (a ``message_start`` with a new
id) before it; the same id again is ignored. Usage follows the ``iterations`` rule of
:class:`~.decoder.UsageCounts`.
"""
