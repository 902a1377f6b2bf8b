"""The data model of one call and how it ends: models, messages, content, tools, usage and
cost (:mod:`~tau.ai.core.types`, :mod:`~tau.ai.core.cost`), the 12 stream events
(:mod:`~tau.ai.core.events`), the errors (:mod:`~tau.ai.core.errors`), cancellation
(:mod:`~tau.ai.core.abort`) and the entry points' keyword options (:mod:`~tau.ai.core.options`).

The bottom layer of ``tau.ai``: it imports nothing else of tau. This package imports nothing;
users import these names from :mod:`tau.ai`.
"""
