"""The ``openai-codex-responses`` protocol: the Responses API of ChatGPT's backend, which a
ChatGPT Plus/Pro subscription reaches through ``tau login openai-codex``.

* :mod:`.options`: its options (the Responses ones plus ``text_verbosity``);
* :mod:`.request`: the body (the Responses ``input`` with the system prompt as
  ``instructions``) and the request (``POST {base_url}/codex/responses`` with the account id
  from the token);
* :mod:`.decoder`: the Responses decoder, reading Codex's own terminal events;
* :mod:`.provider`: the record, ``PROVIDER``.
"""
