"""``mistral-conversations``: Mistral's chat API (``POST {base_url}/chat/completions``, SSE).

Spoken directly over HTTP, no SDK. Mistral's wire format resembles OpenAI's chat
completions but has its own content chunks (``text``, ``thinking`` with nested text parts,
``image_url``), ``prompt_mode: "reasoning"`` for its reasoning models, and tool-call ids of
exactly nine alphanumeric characters, so ids from other providers are re-mapped on handoff.

* :mod:`.options`: :class:`~.options.MistralOptions`;
* :mod:`.request`: ``build_request`` (messages with ids re-mapped, tools, affinity);
* :mod:`.decoder`: :class:`~.decoder.MistralDecoder`, chunks into builder calls;
* :mod:`.provider`: the record (``PROVIDER``), and the unified reasoning level mapped.
"""
