"""The ``llama-cpp`` provider record: a local GGUF model run in-process by llama.cpp (xllamacpp)."""

from __future__ import annotations

from tau.ai.lookup.provider import Provider
from tau.ai.providers.llama_cpp.adapter import stream
from tau.ai.providers.llama_cpp.options import LlamaCppOptions

__all__ = ["PROVIDER"]

PROVIDER = Provider(
    api="llama-cpp",
    options=LlamaCppOptions,
    prefix="llama_cpp_",
    stream=stream,
)
"""In-process inference: its own ``stream`` (a worker thread feeding the builder) instead of
the HTTP driver; local models have no reasoning setting, so the unified level is ignored."""
