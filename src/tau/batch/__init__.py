"""tau.batch: one agent over a dataset, on one machine (asyncio) or a Ray cluster.

* :func:`run_batch` — an async iterator of :class:`BatchResult`, one per item, as items finish;
  :func:`run_batch_sync` runs it to the end from synchronous code.
* :class:`RateLimit` — requests and tokens per minute for a provider (token buckets, slowed
  by 429s: :mod:`tau.batch.limits`).
* The output file gets one JSON line per item, crash-safe, and a rerun resumes it
  (:mod:`tau.batch.output`; :func:`read_results` reads it back).
* ``backend="ray"`` (``pip install 'tau[ray]'``) spreads the items over a Ray cluster
  (:mod:`tau.batch.ray_backend`).

Importing this package imports neither the agent, nor an HTTP library, nor Ray, nor rich.
"""

from tau.batch.batch import DEFAULT_GRACE, Batch, ModelAgent, run_batch, run_batch_sync
from tau.batch.items import BatchInputError, BatchItem, load_items
from tau.batch.limits import ProviderLimiter, RateLimit, estimate_prompt_tokens
from tau.batch.output import BatchOutputError, read_results
from tau.batch.result import BatchResult, BatchStatus, BatchSummary
from tau.batch.runner import TRANSIENT, AgentFactory, BatchFatalError

__all__ = [
    "DEFAULT_GRACE",
    "TRANSIENT",
    "AgentFactory",
    "Batch",
    "BatchFatalError",
    "BatchInputError",
    "BatchItem",
    "BatchOutputError",
    "BatchResult",
    "BatchStatus",
    "BatchSummary",
    "ModelAgent",
    "ProviderLimiter",
    "RateLimit",
    "estimate_prompt_tokens",
    "load_items",
    "read_results",
    "run_batch",
    "run_batch_sync",
]
