"""Tokens per second of the embedded local model through tau, next to llama-cpp-python directly.

Run: ``python benchmarks/bench_local.py`` (needs the ``[local]`` extra). Both sides use the same
loaded model, the same prompt text and the same greedy sampling, alternating, in one process;
"direct" is ``Llama.create_completion(stream=True)`` iterated to the end, "tau" is
``tau.ai.stream`` consumed event by event (the worker thread, the hand-over to the event loop
and the event objects included). Target: tau at 95% of direct or better.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from tau.ai import Context, UserMessage, stream  # noqa: E402
from tau.ai.lookup.local_models import default_local_model, gguf_path  # noqa: E402
from tau.ai.providers import llama_cpp as provider  # noqa: E402

ROUNDS = 5
MAX_TOKENS = 256
PROMPT = "Write a long, detailed story about a lighthouse keeper and a storm."


def direct(llama: object, prompt: str) -> tuple[int, float]:
    """(tokens, seconds) of one streamed completion straight through llama-cpp-python."""
    started = time.perf_counter()
    text = []
    for chunk in llama.create_completion(  # type: ignore[attr-defined]
        prompt,
        max_tokens=MAX_TOKENS,
        temperature=0.0,
        top_k=40,
        top_p=0.95,
        min_p=0.05,
        repeat_penalty=1.1,
        stream=True,
    ):
        text.append(chunk["choices"][0]["text"])
    seconds = time.perf_counter() - started
    tokens = len(llama.tokenize("".join(text).encode(), add_bos=False, special=True))  # type: ignore[attr-defined]
    return tokens, seconds


async def through_tau(context: Context) -> tuple[int, float]:
    """(tokens, seconds) of one response through tau.ai.stream."""
    model = default_local_model()
    started = time.perf_counter()
    events = stream(model, context, max_tokens=MAX_TOKENS, temperature=0.0)
    async for _ in events:
        pass
    message = await events.result()
    seconds = time.perf_counter() - started
    if message.stop_reason == "error":
        raise SystemExit(f"tau failed: {message.error_message}")
    return message.usage.output, seconds


async def main() -> None:
    model = default_local_model()
    context = Context([UserMessage(PROMPT)])
    prompt = provider.render_prompt(context)
    # Load once, and warm up both paths, so neither pays for loading or a cold cache.
    await through_tau(context)
    llama = provider._load(gguf_path(model), model.context_window).llama
    direct(llama, prompt)
    rates: dict[str, list[float]] = {"direct": [], "tau": []}
    for _ in range(ROUNDS):
        tokens, seconds = direct(llama, prompt)
        rates["direct"].append(tokens / seconds)
        tokens, seconds = await through_tau(context)
        rates["tau"].append(tokens / seconds)
    d = statistics.median(rates["direct"])
    t = statistics.median(rates["tau"])
    print(f"embedded model {model.provider}/{model.id}, {MAX_TOKENS} tokens max, {ROUNDS} rounds")
    print(f"  llama-cpp-python direct  {d:8.1f} tokens/s")
    print(f"  tau.ai.stream            {t:8.1f} tokens/s")
    print(f"  tau / direct             {t / d:8.1%}   (target >= 95%)")


if __name__ == "__main__":
    asyncio.run(main())
