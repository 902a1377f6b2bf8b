"""One library streaming from the local server, in its own process; prints one JSON result.

``python client.py LIB SHAPE PORT REQUESTS CONCURRENCY [short]`` where LIB is floor, tau, openai,
anthropic, litellm or pydantic_ai and SHAPE is openai or anthropic. CPU is this process's
time over the measured requests (after warm-up), divided by the SSE events the server sent.
"""

from __future__ import annotations

import asyncio
import json
import os
import resource
import sys
import time
from collections.abc import Awaitable, Callable

from shapes import anthropic_stream, openai_stream

OPENAI_QUERY = "deltas=5000"
ANTHROPIC_QUERY = "text=1000&tool=200000"
MESSAGES = [{"role": "user", "content": "Write the file."}]

Runner = Callable[[], Awaitable[float]]  # returns seconds to the first event


def events_per_response(shape: str, query: str) -> int:
    q = dict(part.split("=") for part in query.split("&"))
    if shape == "openai":
        return openai_stream(int(q["deltas"]))[1]
    return anthropic_stream(int(q["text"]), int(q["tool"]))[1]


def query_for(shape: str, short: bool) -> str:
    """The response size: the full shapes, or short ones for the concurrency runs."""
    if shape == "openai":
        return "deltas=200" if short else OPENAI_QUERY
    return "text=150&tool=5000" if short else ANTHROPIC_QUERY


def make_runner(lib: str, shape: str, root: str, concurrency: int, short: bool) -> Runner:
    query = query_for(shape, short)
    base = f"{root}/s/{query}"
    openai_base = f"{base}/v1"
    limits_needed = max(concurrency, 10)

    if lib == "floor":
        import httpx2

        client = httpx2.AsyncClient(
            timeout=60,
            limits=httpx2.Limits(
                max_connections=limits_needed, max_keepalive_connections=limits_needed
            ),
        )
        url = f"{openai_base}/chat/completions" if shape == "openai" else f"{base}/v1/messages"

        async def floor() -> float:
            first = 0.0
            start = time.perf_counter()
            async with client.stream("POST", url, json={"messages": MESSAGES}) as response:
                buffer = b""
                async for chunk in response.aiter_bytes():
                    buffer += chunk
                    *events, buffer = buffer.split(b"\n\n")
                    for event in events:
                        for line in event.split(b"\n"):
                            if line.startswith(b"data: ") and line != b"data: [DONE]":
                                json.loads(line[6:])
                                if not first:
                                    first = time.perf_counter() - start
            return first

        return floor

    if lib == "tau":
        import httpx2

        from tau.ai import Context, Model, UserMessage, stream

        client = httpx2.AsyncClient(
            timeout=60,
            limits=httpx2.Limits(
                max_connections=limits_needed, max_keepalive_connections=limits_needed
            ),
        )
        if shape == "openai":
            model = Model(
                id="gpt-4o-mini",
                name="bench",
                api="openai-completions",
                provider="bench",
                base_url=openai_base,
            )
        else:
            model = Model(
                id="claude-sonnet-4-5",
                name="bench",
                api="anthropic-messages",
                provider="bench",
                base_url=base,
            )
        context = Context([UserMessage("Write the file.")])

        async def tau_run() -> float:
            first = 0.0
            start = time.perf_counter()
            s = stream(model, context, api_key="bench", client=client, max_tokens=1024)
            async for event in s:
                if not first:
                    first = time.perf_counter() - start
                if event.type == "error":
                    raise RuntimeError(event.error.error_message)
            return first

        return tau_run

    if lib == "openai" and shape == "openai":
        import openai

        oclient = openai.AsyncOpenAI(base_url=openai_base, api_key="bench", max_retries=0)

        async def openai_run() -> float:
            first = 0.0
            start = time.perf_counter()
            response = await oclient.chat.completions.create(
                model="gpt-4o-mini", messages=MESSAGES, stream=True
            )  # type: ignore[arg-type]
            async for _chunk in response:
                if not first:
                    first = time.perf_counter() - start
            return first

        return openai_run

    if lib == "anthropic" and shape == "anthropic":
        import anthropic

        aclient = anthropic.AsyncAnthropic(base_url=base, api_key="bench", max_retries=0)

        async def anthropic_run() -> float:
            first = 0.0
            start = time.perf_counter()
            response = await aclient.messages.create(
                model="claude-sonnet-4-5", max_tokens=1024, messages=MESSAGES, stream=True
            )  # type: ignore[arg-type]
            async for _event in response:
                if not first:
                    first = time.perf_counter() - start
            return first

        return anthropic_run

    if lib == "litellm":
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        import litellm

        name = "openai/gpt-4o-mini" if shape == "openai" else "anthropic/claude-sonnet-4-5"
        api_base = openai_base if shape == "openai" else base

        async def litellm_run() -> float:
            first = 0.0
            start = time.perf_counter()
            response = await litellm.acompletion(
                model=name,
                messages=MESSAGES,
                api_base=api_base,
                api_key="bench",
                stream=True,
                max_tokens=1024,
            )
            async for _chunk in response:
                if not first:
                    first = time.perf_counter() - start
            return first

        return litellm_run

    if lib == "pydantic_ai":
        from pydantic_ai.direct import model_request_stream
        from pydantic_ai.messages import ModelRequest

        if shape == "openai":
            from pydantic_ai.models.openai import OpenAIChatModel
            from pydantic_ai.providers.openai import OpenAIProvider

            pmodel: object = OpenAIChatModel(
                "gpt-4o-mini", provider=OpenAIProvider(base_url=openai_base, api_key="bench")
            )
        else:
            from pydantic_ai.models.anthropic import AnthropicModel
            from pydantic_ai.providers.anthropic import AnthropicProvider

            pmodel = AnthropicModel(
                "claude-sonnet-4-5", provider=AnthropicProvider(api_key="bench", base_url=base)
            )
        request = [ModelRequest.user_text_prompt("Write the file.")]

        async def pydantic_ai_run() -> float:
            first = 0.0
            start = time.perf_counter()
            async with model_request_stream(pmodel, request) as response:  # type: ignore[arg-type]
                async for _event in response:
                    if not first:
                        first = time.perf_counter() - start
            return first

        return pydantic_ai_run

    raise SystemExit(f"{lib} does not stream the {shape} shape")


async def measure(
    lib: str, shape: str, port: int, requests: int, concurrency: int, short: bool
) -> dict[str, object]:
    run = make_runner(lib, shape, f"http://127.0.0.1:{port}", concurrency, short)
    for _ in range(2):
        await run()
    per_response = events_per_response(shape, query_for(shape, short))
    firsts: list[float] = []
    cpu0 = time.process_time()
    wall0 = time.perf_counter()
    for _ in range(requests):
        firsts.extend(await asyncio.gather(*(run() for _ in range(concurrency))))
    cpu = time.process_time() - cpu0
    wall = time.perf_counter() - wall0
    events = per_response * requests * concurrency
    firsts.sort()
    return {
        "lib": lib,
        "shape": shape,
        "concurrency": concurrency,
        "events": events,
        "cpu_us_per_event": cpu / events * 1e6,
        "wall_s": wall,
        "first_event_ms": firsts[len(firsts) // 2] * 1e3,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


if __name__ == "__main__":
    lib, shape, port, requests, concurrency = (
        sys.argv[1],
        sys.argv[2],
        int(sys.argv[3]),
        int(sys.argv[4]),
        int(sys.argv[5]),
    )
    short = len(sys.argv) > 6 and sys.argv[6] == "short"
    print(json.dumps(asyncio.run(measure(lib, shape, port, requests, concurrency, short))))
