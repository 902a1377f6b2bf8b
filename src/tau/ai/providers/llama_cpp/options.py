"""The options of the ``llama-cpp`` adapter."""

from __future__ import annotations

from tau.ai.core.options import StreamOptions


class LlamaCppOptions(StreamOptions, total=False):
    """:class:`~tau.ai.StreamOptions`: ``temperature`` (default 0, greedy) and ``max_tokens``
    (default the model's limit) shape generation; the HTTP ones have nothing to act on."""
