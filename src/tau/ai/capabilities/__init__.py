"""What is built on a call, each loaded on first use: fallback models
(:mod:`~tau.ai.capabilities.fallback`), the JSON form of the data model
(:mod:`~tau.ai.capabilities.serialization`), cross-provider handoff
(:mod:`~tau.ai.capabilities.transform_messages`), tool-argument validation
(:mod:`~tau.ai.capabilities.validation`), context-overflow detection
(:mod:`~tau.ai.capabilities.overflow`), prompt size (:mod:`~tau.ai.capabilities.size`) and
the redaction of keys from what leaves the process (:mod:`~tau.ai.capabilities.secrets`).
Typed output, the largest capability, is its own public package, :mod:`tau.ai.structured`.

This package imports nothing; users import these names from :mod:`tau.ai`.
"""
