"""Tokens per second and time to first token of the embedded local model through tau, next to
its backend (xllamacpp, llama.cpp's server in-process) called directly, and next to
llama-cpp-python (tau's previous backend) where it is installed.

Run: ``python benchmarks/bench_local.py`` (needs the ``[local]`` extra). All sides run the same
GGUF, the same prompt text and the same greedy sampling with the same repetition penalty,
alternating, in one process, each warmed up first (model loaded), each reading the prompt
afresh every time (as tau reads a turn's first step). "direct" is
``Server.handle_completions`` streamed to the end through a callback; "tau" is ``tau.ai.stream``
consumed event by event (the prompt's token count, the worker thread, the hand-over to the
event loop and the event objects included); "llama-cpp-python" is
``Llama.create_completion(stream=True)`` iterated to the end. Each backend uses its default
thread count. Each side's best round counts (other processes only ever slow a round down),
its median beside it. Target: tau at 95% of direct or better in tokens/s.
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from tau.ai import Context, UserMessage, stream  # noqa: E402
from tau.ai.lookup.local_models import default_local_model, gguf_path  # noqa: E402
from tau.ai.providers.llama_cpp import generate  # noqa: E402
from tau.ai.providers.llama_cpp.request import render_prompt  # noqa: E402

ROUNDS = int(os.environ.get("BENCH_ROUNDS", "7"))
MAX_TOKENS = 256
PROMPT = "Write a long, detailed story about a lighthouse keeper and a storm."

Sample = tuple[int, float, float]
"""(tokens, seconds to the first token, seconds in all) of one streamed completion."""


def direct(loaded: generate.Loaded, prompt: str) -> Sample:
    """One streamed completion straight through xllamacpp's server, with tau's settings."""
    first: float | None = None
    tokens = 0
    started = time.perf_counter()

    def on_chunk(chunk: dict[str, Any]) -> bool:
        nonlocal first, tokens
        if first is None and chunk["choices"] and chunk["choices"][0].get("text"):
            first = time.perf_counter()
        tokens = int(chunk.get("timings", {}).get("predicted_n", tokens))
        return False

    loaded.server.handle_completions(
        {
            "prompt": prompt,
            "n_predict": MAX_TOKENS,
            "temperature": 0.0,
            **generate.SAMPLING,
            **generate.PENALTY,
            "stream": True,
            "cache_prompt": False,  # as tau reads a turn's prompt: afresh
            "timings_per_token": True,
        },
        on_chunk,
    )
    done = time.perf_counter()
    return tokens, (first or done) - started, done - started


def llama_cpp_python(llama: Any, prompt: str) -> Sample:
    """One streamed completion through llama-cpp-python, with the same settings."""
    first: float | None = None
    tokens = 0
    llama.reset()  # the prompt read afresh, as on the other sides
    started = time.perf_counter()
    for chunk in llama.create_completion(
        prompt,
        max_tokens=MAX_TOKENS,
        temperature=0.0,
        top_k=40,
        top_p=0.95,
        min_p=0.05,
        repeat_penalty=1.1,
        stream=True,
    ):
        if first is None and chunk["choices"][0]["text"]:
            first = time.perf_counter()
        tokens += 1  # one chunk per sampled token
    done = time.perf_counter()
    return tokens, (first or done) - started, done - started


async def through_tau(context: Context) -> Sample:
    """One response through tau.ai.stream."""
    first: float | None = None
    started = time.perf_counter()
    events = stream(default_local_model(), context, max_tokens=MAX_TOKENS, temperature=0.0)
    async for event in events:
        if first is None and event.type == "text_delta":
            first = time.perf_counter()
    message = await events.result()
    done = time.perf_counter()
    if message.stop_reason == "error":
        raise SystemExit(f"tau failed: {message.error_message}")
    return message.usage.output, (first or done) - started, done - started


def _load_llama_cpp_python(path: Path, n_ctx: int) -> Any:
    if importlib.util.find_spec("llama_cpp") is None:
        return None
    import llama_cpp

    return llama_cpp.Llama(model_path=str(path), n_ctx=n_ctx, verbose=False)


async def main() -> None:
    model = default_local_model()
    context = Context([UserMessage(PROMPT)])
    # tau's free text starts after ChatML's assistant header, as the prompt ends.
    prompt = render_prompt(context)
    path = gguf_path(model)
    loaded = generate.load(path, model.context_window)
    other = _load_llama_cpp_python(path, model.context_window)
    sides: dict[str, Any] = {
        "xllamacpp direct": lambda: direct(loaded, prompt),
        "tau.ai.stream": None,
    }
    if other is not None:
        sides["llama-cpp-python"] = lambda: llama_cpp_python(other, prompt)
    samples: dict[str, list[Sample]] = {name: [] for name in sides}
    for round_ in range(ROUNDS + 1):  # the first round warms every side up, unrecorded
        for name, run in sides.items():
            sample = await through_tau(context) if run is None else run()
            if round_:
                samples[name].append(sample)
    load = os.getloadavg()[0]
    print(
        f"embedded model {model.provider}/{model.id}, {MAX_TOKENS} tokens max, {ROUNDS} rounds, "
        f"{os.cpu_count()} CPUs, load average {load:.1f} at the end"
    )
    print(f"  {'':20} {'tokens/s: best':>15} {'median':>7} {'first token: best':>18} {'median':>8}")
    rates: dict[str, float] = {}
    first_token: dict[str, float] = {}
    for name, runs in samples.items():
        per_second = [tokens / seconds for tokens, _, seconds in runs]
        firsts = [first * 1000 for _, first, _ in runs]
        rates[name] = max(per_second)
        first_token[name] = min(firsts)
        print(
            f"  {name:20} {max(per_second):15.1f} {statistics.median(per_second):7.1f} "
            f"{min(firsts):16.1f}ms {statistics.median(firsts):6.1f}ms"
        )
    base = "xllamacpp direct"
    tau = "tau.ai.stream"
    print(
        f"  tau / direct: {rates[tau] / rates[base]:.1%} of the tokens/s (target >= 95%), "
        f"first token {first_token[tau] - first_token[base]:+.1f}ms"
    )
    if other is not None:
        print(
            f"  xllamacpp / llama-cpp-python: {rates[base] / rates['llama-cpp-python']:.1%} of "
            "the tokens/s"
        )


if __name__ == "__main__":
    asyncio.run(main())
