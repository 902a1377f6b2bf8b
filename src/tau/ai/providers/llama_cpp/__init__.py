"""``llama-cpp``: GGUF models in-process through llama.cpp (xllamacpp, extra ``[local]``).

The model is loaded once per process per file and reused (llama.cpp's server, run in this
process and called directly); generation runs in a worker thread that hands each piece of
output to the event loop with ``call_soon_threadsafe``, so the loop never blocks, and checks an
abort flag at every token, so an abort stops it at once.

Prompts are ChatML. Tools follow the protocol of llama-cpp-python's ``chatml-function-calling``
chat format (the system prompt lists ``functions.<name>:`` with each JSON schema; the model
answers ``message:`` then text, or ``functions.<name>:`` then JSON arguments), but tau drives
it itself, grammar-constrained at every step, because that chat format cannot stream when
``tool_choice`` is ``"auto"`` (and drops tool results from the prompt). A tool-enabled turn is:

1. a choice constrained to ``"message:"`` or one of the ``functions.<name>:`` headers (not shown);
2. for a message, the text, streamed as text deltas;
3. for a call, its arguments constrained by the tool's JSON schema and streamed as tool-call
   deltas, then a constrained choice of another call or the end of the turn.

A message is generated after ``message:`` and a line break, as the format says, and its first
token may not open a placeholder or an object (``<``, ``{``). The reason: a small model copies.
Given a prefix that occurs in its context, it continues with whatever followed that prefix
there. After ``message:\n`` the system prompt's format example goes on with ``<message>``;
forcing the generation past that placeholder (``message:\n<message>\n``, as tau once did)
only moved the copy one line on, and the answer became the system prompt's next line, "To call
functions, begin each call with…". After a call, ``{`` starts a copy of its arguments. Banning
those first tokens (a one-token grammar) breaks the copy at its start; the rest of the text is
free.

Small models tend to repeat a call whose result they already have instead of answering. A call
identical (same name and arguments) to one already made since the last user message is
therefore not made again: the turn becomes a message instead. Only a call to a tool already
used in that span is held back until its arguments are complete; others stream.

Grammars are llama.cpp's: GBNF for the choices, and a tool's or the answer's JSON Schema
compiled by llguidance, with closed objects and compact JSON.

Usage is counted in the model's own tokens: ``input`` is the prompt, ``output`` every token the
model sampled (the constrained choices included), also when the generation is aborted: tokens
already read and sampled were spent. Generation uses llama.cpp's default thread count.

* :mod:`.options`: :class:`~.options.LlamaCppOptions`;
* :mod:`.request`: ``build_request``, the ChatML prompt and the settings of one turn;
* :mod:`.generate`: the loaded models and the turn generated in a worker thread;
* :mod:`.decoder`: :class:`~.decoder.LlamaCppDecoder`, which turns what the worker hands over
  into builder calls;
* :mod:`.adapter`: ``stream`` and ``stream_simple``.
"""
