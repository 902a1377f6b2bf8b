"""The built-in providers: one package per wire protocol, all of one shape.

Their records are imported by :mod:`tau.ai.lookup.registry` on the first call for their
``model.api``, never at ``import tau.ai``; this package imports nothing.

The provider contract
=====================

A provider is one :class:`~tau.ai.Provider` record (:mod:`tau.ai.lookup.provider`), declared
in the ``provider.py`` of its package. Every package has the same core modules:

``options.py``
    ``<Provider>Options``, a ``TypedDict`` extending :class:`tau.ai.StreamOptions` with the
    provider's own keys (and :class:`tau.ai.core.options.ToolChoiceOption` if it takes a tool
    choice). Its own keys are also its :class:`tau.ai.Settings` keys, under the record's
    prefix (``effort`` -> ``anthropic_effort``; ``scripts/generate_settings.py`` writes them
    out for type checkers). It imports nothing heavy: ``tau.ai`` re-exports these types lazily.
``request.py``
    ``build_request(model, context, options) -> ProviderRequest``: the URL, the headers
    (always through :func:`tau.ai.streaming.headers.request_headers`, the one rule: adapter
    defaults < ``model.headers`` < auth < the call's ``headers``) and the body. Pure: no I/O,
    so tests validate bodies against the official SDKs' types. A missing key is a
    :class:`~tau.ai.ProviderError` raised here (it becomes the stream's ``error`` event).
``decoder.py``
    ``<Provider>Decoder(builder)`` with ``feed(data, event) -> bool`` (one SSE ``data``
    payload; False once the protocol's last event came) and ``finish()`` (settle the stop
    reason, or raise if the response is incomplete). A binary stream's decoder takes
    ``feed(chunk: bytes)`` and names its ``content_type``. It only translates wire events into
    :class:`~tau.ai.MessageBuilder` calls, addressing blocks by the provider's own key
    (``builder.text(key, delta)``, ``thinking``, ``tool_call``, ``close``).
``provider.py``
    ``PROVIDER = Provider(api=..., options=..., prefix=..., env_keys=..., build_request=...,
    decoder=..., reasoning=...)``: the record, with the small functions only it needs (the
    decoder factory, the mapping of the unified ``reasoning`` level). A provider that is not
    plain HTTP gives its own ``stream`` instead (``llama_cpp`` in-process, ``faux`` scripted).

Whatever else a package needs is its own module (``bedrock/auth.py``, ``google/vertex.py``,
``openai_completions/compat.py``, ``openai_responses/azure.py``). A protocol with two endpoints
declares two records in one ``provider.py`` (``openai_responses``: ``PROVIDER`` and
``AZURE_PROVIDER``; ``google``: ``PROVIDER`` and ``VERTEX_PROVIDER``). Shapes shared across
protocols live in :mod:`.parts`, :mod:`.output_schema` and :mod:`.simple_options`.

Adding a provider
=================

1. Is it a dialect of an existing protocol? Then it is a model (``api`` of that protocol, its
   ``base_url``) and, for chat completions, :class:`~tau.ai.OpenAICompletionsCompat` fields.
2. Otherwise create ``providers/<protocol>/`` with the four modules above, and add its line to
   :data:`tau.ai.lookup.registry.BUILTIN_PROVIDERS` (``"api": "module[:ATTR] [extra]"``). A new
   dependency is an extra, imported only inside the package. Then run
   ``python scripts/generate_settings.py`` (its settings keys, for type checkers).
3. Tests: request bodies against the provider's official SDK types; the decoder on streams
   written from the documented wire format and on recorded real traffic
   (``../shared/fixtures/recorded``), expectations computed from the raw recording; its row in
   ``tests/ai/streaming/test_headers.py``, ``tests/ai/fault_cases.py`` and the handoff matrix
   (``tests/ai/test_handoff_all_apis.py``).
4. A case in ``benchmarks/bench_providers.py``, and its page in ``docs/guides/providers/``
   (listed in that folder's ``index.md`` and in ``mkdocs.yml``; a test checks it exists).

A third-party package declares the same record and names it in the ``tau.providers`` entry
point group (``"my-api" = "my_package.provider:PROVIDER"``); nothing of tau changes.
"""
