"""``openai-completions``: OpenAI Chat Completions and every server that speaks it.

OpenAI itself, Groq, Cerebras, xAI, OpenRouter, DeepSeek, Mistral's chat endpoint, z.ai,
Together, Hugging Face, Ollama, vLLM, LM Studio, llama.cpp server… The wire protocol is
spoken directly over the shared HTTP client (no SDK at run time).

* :mod:`.options`: :class:`~.options.OpenAICompletionsOptions`;
* :mod:`.compat`: the per-endpoint dialect, detected from the provider id and base URL;
* :mod:`.request`: ``build_request`` in the dialect the compat resolves to;
* :mod:`.decoder`: :class:`~.decoder.OpenAICompletionsDecoder`, chunks into builder calls;
* :mod:`.provider`: the record (``PROVIDER``), and the unified reasoning level mapped.
"""
