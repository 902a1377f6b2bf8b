"""The OpenAI Responses protocol, shared by ``openai-responses`` and ``azure-openai-responses``.

Stateless by design: every request sends ``store: false`` and the whole conversation, with
the model's own reasoning handed back as encrypted reasoning items.

* :mod:`.options`: the options of both adapters;
* :mod:`.request`: the Responses body (``input`` items, ``tools``, reasoning);
* :mod:`.decoder`: :class:`~.decoder.OpenAIResponsesDecoder`, events into builder calls;
* :mod:`.openai`: OpenAI's endpoint (``POST {base_url}/responses``);
* :mod:`.azure`: an Azure OpenAI resource's.
"""
