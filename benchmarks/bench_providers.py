"""Client CPU per streamed event of tau's HTTP adapters, next to a bare loop in the same run.

Run: ``python benchmarks/bench_providers.py`` from a checkout (``--runs N`` to change the
number of measured runs, ``--case NAME`` to run some cases only).

A server in a child process (``tests/ai/servers.py`` on 127.0.0.1) streams recorded-shape
provider responses, one SSE event per HTTP chunk (64 in the short-stream case). This process
measures its own CPU time (``time.process_time``, so the server's work is not counted) for:

* **bare**: the floor, ``httpx2`` streaming + splitting events on blank lines + ``json.loads``
  of each ``data:`` payload, doing nothing with the result;
  for Bedrock's binary ``application/vnd.amazon.eventstream`` frames, ``httpx2`` + botocore's
  frame parser (CRC checks included) + ``json.loads`` of each payload;
* **tau**: the full adapter through ``tau.ai.stream``: request building, the shared client,
  SSE decoding, JSON, event objects, the message being built, usage and cost.

Figures are µs of client CPU per SSE event (best of the runs, bare and tau interleaved so
that a noisy moment hits both) and two tau/bare ratios: the best over the best, and the median
of each run's ratio to the bare run just before it (``paired``, what the target is checked
on: ≤ 1.5×, ≤ 1.3× for many short streams). This machine drifts between a quiet and a slow
state, sometimes within one case; a pair is measured within a second, in one state, so the
paired median moves less between runs than the best over the best. To add a provider, write
a function returning a :class:`Case` and list it in :func:`cases`.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import functools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Coroutine, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT)]

import httpx2  # noqa: E402
from tests.factories import bedrock_event, sse  # noqa: E402

from tau.ai import Context, Model, Tool, UserMessage, stream  # noqa: E402
from tau.ai.core.types import ModelCost  # noqa: E402

TEXT_DELTAS = 5_000
SHORT_DELTAS = 200
TOOL_BYTES = 200_000
TOOL_DELTA_BYTES = 100
TARGET = 1.5
"""The tau/floor ratio aimed at."""
SHORT_TARGET = 1.3
"""The ratio aimed at for many short streams, where the fixed cost of a request weighs."""


WRITE_FILE = Tool(
    "write_file",
    "Write a file",
    {"type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}}},
)
"""The tool of the ~200 KB tool-call cases."""


@dataclass
class Case:
    """One benchmark: a response (a list of SSE records) and how tau consumes it."""

    name: str
    events: list[bytes]
    """The SSE records, each sent as one HTTP chunk."""
    run_tau: Callable[[str], Coroutine[Any, Any, None]]
    """Consume the stream through tau. The argument is the case's URL, ``<server>/<name>``:
    use it as the model's ``base_url`` (every path below it serves the same body)."""
    content_type: str = "text/event-stream"
    bare: Callable[[str, httpx2.AsyncClient], Coroutine[Any, Any, int]] | None = None
    """The floor for a non-SSE body (default :func:`bare_loop`); returns the event count."""
    requests: int = 1
    """Requests per measured run: many short ones weigh the fixed cost of a request."""
    per_chunk: int = 1
    """SSE records per HTTP chunk (a short answer from a fast server arrives in a few)."""

    @property
    def api(self) -> str:
        """The adapter's api, from the case name's first word."""
        return _APIS[self.name.split("-", 1)[0]]


_APIS = {
    "anthropic": "anthropic-messages",
    "openai": "openai-completions",
    "responses": "openai-responses",
    "azure": "azure-openai-responses",
    "google": "google-generative-ai",
    "vertex": "google-vertex",
    "mistral": "mistral-conversations",
    "bedrock": "bedrock-converse-stream",
    "codex": "openai-codex-responses",
    "geminicli": "google-gemini-cli",
}


async def consume(model: Model, context: Context, api_key: str | None = "bench") -> None:
    """Stream through tau, touching nothing, and fail loudly if the stream failed (``api_key``
    None: the key is resolved as a user's would be, from the environment or ``auth.json``)."""
    options: dict[str, Any] = {"max_retries": 0}
    if api_key is not None:
        options["api_key"] = api_key
    s = stream(model, context, **options)
    async for _ in s:
        pass
    message = await s.result()
    if message.stop_reason in ("error", "aborted"):
        raise RuntimeError(message.error_message)


# --------------------------------------------------------------------------- anthropic


def _anthropic_events(block: list[dict[str, Any]], stop: str) -> list[bytes]:
    usage = {"input_tokens": 1200, "output_tokens": 1, "cache_read_input_tokens": 0}
    events = [
        {"type": "message_start", "message": {"id": "msg_b", "model": "m", "usage": usage}},
        {"type": "ping"},
        *block,
        {"type": "message_delta", "delta": {"stop_reason": stop}, "usage": {"output_tokens": 900}},
        {"type": "message_stop"},
    ]
    return [sse(e) for e in events]


def _anthropic_model(base_url: str) -> Model:
    return Model(
        id="claude-sonnet-4-5",
        name="bench",
        api="anthropic-messages",
        provider="anthropic",
        base_url=base_url,
        reasoning=True,
        cost=ModelCost(input=3, output=15, cache_read=0.3, cache_write=3.75),
        max_tokens=64_000,
    )


def anthropic_text_case() -> Case:
    """5,000 text deltas of a few characters each."""
    start = {"type": "text", "text": ""}
    block = [
        {"type": "content_block_start", "index": 0, "content_block": start},
        *(
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": f" w{i}"},
            }
            for i in range(TEXT_DELTAS)
        ),
        {"type": "content_block_stop", "index": 0},
    ]

    async def run(url: str) -> None:
        await consume(_anthropic_model(url), Context([UserMessage("hi")]))

    return Case("anthropic-text", _anthropic_events(block, "end_turn"), run)


def anthropic_tool_case() -> Case:
    """One tool call whose ~200 KB of JSON arguments arrive in ~100-byte deltas."""
    content = "lorem ipsum dolor sit amet " * (TOOL_BYTES // 27)
    arguments = json.dumps({"path": "big.txt", "content": content})
    step = TOOL_DELTA_BYTES
    pieces = [arguments[i : i + step] for i in range(0, len(arguments), step)]
    start = {"type": "tool_use", "id": "toolu_b", "name": "write_file", "input": {}}
    block = [
        {"type": "content_block_start", "index": 0, "content_block": start},
        *(
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "input_json_delta", "partial_json": piece},
            }
            for piece in pieces
        ),
        {"type": "content_block_stop", "index": 0},
    ]
    tool = WRITE_FILE

    async def run(url: str) -> None:
        await consume(_anthropic_model(url), Context([UserMessage("hi")], tools=[tool]))

    return Case("anthropic-tool-200KB", _anthropic_events(block, "tool_use"), run)


# --------------------------------------------------------------------------- openai responses


def _responses_model(base_url: str) -> Model:
    return Model(
        id="gpt-5-mini",
        name="bench",
        api="openai-responses",
        provider="openai",
        base_url=base_url,
        reasoning=True,
        cost=ModelCost(input=0.25, output=2, cache_read=0.025),
        max_tokens=128_000,
    )


def _responses_events(
    added: dict[str, Any], deltas: list[dict[str, Any]], done: dict[str, Any]
) -> list[bytes]:
    usage = {
        "input_tokens": 1200,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 900,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 2100,
    }
    response = {"id": "resp_b", "status": "in_progress", "model": "gpt-5-mini", "usage": None}
    events = [
        {"type": "response.created", "sequence_number": 0, "response": response},
        {"type": "response.output_item.added", "output_index": 0, "item": added},
        *deltas,
        {"type": "response.output_item.done", "output_index": 0, "item": done},
        {
            "type": "response.completed",
            "response": {**response, "status": "completed", "usage": usage},
        },
    ]
    return [sse(e) for e in events]


def _azure_model(base_url: str) -> Model:
    # The resource URL comes from model.base_url when no AZURE_OPENAI_* setting is given.
    return replace(
        _responses_model(base_url), api="azure-openai-responses", provider="azure-openai-responses"
    )


def responses_text_case(
    name: str = "responses-text", model: Callable[[str], Model] = _responses_model
) -> Case:
    """5,000 output_text deltas of a few characters each, shaped as OpenAI sends them
    (Azure OpenAI sends the same events)."""
    pieces = [f" w{i}" for i in range(TEXT_DELTAS)]
    deltas = [
        {
            "type": "response.output_text.delta",
            "sequence_number": i + 3,
            "item_id": "msg_b",
            "output_index": 0,
            "content_index": 0,
            "delta": piece,
            "logprobs": [],
            "obfuscation": "x1y2",
        }
        for i, piece in enumerate(pieces)
    ]
    added = {
        "id": "msg_b",
        "type": "message",
        "status": "in_progress",
        "content": [],
        "role": "assistant",
    }
    text = {"type": "output_text", "annotations": [], "logprobs": [], "text": "".join(pieces)}
    done = {**added, "status": "completed", "content": [text]}

    async def run(url: str) -> None:
        await consume(model(url), Context([UserMessage("hi")]))

    return Case(name, _responses_events(added, deltas, done), run)


def responses_reasoning_case() -> Case:
    """5,000 reasoning-summary deltas, then the whole reasoning item with encrypted content."""
    pieces = [f" t{i}" for i in range(TEXT_DELTAS)]
    deltas = [
        {
            "type": "response.reasoning_summary_text.delta",
            "sequence_number": i + 3,
            "item_id": "rs_b",
            "output_index": 0,
            "summary_index": 0,
            "delta": piece,
            "obfuscation": "x1y2",
        }
        for i, piece in enumerate(pieces)
    ]
    added = {"id": "rs_b", "type": "reasoning", "summary": [], "encrypted_content": "gAAAA" * 200}
    summary = [{"type": "summary_text", "text": "".join(pieces)}]
    done = {**added, "summary": summary}
    part = {
        "type": "response.reasoning_summary_part.added",
        "item_id": "rs_b",
        "output_index": 0,
        "summary_index": 0,
    }

    async def run(url: str) -> None:
        await consume(_responses_model(url), Context([UserMessage("hi")]))

    return Case("responses-reasoning", _responses_events(added, [part, *deltas], done), run)


def responses_tool_case() -> Case:
    """One function call whose ~200 KB of JSON arguments arrive in ~100-byte deltas."""
    content = "lorem ipsum dolor sit amet " * (TOOL_BYTES // 27)
    arguments = json.dumps({"path": "big.txt", "content": content})
    step = TOOL_DELTA_BYTES
    deltas: list[dict[str, Any]] = [
        {
            "type": "response.function_call_arguments.delta",
            "item_id": "fc_b",
            "output_index": 0,
            "delta": arguments[i : i + step],
        }
        for i in range(0, len(arguments), step)
    ]
    deltas.append(
        {
            "type": "response.function_call_arguments.done",
            "item_id": "fc_b",
            "output_index": 0,
            "arguments": arguments,
        }
    )
    added = {
        "id": "fc_b",
        "type": "function_call",
        "call_id": "call_b",
        "name": "write_file",
        "arguments": "",
    }
    done = {**added, "arguments": arguments, "status": "completed"}
    tool = WRITE_FILE

    async def run(url: str) -> None:
        await consume(_responses_model(url), Context([UserMessage("hi")], tools=[tool]))

    return Case("responses-tool-200KB", _responses_events(added, deltas, done), run)


# --------------------------------------------------------------------------- openai-completions


def _chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
    # The shape api.openai.com streams (see the recordings under test_openai/).
    chunk = {
        "id": "chatcmpl-Dx0Xq5Xx9rHB2ehcHZCRDsnuymUXc",
        "object": "chat.completion.chunk",
        "created": 1782955818,
        "model": "gpt-4o-mini-2024-07-18",
        "service_tier": "default",
        "system_fingerprint": "fp_d0469e1700",
        "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
        "usage": None,
        "obfuscation": "auU6fTns",
    }
    return sse(chunk)


def _openai_events(first: dict[str, Any], deltas: list[dict[str, Any]], stop: str) -> list[bytes]:
    usage = {
        "prompt_tokens": 1200,
        "completion_tokens": 900,
        "total_tokens": 2100,
        "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0},
    }
    tail = {"id": "chatcmpl-x", "object": "chat.completion.chunk", "choices": [], "usage": usage}
    return [
        _chunk(first),
        *(_chunk(d) for d in deltas),
        _chunk({}, stop),
        sse(tail),
        sse("[DONE]"),
    ]


def _openai_model(base_url: str) -> Model:
    return Model(
        id="gpt-4o-mini",
        name="bench",
        api="openai-completions",
        provider="openai",
        base_url=base_url,
        cost=ModelCost(input=0.15, output=0.6, cache_read=0.075),
    )


def openai_text_case() -> Case:
    """5,000 chat-completions text deltas of a few characters each."""
    first = {"role": "assistant", "content": "", "refusal": None}
    deltas = [{"content": f" w{i}"} for i in range(TEXT_DELTAS)]

    async def run(url: str) -> None:
        await consume(_openai_model(url), Context([UserMessage("hi")]))

    return Case("openai-text", _openai_events(first, deltas, "stop"), run)


def openai_short_case() -> Case:
    """Many short answers: 200 text deltas each, 64 events to an HTTP chunk (as a fast server
    sends a short answer), 25 requests per measured run, so that what a request costs besides
    its events (building and sending it, the task, the message, the connection's
    bookkeeping) weighs as it does in a chat."""
    first = {"role": "assistant", "content": "", "refusal": None}
    deltas = [{"content": f" w{i}"} for i in range(SHORT_DELTAS)]

    async def run(url: str) -> None:
        await consume(_openai_model(url), Context([UserMessage("hi")]))

    events = _openai_events(first, deltas, "stop")
    return Case("openai-short-200", events, run, requests=25, per_chunk=64)


def openai_tool_case() -> Case:
    """One tool call whose ~200 KB of JSON arguments arrive in ~100-byte deltas, by index."""
    content = "lorem ipsum dolor sit amet " * (TOOL_BYTES // 27)
    arguments = json.dumps({"path": "big.txt", "content": content})
    step = TOOL_DELTA_BYTES
    pieces = [arguments[i : i + step] for i in range(0, len(arguments), step)]
    call = {"index": 0, "id": "call_b", "type": "function"}
    first = {"role": "assistant", "tool_calls": [{**call, "function": {"name": "write_file"}}]}
    deltas = [{"tool_calls": [{"index": 0, "function": {"arguments": p}}]} for p in pieces]
    tool = WRITE_FILE

    async def run(url: str) -> None:
        await consume(_openai_model(url), Context([UserMessage("hi")], tools=[tool]))

    return Case("openai-tool-200KB", _openai_events(first, deltas, "tool_calls"), run)


# --------------------------------------------------------------------------- mistral


def mistral_text_case() -> Case:
    """5,000 chat-completion chunks with a few characters of content each."""

    def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> bytes:
        data = {
            "id": "9f9d90210f194076abeee223863eaaf0",
            "object": "chat.completion.chunk",
            "created": 1764296393,
            "model": "mistral-medium-latest",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            **extra,
        }
        return sse(data)

    usage = {"prompt_tokens": 1200, "total_tokens": 2100, "completion_tokens": 900}
    events = [
        chunk({"role": "assistant", "content": ""}),
        *(chunk({"content": f" w{i}"}) for i in range(TEXT_DELTAS)),
        chunk({"content": ""}, "stop", usage=usage),
    ]
    model = Model(
        id="mistral-medium-latest",
        name="bench",
        api="mistral-conversations",
        provider="mistral",
        base_url="",
        cost=ModelCost(input=0.4, output=2),
    )

    async def run(url: str) -> None:
        await consume(replace(model, base_url=url), Context([UserMessage("hi")]))

    return Case("mistral-text", events, run)


# --------------------------------------------------------------------------- google


def _google_chunk(parts: list[dict[str, Any]], i: int, finish: str | None = None) -> bytes:
    # As Gemini sends them (the recordings in shared/fixtures/recorded/pydantic-ai/test_google):
    # every chunk repeats the usage so far and the response id, and lines end in CRLF.
    candidate: dict[str, Any] = {"content": {"parts": parts, "role": "model"}, "index": 0}
    if finish:
        candidate["finishReason"] = finish
    usage = {"promptTokenCount": 1200, "candidatesTokenCount": i, "totalTokenCount": 1200 + i}
    data = {
        "candidates": [candidate],
        "usageMetadata": usage,
        "modelVersion": "gemini-2.5-flash",
        "responseId": "w1peaMz6INOvnvgPgYfPiQY",
    }
    return sse(data).replace(b"\n", b"\r\n")


def _google_model(base_url: str) -> Model:
    return Model(
        id="gemini-2.5-flash",
        name="bench",
        api="google-generative-ai",
        provider="google",
        base_url=base_url,
        reasoning=True,
        cost=ModelCost(input=0.3, output=2.5, cache_read=0.075),
        max_tokens=65_536,
    )


def _vertex_model(base_url: str) -> Model:
    # A non-googleapis.com base URL replaces the Vertex host; an API key selects the
    # express endpoint (no project or credentials lookup).
    return replace(_google_model(base_url), api="google-vertex", provider="google-vertex")


def google_text_case(
    name: str = "google-text", model: Callable[[str], Model] = _google_model
) -> Case:
    """5,000 Gemini chunks of one short text part each (thoughts first, then the answer);
    Vertex AI streams the same chunks."""
    events = [
        _google_chunk([{"text": f" w{i}", **({"thought": True} if i < 500 else {})}], i)
        for i in range(TEXT_DELTAS)
    ]
    events.append(_google_chunk([{"text": ""}], TEXT_DELTAS, "STOP"))

    async def run(url: str) -> None:
        await consume(model(url), Context([UserMessage("hi")]))

    return Case(name, events, run)


def vertex_tool_case() -> Case:
    """One call whose ~200 KB of arguments stream by JSON path (``partialArgs``): the
    long string in ~100-byte ``stringValue`` pieces that continue one another, as Vertex AI
    sends them with ``streamFunctionCallArguments``."""
    content = "lorem ipsum dolor sit amet " * (TOOL_BYTES // 27)
    step = TOOL_DELTA_BYTES
    pieces = [content[i : i + step] for i in range(0, len(content), step)]
    opening = {"functionCall": {"name": "write_file", "willContinue": True}}
    parts: list[dict[str, Any]] = [opening]
    parts.append(
        {"functionCall": {"partialArgs": [{"jsonPath": "$.path", "stringValue": "big.txt"}]}}
    )
    parts[-1]["functionCall"]["willContinue"] = True
    for n, piece in enumerate(pieces):
        value = {"jsonPath": "$.content", "stringValue": piece}
        if n < len(pieces) - 1:
            value["willContinue"] = True
        parts.append({"functionCall": {"partialArgs": [value], "willContinue": True}})
    parts.append({"functionCall": {}})
    events = [_google_chunk([part], i) for i, part in enumerate(parts)]
    events.append(_google_chunk([{"text": ""}], len(parts), "STOP"))
    tool = WRITE_FILE

    async def run(url: str) -> None:
        await consume(_vertex_model(url), Context([UserMessage("hi")], tools=[tool]))

    return Case("vertex-tool-200KB", events, run)


# --------------------------------------------------------------------------- bedrock


def _bedrock_events(deltas: list[dict[str, Any]], stop: str, start: Any = None) -> list[bytes]:
    usage = {"inputTokens": 1200, "outputTokens": 900, "totalTokens": 2100}
    events = [bedrock_event("messageStart", {"role": "assistant"})]
    if start is not None:
        events.append(bedrock_event("contentBlockStart", {"contentBlockIndex": 0, "start": start}))
    events += [
        bedrock_event("contentBlockDelta", {"contentBlockIndex": 0, "delta": d}) for d in deltas
    ]
    events += [
        bedrock_event("contentBlockStop", {"contentBlockIndex": 0}),
        bedrock_event("messageStop", {"stopReason": stop}),
        bedrock_event("metadata", {"usage": usage, "metrics": {"latencyMs": 1}}),
    ]
    return events


def _bedrock_model(base_url: str) -> Model:
    return Model(
        id="us.anthropic.claude-sonnet-4-5-20250929-v1:0",
        name="bench",
        api="bedrock-converse-stream",
        provider="amazon-bedrock",
        base_url=base_url,
        reasoning=True,
        cost=ModelCost(input=3, output=15, cache_read=0.3, cache_write=3.75),
        max_tokens=64_000,
    )


async def bare_eventstream(url: str, client: httpx2.AsyncClient) -> int:
    """The floor for binary frames: httpx2 + botocore's frame parser + json.loads."""
    from botocore.eventstream import EventStreamBuffer

    count = 0
    buffer = EventStreamBuffer()
    loads = json.loads
    async with client.stream("POST", url, json={"stream": True}) as response:
        async for chunk in response.aiter_bytes():
            buffer.add_data(chunk)
            for message in buffer:
                loads(message.payload)
                count += 1
    return count


def bedrock_text_case() -> Case:
    """5,000 ConverseStream text deltas (bearer-token auth: no signing cost per call)."""
    deltas = [{"text": f" w{i}"} for i in range(TEXT_DELTAS)]

    async def run(url: str) -> None:
        await consume(_bedrock_model(url), Context([UserMessage("hi")]))

    events = _bedrock_events(deltas, "end_turn")
    return Case("bedrock-text", events, run, _EVENTSTREAM, bare_eventstream)


def bedrock_tool_case() -> Case:
    """One toolUse whose ~200 KB of JSON input arrives in ~100-byte deltas."""
    content = "lorem ipsum dolor sit amet " * (TOOL_BYTES // 27)
    arguments = json.dumps({"path": "big.txt", "content": content})
    step = TOOL_DELTA_BYTES
    deltas = [
        {"toolUse": {"input": arguments[i : i + step]}} for i in range(0, len(arguments), step)
    ]
    start = {"toolUse": {"toolUseId": "tooluse_b", "name": "write_file"}}
    tool = Tool("write_file", "Write a file", {"type": "object"})

    async def run(url: str) -> None:
        await consume(_bedrock_model(url), Context([UserMessage("hi")], tools=[tool]))

    events = _bedrock_events(deltas, "tool_use", start)
    return Case("bedrock-tool-200KB", events, run, _EVENTSTREAM, bare_eventstream)


_EVENTSTREAM = "application/vnd.amazon.eventstream"


# --------------------------------------------------------------------------- subscriptions

# A ChatGPT access token as the Codex backend's requests carry it (a JWT naming the account).
CODEX_TOKEN = ".".join(
    [
        "eyJhbGciOiJub25lIn0",
        base64.urlsafe_b64encode(
            json.dumps({"https://api.openai.com/auth": {"chatgpt_account_id": "acct"}}).encode()
        )
        .rstrip(b"=")
        .decode(),
        "sig",
    ]
)
GEMINI_CLI_KEY = json.dumps({"token": "ya29.bench", "projectId": "proj"})


@functools.lru_cache(maxsize=8)
def _codex_model(base_url: str) -> Model:
    # Built once per server, as a user builds a model once: the short streams' 25 requests
    # measure tau's request, not this harness's dataclasses.replace.
    return replace(
        _responses_model(base_url), api="openai-codex-responses", provider="openai-codex"
    )


def _codex_done(events: list[bytes]) -> list[bytes]:
    # Codex ends with response.done where OpenAI's API sends response.completed.
    return [*events[:-1], events[-1].replace(b"response.completed", b"response.done")]


def codex_text_case() -> Case:
    """The Responses text case as ChatGPT's Codex backend streams it."""
    base = responses_text_case("codex-text", _codex_model)

    async def run(url: str) -> None:
        await consume(_codex_model(url), Context([UserMessage("hi")]), CODEX_TOKEN)

    return replace(base, events=_codex_done(base.events), run_tau=run)


class StoreReads:
    """Counts how often the credential file is parsed (not merely checked with a ``stat``)."""

    parses = 0

    @classmethod
    def install(cls) -> None:
        from tau.ai.oauth.store import CredentialStore

        parse = CredentialStore._parse

        def counted(store: CredentialStore) -> Any:
            cls.parses += 1
            return parse(store)

        CredentialStore._parse = counted  # type: ignore[method-assign]


def codex_short_case(stored: bool) -> Case:
    """Short Codex answers (as ``openai_short_case``), 25 requests per run, with the key given
    as an option, or (``stored``) resolved from ``$TAU_HOME/auth.json`` holding a fresh login:
    the two should cost the same, the file parsed once, not per request."""
    deltas = [
        {"type": "response.output_text.delta", "item_id": "msg_b", "output_index": 0,
         "content_index": 0, "delta": f" w{i}"}
        for i in range(SHORT_DELTAS)
    ]  # fmt: skip
    added = {"id": "msg_b", "type": "message", "content": [], "role": "assistant"}
    events = _codex_done(_responses_events(added, deltas, added))
    name = "codex-short-stored" if stored else "codex-short-200"

    async def run(url: str) -> None:
        key = None if stored else CODEX_TOKEN
        await consume(_codex_model(url), Context([UserMessage("hi")]), key)

    return Case(name, events, run, requests=25, per_chunk=64)


def store_a_fresh_login() -> Path:
    """A ``TAU_HOME`` whose ``auth.json`` holds a Codex login valid for a day (used by
    ``codex-short-stored``); the environment points at it for the rest of the run."""
    from tau.ai.oauth import CredentialStore, OAuthCredentials

    home = Path(tempfile.mkdtemp(prefix="tau-bench-home-"))
    CredentialStore(home / "auth.json").set_oauth(
        "openai-codex", OAuthCredentials(CODEX_TOKEN, "rt", time.time() + 86_400)
    )
    os.environ["TAU_HOME"] = str(home)
    return home


def gemini_cli_text_case() -> Case:
    """The Gemini text case inside Cloud Code Assist's ``{"response": …}`` envelope."""
    events = [
        sse({"response": json.loads(e.decode().removeprefix("data: ").strip()), "traceId": "t"})
        for e in google_text_case().events
    ]

    async def run(url: str) -> None:
        model = replace(_google_model(url), api="google-gemini-cli", provider="google-gemini-cli")
        await consume(model, Context([UserMessage("hi")]), GEMINI_CLI_KEY)

    return Case("geminicli-text", events, run)


def cases() -> list[Case]:
    """Every benchmark case (add new providers here)."""
    return [
        anthropic_text_case(),
        anthropic_tool_case(),
        responses_text_case(),
        responses_reasoning_case(),
        responses_tool_case(),
        responses_text_case("azure-text", _azure_model),
        mistral_text_case(),
        openai_text_case(),
        openai_short_case(),
        openai_tool_case(),
        google_text_case(),
        google_text_case("vertex-text", _vertex_model),
        vertex_tool_case(),
        bedrock_text_case(),
        bedrock_tool_case(),
        codex_text_case(),
        codex_short_case(stored=False),
        codex_short_case(stored=True),
        gemini_cli_text_case(),
    ]


# --------------------------------------------------------------------------- the floor


async def bare_loop(url: str, client: httpx2.AsyncClient) -> int:
    """httpx2 + split on blank lines + json.loads of each data payload; returns the count.

    Lines end as the first chunk's do: in LF, or in CRLF as Google's do."""
    count = 0
    buffer = b""
    loads = json.loads
    newline = b""
    async with client.stream("POST", url, json={"stream": True}) as response:
        async for chunk in response.aiter_bytes():
            buffer += chunk
            if not newline:
                newline = b"\r\n" if b"\r\n" in buffer else b"\n"
                blank = newline * 2
            *records, buffer = buffer.split(blank)
            for record in records:
                for line in record.split(newline):
                    if line.startswith(b"data: "):
                        if line != b"data: [DONE]":  # chat completions' end marker
                            loads(line[6:])
                        count += 1
    return count


# --------------------------------------------------------------------------- server process


def serve(directory: str) -> None:
    """Child process: serve each ``<case>.json`` (a list of SSE records) under ``/<case>``."""
    from tests.ai.servers import LocalServer, Reply, Request

    bodies = {}
    for path in Path(directory).glob("*.json"):
        data = json.loads(path.read_text())
        records = [r.encode("latin-1") for r in data["records"]]
        size = data["per_chunk"]
        chunks = [b"".join(records[i : i + size]) for i in range(0, len(records), size)]
        bodies[path.stem] = (data["type"], chunks)

    def handler(request: Request) -> Reply:
        found = bodies.get(request.path.strip("/").split("/")[0])
        if found is None:
            return Reply(404, {"content-type": "text/plain"}, [b"unknown case"])
        return Reply(200, {"content-type": found[0]}, found[1])

    async def main() -> None:
        async with LocalServer(handler, lifetime=1800) as server:
            print(server.port, flush=True)
            # Serve until the parent closes our stdin.
            await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)

    asyncio.run(main())


# --------------------------------------------------------------------------- measuring


async def _cpu(run: Callable[[], Coroutine[Any, Any, None]]) -> float:
    start = time.process_time()
    await run()
    return time.process_time() - start


async def measure(
    selected: list[Case], base_url: str, runs: int
) -> list[tuple[float, float, float]]:
    """``(bare, tau, paired)`` per case: the best client CPU µs per event of each, and the
    median over the runs of tau's time over the bare loop's run just before it."""
    rows = []
    async with httpx2.AsyncClient(timeout=None) as client:
        for case in selected:
            count = len(case.events)
            url = f"{base_url}/{case.name}"

            async def bare(url: str = url, count: int = count, case: Case = case) -> None:
                for _ in range(case.requests):
                    assert await (case.bare or bare_loop)(url, client) == count

            async def tau(case: Case = case, url: str = url) -> None:
                for _ in range(case.requests):
                    await case.run_tau(url)

            await bare()
            await tau()
            bare_times, tau_times = [], []
            for _ in range(runs):
                bare_times.append(await _cpu(bare))
                tau_times.append(await _cpu(tau))
            events = count * case.requests
            paired = statistics.median(t / b for b, t in zip(bare_times, tau_times, strict=True))
            rows.append((min(bare_times) / events * 1e6, min(tau_times) / events * 1e6, paired))
    return rows


@contextlib.contextmanager
def serving(selected: list[Case]) -> Iterator[str]:
    """Serve the cases from a child process (:func:`serve`); yields its base URL."""
    with tempfile.TemporaryDirectory() as directory:
        for case in selected:
            records = [r.decode("latin-1") for r in case.events]
            data = {"type": case.content_type, "records": records, "per_chunk": case.per_chunk}
            Path(directory, f"{case.name}.json").write_text(json.dumps(data))
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])}
        server = subprocess.Popen(
            [sys.executable, __file__, "--serve", directory],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        try:
            assert server.stdout is not None
            yield f"http://127.0.0.1:{int(server.stdout.readline())}"
        finally:
            assert server.stdin is not None
            server.stdin.close()
            try:
                server.wait(10)
            except subprocess.TimeoutExpired:
                server.kill()


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--case", action="append", help="run only this case (repeatable)")
    parser.add_argument("--serve", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve)
        return
    selected = [c for c in cases() if not args.case or c.name in args.case]
    home = store_a_fresh_login()
    StoreReads.install()
    try:
        with serving(selected) as base_url:
            rows = asyncio.run(measure(selected, base_url, args.runs))
    finally:
        import shutil

        shutil.rmtree(home, ignore_errors=True)
    print(
        f"client CPU µs per event, best of {args.runs} runs, Python {sys.version.split()[0]}, "
        f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at the end"
    )
    print(
        "floor = httpx2 + SSE split + json.loads (Bedrock: httpx2 + botocore "
        "EventStreamBuffer + json.loads); target tau/floor ≤ 1.5× (short streams ≤ 1.3×)"
    )
    header = (
        f"{'api':<26}{'case':<22}{'events':>7}{'floor µs':>10}{'tau µs':>9}"
        f"{'best/best':>11}{'paired':>9}"
    )
    print(header)
    print("-" * len(header))
    for (bare_us, tau_us, paired), case in zip(rows, selected, strict=True):
        verdict = (
            "" if paired <= (SHORT_TARGET if case.requests > 1 else TARGET) else "  over target"
        )
        events = f"{len(case.events)}×{case.requests}" if case.requests > 1 else len(case.events)
        print(
            f"{case.api:<26}{case.name:<22}{events:>7}{bare_us:>10.2f}{tau_us:>9.2f}"
            f"{tau_us / bare_us:>10.2f}×{paired:>8.2f}×{verdict}"
        )
    if any(case.name == "codex-short-stored" for case in selected):
        print(
            f"auth.json parsed {StoreReads.parses} time(s) for every stored-key request of the "
            "run (a fresh token costs a stat, not a read, per request)"
        )


if __name__ == "__main__":
    main()
