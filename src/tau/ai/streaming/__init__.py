"""The stream machinery adapters are built from: the event stream
(:mod:`~tau.ai.streaming.event_stream`), the message builder (:mod:`~tau.ai.streaming.builder`),
the HTTP adapter's shape and driver (:mod:`~tau.ai.streaming.adapter`), HTTP
(:mod:`~tau.ai.streaming.http`), server-sent events (:mod:`~tau.ai.streaming.sse`), the header
rule (:mod:`~tau.ai.streaming.headers`), the instrumentation seams
(:mod:`~tau.ai.streaming.observe`) and the streamed-JSON helpers (partial JSON, JSON paths,
sanitising, hashing).

This package imports nothing; provider authors import its public names from
:mod:`tau.ai.adapters`.
"""
