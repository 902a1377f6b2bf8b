"""Finding what serves a call: which adapter serves a ``model.api``
(:mod:`~tau.ai.lookup.registry`), the built-in model catalog (:mod:`~tau.ai.lookup.catalog`),
API keys from the environment (:mod:`~tau.ai.lookup.env_keys`), the local model files
(:mod:`~tau.ai.lookup.local_models`) and the union of the adapters' options
(:mod:`~tau.ai.lookup.provider_options`).

This package imports nothing; users import these names from :mod:`tau.ai`.
"""
