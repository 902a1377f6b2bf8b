"""The Gemini protocol, shared by ``google-generative-ai`` (the Gemini API) and
``google-vertex`` (Gemini on Vertex AI): ``streamGenerateContent?alt=sse`` with the same JSON.

* :mod:`.options`: the options of both endpoints;
* :mod:`.request`: the request body (contents, tools, thinking), with the Gemini API's
  endpoint and key (``build_request``), and :mod:`.schema` for models that still take the
  legacy ``parameters``;
* :mod:`.decoder`: :class:`~.decoder.GoogleDecoder`, response chunks into builder calls;
* :mod:`.vertex`: Vertex AI's endpoints, key or Application Default Credentials;
* :mod:`.provider`: the two records, ``PROVIDER`` and ``VERTEX_PROVIDER``.
"""
