"""One module per wire API; each exposes ``stream`` and ``stream_simple``.

They are imported by :mod:`tau.ai.registry` on first use, never at package import.
"""
