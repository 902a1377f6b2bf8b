"""The Gemini protocol, shared by ``google-generative-ai`` (the Gemini API), ``google-vertex``
(Gemini on Vertex AI) and ``google-gemini-cli`` (Cloud Code Assist, in an envelope):
``streamGenerateContent?alt=sse`` with the same JSON.

* :mod:`.options`: the options of both endpoints;
* :mod:`.request`: the request body (contents, tools, thinking), with the Gemini API's
  endpoint and key (``build_request``), and :mod:`.schema` for models that still take the
  legacy ``parameters``;
* :mod:`.decoder`: :class:`~.decoder.GoogleDecoder`, response chunks into builder calls;
* :mod:`.vertex`: Vertex AI's endpoints, key or Application Default Credentials;
* :mod:`.gemini_cli`: Cloud Code Assist's envelope, endpoint and login key;
* :mod:`.provider`: the three records, ``PROVIDER``, ``VERTEX_PROVIDER`` and
  ``GEMINI_CLI_PROVIDER``.
"""
