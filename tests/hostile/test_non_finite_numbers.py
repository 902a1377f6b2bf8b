"""NaN and Infinity where a request is built or parsed.

JSON has neither. Python's ``json`` writes them as bare ``NaN``/``Infinity`` (invalid JSON a
provider rejects, or reads as something else), and ``jiter``/``json`` read them back unless
told not to. Each case sends or parses one, and the clean behaviour is a clear error that
names the value, with nothing sent upstream.
"""

from __future__ import annotations

import asyncio
import importlib.util
import math

import httpx2
import pytest

from tau.ai import AssistantMessage, Context, ProviderError, ToolCall, UserMessage, stream
from tau.ai.streaming.sse import decode_json_data, parse_event_json, parse_json
from tau.proxy import stream_proxy
from tests.ai.fault_cases import CASES, AdapterCase, case_params
from tests.ai.servers import LocalServer, Reply
from tests.factories import tool_result

CASE_PARAMS = case_params()


def _valid(case: AdapterCase) -> Reply:
    return Reply(200, {"content-type": case.content_type}, case.events(["hi"]))


async def _error_of(
    case: AdapterCase, context: Context, client: httpx2.AsyncClient, **options: object
) -> tuple[str, LocalServer]:
    async with LocalServer([_valid(case)]) as server:
        s = stream(case.model(server.url), context, api_key="k", client=client, **options)  # type: ignore[arg-type]
        events = [event async for event in s]
    assert events[-1].type == "error", [e.type for e in events]
    return events[-1].error.error_message or "", server


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
@pytest.mark.parametrize("case", CASE_PARAMS)
async def test_a_non_finite_temperature_is_a_clear_error_and_nothing_is_sent(
    case: AdapterCase, value: float, client: httpx2.AsyncClient
) -> None:
    # Hostile: temperature=NaN (or ±inf) on every HTTP adapter.
    message, server = await _error_of(case, Context([UserMessage("hi")]), client, temperature=value)
    # Clean: an error naming the number and where it is; no request reached the server.
    assert repr(value) in message and "temperature" in message, message
    assert "non-finite" in message
    assert server.requests == []


@pytest.mark.parametrize("case", CASE_PARAMS)
async def test_a_non_finite_tool_argument_in_the_history_is_a_clear_error(
    case: AdapterCase, client: httpx2.AsyncClient
) -> None:
    # Hostile: an earlier tool call's arguments hold NaN. Anthropic, Google and Bedrock send
    # arguments as an object; chat completions, Responses and Mistral as a JSON string, where a
    # body-level check alone would never see it.
    model = case.model("http://127.0.0.1:9")
    call = ToolCall("call_1", "measure", {"reading": {"values": [1.0, math.nan]}})
    context = Context(
        [
            UserMessage("measure"),
            AssistantMessage(
                [call], api=model.api, provider=model.provider, model=model.id,
                stop_reason="toolUse",
            ),
            tool_result("call_1", name="measure"),
        ]
    )  # fmt: skip
    message, server = await _error_of(case, context, client)
    # Clean: the error names the non-finite value and the path to it.
    assert "nan" in message and "values[1]" in message, message
    assert server.requests == []


async def test_the_proxy_client_refuses_nan_before_sending() -> None:
    # Hostile: stream_proxy with temperature=NaN.
    async with LocalServer([Reply(500)]) as proxy:
        s = stream_proxy(
            CASES[0].model(""),
            Context([UserMessage("hi")]),
            proxy_url=proxy.url,
            auth_token="t",
            temperature=math.nan,
        )
        final = await s.result()
    # Clean: a proxy error naming the option; the proxy never got the request.
    assert final.stop_reason == "error"
    assert (final.error_message or "").startswith("Proxy error")
    assert "options.temperature" in (final.error_message or "")
    assert proxy.requests == []


@pytest.mark.parametrize(
    "text",
    ['{"a": NaN}', '{"a": Infinity}', '{"a": -Infinity}', '{"a": [1, NaN]}'],
)
def test_stream_json_with_nan_is_malformed(text: str) -> None:
    # Hostile: an upstream event whose JSON holds NaN/Infinity (jiter and json accept them
    # by default). Clean: every SSE JSON parser refuses it as malformed.
    with pytest.raises(ValueError):
        parse_json(text)
    with pytest.raises(ProviderError, match="malformed JSON"):
        parse_event_json(text, "Google")
    with pytest.raises(ProviderError, match="Malformed JSON"):
        decode_json_data(text, "stream chunk")


async def test_the_proxy_server_rejects_non_finite_numbers() -> None:
    pytest.importorskip("starlette")
    from tau.ai import dump_context, dump_model
    from tau.ai.providers.faux import FauxResponse, faux_model, text
    from tau.proxy.server import create_proxy_app
    from tests.factories import serving

    served = faux_model([FauxResponse([text("never")])], id="m")
    app = create_proxy_app(token="t", models=[served])
    head = (
        '{"model": ' + __import__("json").dumps(dump_model(served)) + ', "context": '
        + __import__("json").dumps(dump_context(Context([UserMessage("hi")])))
    )  # fmt: skip
    async with serving(app) as url, httpx2.AsyncClient() as http:
        for temperature in ("NaN", "Infinity", "-Infinity", "1e999", "1" + "0" * 400):
            # Hostile: a request body whose temperature JSON reader would make non-finite.
            body = head + ', "options": {"temperature": ' + temperature + "}}"
            response = await http.post(
                url + "/api/stream",
                content=body,
                headers={"authorization": "Bearer t", "content-type": "application/json"},
            )
            # Clean: 400 with a message, never a 500 and never a stream.
            assert response.status_code == 400, (temperature, response.text)
            assert response.json()["error"]
        await asyncio.sleep(0)


@pytest.mark.skipif(importlib.util.find_spec("xllamacpp") is None, reason="no xllamacpp")
@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
async def test_a_non_finite_temperature_on_the_local_model_is_a_clear_error(value: float) -> None:
    # Hostile: the embedded model has no JSON body to refuse NaN; llama.cpp sampled with it.
    from tau.ai import get_model

    model = get_model("local", "smollm2-135m-instruct")
    events = [e async for e in stream(model, Context([UserMessage("hi")]), temperature=value)]
    # Clean: one error event naming the option and the number, before any model is loaded.
    assert events[-1].type == "error"
    message = events[-1].error.error_message or ""
    assert repr(value) in message and "temperature" in message and "non-finite" in message
    assert not any(e.type == "text_delta" for e in events)
