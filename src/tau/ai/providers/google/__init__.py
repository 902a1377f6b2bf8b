"""The Gemini protocol, shared by ``google-generative-ai`` (the Gemini API) and
``google-vertex`` (Gemini on Vertex AI): ``streamGenerateContent?alt=sse`` with the same JSON.

* :mod:`.options`: the options of both adapters;
* :mod:`.request`: the request body (contents, tools, thinking), and :mod:`.schema` for
  models that still take the legacy ``parameters``;
* :mod:`.decoder`: :class:`~.decoder.GoogleDecoder`, response chunks into builder calls;
* :mod:`.gemini`: the Gemini API's endpoint and key;
* :mod:`.vertex`: Vertex AI's endpoints, key or Application Default Credentials.
"""
