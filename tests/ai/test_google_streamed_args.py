"""Gemini / Vertex function calls whose arguments stream by JSON path (``partialArgs``).

The streams are written from the documented wire format: a call opens with ``{name,
willContinue: true}`` (which may carry ``id`` and ``thoughtSignature``); each following part
carries ``partialArgs``, a value at an RFC 9535 path each (``stringValue``, ``numberValue``,
``boolValue`` or ``nullValue``), where a string with ``willContinue`` goes on in the next
entry for the same path; an empty ``functionCall`` or a part in which nothing has
``willContinue`` ends the call. The request side is ``toolConfig.functionCallingConfig.
streamFunctionCallArguments``.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import itertools
import json
import re
from typing import Any

import pytest
from google.genai import types as genai
from hypothesis import given, settings
from hypothesis import strategies as st

from tau.ai import AssistantMessage, Context, Tool, UserMessage, get_models, stream
from tau.ai import stream_simple as simple
from tau.ai.adapters import launch_stream
from tau.ai.core.types import Model, TextContent, ToolCall
from tau.ai.providers.google import request as shared
from tau.ai.providers.google.decoder import GoogleDecoder
from tau.ai.streaming.builder import MessageBuilder
from tests.ai.servers import SSE_HEADERS, LocalServer, Reply
from tests.ai.stream_checks import check_grammar
from tests.ai.streaming.test_json_path import json_arguments
from tests.ai.test_google import SIG, chunk, gemini, validate_body, vertex

TOOLS = [Tool("plan", "Plan a trip", {"type": "object"})]


def vertex3(base_url: str) -> Model:
    return dataclasses.replace(vertex(base_url), id="gemini-3-pro-preview")


def opening(name: str, **extra: Any) -> dict[str, Any]:
    part: dict[str, Any] = {"functionCall": {"name": name, "willContinue": True}}
    if "id" in extra:
        part["functionCall"]["id"] = extra.pop("id")
    part.update(extra)
    return part


def args(*values: dict[str, Any], more: bool = True) -> dict[str, Any]:
    call: dict[str, Any] = {"partialArgs": list(values)}
    if more:
        call["willContinue"] = True
    return {"functionCall": call}


def value(path: str, **field: Any) -> dict[str, Any]:
    return {"jsonPath": path, **field}


END = {"functionCall": {}}


async def play(body: list[bytes]) -> tuple[list[Any], AssistantMessage, Any]:
    """Stream ``body`` from a local server through ``stream_simple`` on Vertex's Gemini 3;
    returns the events, the final message and the request body."""
    async with LocalServer([Reply(200, SSE_HEADERS, body)]) as server:
        s = simple(
            vertex3(server.url),
            Context([UserMessage("plan it")], tools=TOOLS),
            api_key="k",
            max_retries=0,
        )
        events = [e async for e in s]
        message = await s.result()
        request = json.loads(server.requests[0].body)
    check_grammar(events, message)
    validate_body(request)
    return events, message, request


async def partials(chunks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The first call's arguments as ``partial`` shows them after each chunk."""
    seen: list[dict[str, Any]] = []

    async def run(builder: MessageBuilder) -> None:
        mapper = GoogleDecoder(builder)
        for data in chunks:
            mapper.apply(data)
            calls = [b for b in builder.message.content if isinstance(b, ToolCall)]
            if calls:
                seen.append(copy.deepcopy(calls[0].arguments))
        mapper.finish()

    await launch_stream(gemini(), {}, run).result()
    return seen


def deltas_by_block(events: list[Any]) -> dict[int, str]:
    out: dict[int, str] = {}
    for event in events:
        if event.type == "toolcall_delta":
            out[event.content_index] = out.get(event.content_index, "") + event.delta
    return out


# --------------------------------------------------------------------------- the stream


NESTED = [
    [opening("plan", id="call_1", thoughtSignature=SIG)],
    [args(value("$.trip.city", stringValue="Paris"))],
    [
        args(
            value("$.trip.days[0].morning", stringValue="Louvre"),
            value("$.trip.days[0].hours", numberValue=3),
        )
    ],
    [args(value("$.trip.days[1]", nullValue="NULL_VALUE"))],
    [args(value("$['budget €']", numberValue=1200.5), value("$.ok", boolValue=True))],
    [END],
]


async def test_nested_objects_and_arrays_by_path() -> None:
    events, message, request = await play(
        [
            chunk(*parts, finish="STOP" if i == len(NESTED) - 1 else None)
            for i, parts in enumerate(NESTED)
        ]
    )
    expected = {
        "trip": {"city": "Paris", "days": [{"morning": "Louvre", "hours": 3}, None]},
        "budget €": 1200.5,
        "ok": True,
    }
    assert request["toolConfig"] == {"functionCallingConfig": {"streamFunctionCallArguments": True}}
    assert message.stop_reason == "toolUse"
    assert message.content == [ToolCall("call_1", "plan", expected, SIG)]
    text = deltas_by_block(events)[0]
    assert text == json.dumps(expected, ensure_ascii=False, separators=(",", ":"))
    assert json.loads(text) == expected
    assert [e.type for e in events] == [
        "start", "toolcall_start", *["toolcall_delta"] * 5, "toolcall_end", "done",
    ]  # fmt: skip


async def test_partial_shows_the_arguments_growing() -> None:
    assert await partials([candidate(*parts) for parts in NESTED]) == [
        {},
        {"trip": {"city": "Paris"}},
        {"trip": {"city": "Paris", "days": [{"morning": "Louvre", "hours": 3}]}},
        {"trip": {"city": "Paris", "days": [{"morning": "Louvre", "hours": 3}, None]}},
        {"trip": {"city": "Paris", "days": [{"morning": "Louvre", "hours": 3}, None]}, "budget €": 1200.5, "ok": True},
        {"trip": {"city": "Paris", "days": [{"morning": "Louvre", "hours": 3}, None]}, "budget €": 1200.5, "ok": True},
    ]  # fmt: skip


SPLIT = [
    opening("plan"),
    args(value("$.note", stringValue='He said "', willContinue=True)),
    args(value("$.note", stringValue="bonjour\n", willContinue=True)),
    args(value("$.note", stringValue="😀\\"), value("$.n", numberValue=-0.5)),
    END,
]


async def test_a_string_split_across_fragments() -> None:
    events, message, _ = await play(
        [chunk(part, finish="STOP" if part is END else None) for part in SPLIT]
    )
    expected = {"note": 'He said "bonjour\n😀\\', "n": -0.5}
    assert message.tool_calls[0].arguments == expected
    assert json.loads(deltas_by_block(events)[0]) == expected
    # While the string streams, partial shows it growing.
    assert (await partials([candidate(part) for part in SPLIT]))[1:3] == [
        {"note": 'He said "'},
        {"note": 'He said "bonjour\n'},
    ]


async def test_calls_without_arguments() -> None:
    events, message, _ = await play(
        [
            chunk(opening("plan", id="a")),
            chunk(END),
            chunk({"functionCall": {"name": "plan", "id": "b"}}, finish="STOP"),
        ]
    )
    assert [(c.id, c.arguments) for c in message.tool_calls] == [("a", {}), ("b", {})]
    assert deltas_by_block(events) == {0: "{}", 1: "{}"}
    assert message.stop_reason == "toolUse"


async def test_two_calls_in_a_row_after_text() -> None:
    events, message, _ = await play(
        [
            chunk({"text": "Planning two trips."}),
            chunk(opening("plan", id="c1", thoughtSignature=SIG)),
            chunk(args(value("$.city", stringValue="Rome"))),
            chunk(END, opening("plan", id="c2")),
            # The end of the second call: a partialArgs part where nothing continues.
            chunk(args(value("$.city", stringValue="Oslo"), more=False)),
            chunk({"text": ""}, finish="STOP"),
        ]
    )
    assert message.content == [
        TextContent("Planning two trips."),
        ToolCall("c1", "plan", {"city": "Rome"}, SIG),
        ToolCall("c2", "plan", {"city": "Oslo"}),
    ]
    assert deltas_by_block(events) == {1: '{"city":"Rome"}', 2: '{"city":"Oslo"}'}
    ends = [e.content_index for e in events if e.type == "toolcall_end"]
    assert ends == [1, 2]


async def test_a_final_call_that_is_not_terminated_ends_with_the_answer() -> None:
    events, message, _ = await play(
        [
            chunk(opening("plan", id="last")),
            chunk(args(value("$.city", stringValue="Lima"), value("$.days", numberValue=4))),
            chunk({"text": ""}, finish="STOP"),
        ]
    )
    assert events[-1].type == "done" and message.stop_reason == "toolUse"
    assert message.tool_calls == [ToolCall("last", "plan", {"city": "Lima", "days": 4})]
    assert deltas_by_block(events)[0] == '{"city":"Lima","days":4}'


async def test_whole_calls_still_arrive_whole() -> None:
    events, message, _ = await play(
        [chunk({"functionCall": {"name": "plan", "args": {"a": [1, 2]}}}, finish="STOP")]
    )
    assert message.tool_calls[0].arguments == {"a": [1, 2]}
    assert json.loads(deltas_by_block(events)[0]) == {"a": [1, 2]}


# --------------------------------------------------------------------------- any split


def _path(parent: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{parent}[{key}]"
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key):
        return f"{parent}.{key}"
    return f"{parent}[{json.dumps(key)}]"


def _leaves(node: Any, path: str = "$") -> list[tuple[str, Any]]:
    if isinstance(node, dict):
        return [leaf for k, v in node.items() for leaf in _leaves(v, _path(path, k))]
    if isinstance(node, list):
        return [leaf for i, v in enumerate(node) for leaf in _leaves(v, _path(path, i))]
    return [(path, node)]


def _entry(path: str, scalar: Any) -> dict[str, Any]:
    if scalar is None:
        return value(path, nullValue="NULL_VALUE")
    if isinstance(scalar, bool):
        return value(path, boolValue=scalar)
    if isinstance(scalar, str):
        return value(path, stringValue=scalar)
    return value(path, numberValue=scalar)


def _cuts(data: st.DataObject, size: int) -> list[int]:
    """Sorted cut points splitting ``range(size)`` into non-empty runs."""
    if size <= 1:
        return []
    points = data.draw(st.sets(st.integers(1, size - 1), max_size=4))
    return sorted(points)


def _split(items: list[Any], cuts: list[int]) -> list[list[Any]]:
    bounds = [0, *cuts, len(items)]
    return [items[a:b] for a, b in itertools.pairwise(bounds)]


def decode(chunks: list[dict[str, Any]]) -> tuple[list[Any], AssistantMessage]:
    """Feed parsed chunks through the Gemini stream mapping, in memory."""

    async def go() -> tuple[list[Any], AssistantMessage]:
        async def run(builder: MessageBuilder) -> None:
            mapper = GoogleDecoder(builder)
            for data in chunks:
                mapper.apply(data)
            mapper.finish()

        s = launch_stream(gemini(), {}, run)
        events = [e async for e in s]
        return events, await s.result()

    return asyncio.run(go())


def candidate(*parts: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    content: dict[str, Any] = {"content": {"role": "model", "parts": list(parts)}}
    if finish:
        content["finishReason"] = finish
    return {"candidates": [content]}


@settings(max_examples=120, deadline=None)
@given(arguments=json_arguments, data=st.data())
def test_any_split_decodes_to_the_whole_call(arguments: dict[str, Any], data: Any) -> None:
    _, whole = decode(
        [candidate({"functionCall": {"name": "f", "args": arguments}}, finish="STOP")]
    )
    # Every string value in pieces, every run of entries in its own part, parts in chunks.
    entries: list[dict[str, Any]] = []
    for path, scalar in _leaves(arguments):
        if isinstance(scalar, str):
            pieces = _split(list(scalar), _cuts(data, len(scalar))) or [[]]
            for i, piece in enumerate(pieces):
                entry = value(path, stringValue="".join(piece))
                if i < len(pieces) - 1:
                    entry["willContinue"] = True
                entries.append(entry)
        else:
            entries.append(_entry(path, scalar))
    parts = [args(*group) for group in _split(entries, _cuts(data, len(entries)))]
    ending = data.draw(st.sampled_from(["empty", "last part", "none"]))
    if ending == "empty":
        parts.append(END)
    elif ending == "last part":
        del parts[-1]["functionCall"]["willContinue"]
    parts.insert(0, opening("f"))
    chunks = [candidate(*group) for group in _split(parts, _cuts(data, len(parts)))]
    chunks.append(candidate({"text": ""}, finish="STOP"))

    events, message = decode(chunks)
    assert events[-1].type == "done", message.error_message
    assert message.tool_calls[0].arguments == whole.tool_calls[0].arguments == arguments
    text = deltas_by_block(events)[0]
    assert json.loads(text) == arguments
    assert text == json.dumps(arguments, ensure_ascii=False, separators=(",", ":"))


# --------------------------------------------------------------------------- the request


def test_the_option_sets_stream_function_call_arguments_next_to_tool_choice() -> None:
    context = Context([UserMessage("x")], tools=TOOLS)
    body = shared.request_body(
        gemini("gemini-3-pro-preview"),
        context,
        {"stream_function_call_arguments": True, "tool_choice": "any"},
    )
    config = body["toolConfig"]
    assert config == {"functionCallingConfig": {"mode": "ANY", "streamFunctionCallArguments": True}}
    validate_body(body)
    # google-genai's own type reads the field back (and would reject a misspelt one).
    parsed = genai.ToolConfig.model_validate(config)
    assert parsed.function_calling_config is not None
    assert parsed.function_calling_config.stream_function_call_arguments is True
    assert parsed.model_dump(by_alias=True, exclude_none=True, mode="json") == config
    # Without tools there is nothing to call, and nothing is sent.
    bare = shared.request_body(
        gemini(), Context([UserMessage("x")]), {"stream_function_call_arguments": True}
    )
    assert "toolConfig" not in bare


@pytest.mark.parametrize(
    ("api", "model_id", "on"),
    [
        ("google-vertex", "gemini-3-pro-preview", True),
        ("google-vertex", "gemini-3.1-flash-lite", True),
        ("google-vertex", "gemini-2.5-pro", False),
        ("google-vertex", "gemini-flash-latest", False),
        ("google-generative-ai", "gemini-3-pro-preview", False),
    ],
)
def test_stream_simple_turns_it_on_for_gemini_3_on_vertex(
    api: str, model_id: str, on: bool
) -> None:
    model = Model(id=model_id, name=model_id, api=api, provider="p", base_url="")
    assert shared.simple_options(model, {})["stream_function_call_arguments"] is on
    # The caller's choice wins either way.
    for asked in (True, False):
        chosen = shared.simple_options(model, {"stream_function_call_arguments": asked})
        assert chosen["stream_function_call_arguments"] is asked


def test_the_catalog_rule() -> None:
    streamed = {m.id for m in get_models("google-vertex") if shared.streams_call_arguments(m)}
    assert streamed and all(m.startswith("gemini-3") for m in streamed)
    assert not any(shared.streams_call_arguments(m) for m in get_models("google"))


async def test_stream_without_the_option_sends_no_tool_config() -> None:
    async with LocalServer(
        [Reply(200, SSE_HEADERS, [chunk({"text": "ok"}, finish="STOP")])]
    ) as server:
        context = Context([UserMessage("x")], tools=TOOLS)
        await stream(vertex3(server.url), context, api_key="k").result()
        body = json.loads(server.requests[0].body)
    assert "toolConfig" not in body
