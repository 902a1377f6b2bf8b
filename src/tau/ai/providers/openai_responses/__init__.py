"""The OpenAI Responses protocol, shared by ``openai-responses``, ``azure-openai-responses`` and
``openai-codex-responses``.

Stateless by design: every request sends ``store: false`` and the whole conversation, with
the model's own reasoning handed back as encrypted reasoning items.

* :mod:`.options`: the options of both endpoints;
* :mod:`.request`: the Responses body (``input`` items, ``tools``, reasoning) and each
  endpoint's request (OpenAI's ``POST {base_url}/responses``, an Azure resource's);
* :mod:`.azure`: where an Azure resource and deployment are (options, environment);
* :mod:`.codex`: ChatGPT's Codex backend (its body, headers and usage-limit errors);
* :mod:`.decoder`: :class:`~.decoder.OpenAIResponsesDecoder`, events into builder calls;
* :mod:`.provider`: the three records, ``PROVIDER``, ``AZURE_PROVIDER`` and ``CODEX_PROVIDER``.
"""
