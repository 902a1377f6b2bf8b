"""The options of the ``faux`` provider."""

from __future__ import annotations

from tau.ai.core.options import SimpleStreamOptions, ToolChoiceOption


class FauxOptions(SimpleStreamOptions, ToolChoiceOption, total=False):
    """What a faux model takes: the simple options, and a tool choice (recorded only), so
    that it stands in for a real adapter under ``stream`` and ``stream_simple`` alike."""
