"""``faux``: a scripted provider that streams given responses through the real event machinery.

Higher layers test against it, the examples use it, and it lets anyone try tau with no key
and no model::

    from tau.ai import complete, Context, UserMessage
    from tau.ai.providers.faux import FauxResponse, faux_model, text, tool_call

    model = faux_model([
        FauxResponse([tool_call("get_weather", {"city": "Paris"})]),
        FauxResponse([text("It is sunny in Paris.")]),
    ])

A script is a list of responses (used in order) or a function ``(context, options) ->
FauxResponse`` for replies that depend on the request. A model with no script echoes the
last user message, its text blocks a blank line apart (the catalog's
``get_model("faux", "echo")`` is one).

Like a real adapter, each call builds a request body (the model id, the pi-format context,
the sampling options) and runs the ``on_payload`` hook on it before any response is chosen;
:func:`faux_payloads` keeps what was "sent".

* :mod:`.options`: :class:`FauxOptions`; :mod:`.request`: the body it "sends";
* :mod:`.script`: the scripts, :func:`faux_model` and what a model was asked;
* :mod:`.decoder`: a scripted response played into builder calls;
* :mod:`.provider`: the record.
"""

from tau.ai.providers.faux.options import FauxOptions
from tau.ai.providers.faux.provider import stream
from tau.ai.providers.faux.script import (
    FauxResponse,
    FauxScript,
    faux_calls,
    faux_model,
    faux_payloads,
    text,
    thinking,
    tool_call,
)

__all__ = [
    "FauxOptions",
    "FauxResponse",
    "FauxScript",
    "faux_calls",
    "faux_model",
    "faux_payloads",
    "stream",
    "stream_simple",
    "text",
    "thinking",
    "tool_call",
]

stream_simple = stream
"""The faux provider takes the simple options as they are (``reasoning`` is recorded only)."""
