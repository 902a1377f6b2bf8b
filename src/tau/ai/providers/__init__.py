"""The built-in adapters: one package (or module) per wire API, all of one shape.

They are imported by :mod:`tau.ai.lookup.registry` on the first call for their ``model.api``, never
at ``import tau.ai``; this package imports nothing.

The adapter contract
====================

An HTTP adapter is a package ``providers/<protocol>/`` with these modules and names:

``options.py``
    ``<Provider>Options``, a ``TypedDict`` extending :class:`tau.ai.StreamOptions` with the
    adapter's own keys (and :class:`tau.ai.core.options.ToolChoiceOption` if it takes a tool
    choice), plus ``<Provider>SimpleOptions`` extending :class:`tau.ai.SimpleStreamOptions`
    with what ``stream_simple`` passes on. It imports nothing heavy: ``tau.ai`` re-exports
    these types lazily.
``request.py``
    ``request_body(model, context, options) -> dict`` and ``build_request(model, context,
    options) -> ProviderRequest``: the URL, the headers (always through
    :func:`tau.ai.streaming.headers.request_headers`, the one rule: adapter defaults <
    ``model.headers`` < auth < the call's ``headers``) and the body. Pure: no I/O, so tests
    validate bodies against the official SDKs' types. A missing key is a
    :class:`~tau.ai.ProviderError` raised here (it becomes the stream's ``error`` event).
``decoder.py``
    ``<Provider>Decoder(builder)`` with ``feed(data, event) -> bool`` (one SSE ``data``
    payload; False once the protocol's last event came) and ``finish()`` (settle the stop
    reason, or raise if the response is incomplete). A binary stream's decoder takes
    ``feed(chunk: bytes)`` and names its ``content_type``. It only translates wire events into
    :class:`~tau.ai.MessageBuilder` calls, addressing blocks by the provider's own key
    (``builder.text(key, delta)``, ``thinking``, ``tool_call``, ``close``): the builder opens
    and closes blocks, maps keys to content indexes, refuses to deliver a tool call whose
    arguments never closed, and prices the usage once at the end (set
    ``builder.cost_multiplier`` for a service tier).
``adapter.py`` (or the protocol's per-endpoint modules)
    ``stream(model, context, options)`` — usually one line,
    ``launch_http(model, context, options, build_request, <Provider>Decoder)`` — and
    ``stream_simple`` mapping the unified ``reasoning`` level to the adapter's options, plus
    ``OPTIONS`` and ``SIMPLE_OPTIONS`` naming the two option types.

Code shared by two endpoints of one protocol (Responses for OpenAI and Azure, Gemini for the
Gemini API and Vertex AI, chat-completions compat detection) lives in that protocol's package;
shapes shared across protocols live in :mod:`.parts`, and what every adapter shares in
:mod:`tau.ai.streaming.adapter`. ``faux`` (a scripted stand-in) and ``llama_cpp`` (in-process) have the
same names for their equivalents.

Adding a provider
=================

1. Is it a dialect of an existing protocol? Then it is a model (``api`` of that protocol, its
   ``base_url``) and, for chat completions, :class:`~tau.ai.OpenAICompletionsCompat` fields.
2. Otherwise create ``providers/<protocol>/`` with the four modules above, and register its
   api in ``tau/ai/registry.py`` (``_BUILTIN``: the module with ``stream``, and the extra it
   needs, if any). A new dependency is an extra, imported only inside the adapter.
3. Add its option types to the lazy names of ``tau/ai/__init__.py`` and to
   ``tau/ai/provider_options.py``, and its key variable to ``tau/ai/env_keys.py``.
4. Tests: request bodies against the provider's official SDK types; the decoder on streams
   written from the documented wire format and on recorded real traffic
   (``../shared/fixtures/recorded``), expectations computed from the raw recording; its row in
   ``tests/ai/test_headers.py``, ``tests/ai/fault_cases.py`` and the handoff matrix
   (``tests/ai/test_handoff_all_apis.py``).
5. A case in ``benchmarks/bench_providers.py``, and the README's provider section.
"""
