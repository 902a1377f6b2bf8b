"""The proxy end to end: stream_proxy against a real uvicorn server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from functools import partial
from typing import Any

import httpx2
import pytest

from tau.agent import Agent, AgentTool
from tau.ai import (
    AbortController,
    AssistantMessage,
    AssistantMessageEventStream,
    Context,
    Model,
    Tool,
    ToolCall,
    UserMessage,
    stream_simple,
)
from tau.ai.adapters import OutputSchema
from tau.ai.providers.faux import FauxResponse, faux_calls, faux_model, text, thinking, tool_call
from tau.proxy import stream_proxy

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")

from tau.proxy.server import create_proxy_app, main
from tests.factories import serving

TOKEN = "test-token-123"


def client_view(model: Model) -> Model:
    """What a browser-side client knows of a server model: provider and id (no base URL)."""
    return Model(id=model.id, name=model.name, api=model.api, provider=model.provider, base_url="")


class Recorder:
    """A server stream_fn that records what it served."""

    def __init__(self) -> None:
        self.finals: list[AssistantMessage] = []
        self.event_types: list[list[str]] = []
        self.options: list[dict[str, Any]] = []
        self.active = 0
        self.max_active = 0
        self.idle = asyncio.Event()

    def __call__(self, model: Model, context: Context, **options: Any) -> Any:
        self.options.append(options)
        upstream = stream_simple(model, context, **options)
        types: list[str] = []
        self.event_types.append(types)
        out = AssistantMessageEventStream()
        recorder = self

        async def pump() -> None:
            recorder.active += 1
            recorder.max_active = max(recorder.max_active, recorder.active)
            try:
                async for event in upstream:
                    types.append(event.type)
                    out.push(event)
                recorder.finals.append(await upstream.result())
            finally:
                recorder.active -= 1
                if not recorder.active:
                    recorder.idle.set()
                await upstream.aclose()

        task = asyncio.ensure_future(pump())
        out.set_on_close(task.cancel)
        return out


def scripted() -> Model:
    return faux_model(
        [
            FauxResponse(
                [
                    thinking("Let me think about üñíçødé.", signature="sig-1"),
                    text("Here is the answer: "),
                    tool_call("lookup", {"query": 'weather "Paris"', "days": [1, 2]}, id="c1"),
                ],
                chunk_size=3,
            )
        ],
        id="proxy-model",
        reasoning=True,
    )


async def test_stream_proxy_rebuilds_the_message_exactly() -> None:
    served = scripted()
    recorder = Recorder()
    app = create_proxy_app(token=TOKEN, models=[served], stream_fn=recorder)
    async with serving(app) as url:
        stream = stream_proxy(
            client_view(served),
            Context([UserMessage("weather?")], system_prompt="sys"),
            proxy_url=url,
            auth_token=TOKEN,
            reasoning="high",
            temperature=0.2,
            api_key="never-sent",
        )
        types = [event.type async for event in stream]
        message = await stream.result()
    server_message = recorder.finals[0]
    assert types == recorder.event_types[0]
    assert message.content == server_message.content
    assert message.content[0].thinking == "Let me think about üñíçødé."  # type: ignore[union-attr]
    assert message.content[0].thinking_signature == "sig-1"  # type: ignore[union-attr]
    call = message.content[2]
    assert isinstance(call, ToolCall) and call.arguments == {
        "query": 'weather "Paris"',
        "days": [1, 2],
    }
    assert message.stop_reason == "toolUse" == server_message.stop_reason
    assert message.usage == server_message.usage
    assert (message.api, message.provider, message.model) == ("faux", "faux", "proxy-model")
    # Only the allowed options crossed; the client's key did not.
    assert recorder.options[0]["reasoning"] == "high"
    assert recorder.options[0]["temperature"] == 0.2
    assert "api_key" not in recorder.options[0]
    assert faux_calls(served)[0][0].system_prompt == "sys"


async def test_partial_tool_arguments_are_rebuilt_while_streaming() -> None:
    served = faux_model(
        [FauxResponse([tool_call("t", {"text": "abcdefghijklmnop"}, id="c1")], chunk_size=4)]
    )
    app = create_proxy_app(token=TOKEN, models=[served])
    partials: list[dict[str, Any]] = []
    async with serving(app) as url:
        stream = stream_proxy(
            client_view(served), Context([UserMessage("x")]), proxy_url=url, auth_token=TOKEN
        )
        async for event in stream:
            if event.type == "toolcall_delta":
                partials.append(dict(event.partial.content[0].arguments))  # type: ignore[union-attr]
    assert partials[-1] == {"text": "abcdefghijklmnop"}
    assert any(
        p.get("text", "").startswith("abc") and p["text"] != "abcdefghijklmnop" for p in partials
    )


async def test_agent_runs_through_the_proxy() -> None:
    served = faux_model(
        [
            FauxResponse([tool_call("double", {"n": 21}, id="c1")]),
            FauxResponse([text("It is 42.")]),
        ]
    )
    app = create_proxy_app(token=TOKEN, models=[served])

    def execute(cid: str, params: Any, signal: Any, on_update: Any) -> str:
        return str(params["n"] * 2)

    tool = AgentTool(
        "double",
        "Double a number",
        {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
        execute=execute,
    )
    async with serving(app) as url:
        agent = Agent(
            model=client_view(served),
            tools=[tool],
            stream_fn=partial(stream_proxy, proxy_url=url, auth_token=TOKEN),
        )
        await asyncio.wait_for(agent.prompt("double 21"), 10)
    assert [m.role for m in agent.state.messages] == [
        "user",
        "assistant",
        "toolResult",
        "assistant",
    ]
    assert agent.state.messages[-1].text == "It is 42."  # type: ignore[union-attr]
    second_context = faux_calls(served)[1][0]
    assert [t.name for t in second_context.tools or []] == ["double"]
    assert second_context.messages[-1].content[0].text == "42"  # type: ignore[union-attr]


class Spy:
    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, model: Model, context: Context, **options: Any) -> Any:
        self.calls += 1
        return stream_simple(model, context, **options)


async def test_wrong_token_is_401_and_nothing_is_streamed() -> None:
    served = faux_model([FauxResponse(["secret"])])
    spy = Spy()
    app = create_proxy_app(token=TOKEN, models=[served], stream_fn=spy)
    body = {
        "model": {"id": served.id, "api": "faux", "provider": "faux"},
        "context": {"messages": []},
    }
    async with serving(app) as url:
        async with httpx2.AsyncClient() as client:
            for headers in ({"authorization": "Bearer wrong"}, {}, {"authorization": TOKEN}):
                response = await client.post(f"{url}/api/stream", json=body, headers=headers)
                assert response.status_code == 401
                assert response.headers["content-type"].startswith("application/json")
                assert response.json() == {"error": "missing or invalid bearer token"}
                assert "data:" not in response.text
        stream = stream_proxy(
            client_view(served), Context([UserMessage("x")]), proxy_url=url, auth_token="nope"
        )
        types = [e.type async for e in stream]
        message = await stream.result()
    assert types == ["start", "error"]
    assert message.stop_reason == "error"
    assert message.error_message == "Proxy error: 401 missing or invalid bearer token"
    assert spy.calls == 0


async def test_oversized_body_is_413_declared_or_chunked() -> None:
    served = faux_model([FauxResponse(["x"])])
    spy = Spy()
    app = create_proxy_app(token=TOKEN, models=[served], stream_fn=spy, max_body_bytes=2000)
    auth = {"authorization": f"Bearer {TOKEN}"}
    async with serving(app) as url:
        async with httpx2.AsyncClient() as client:
            big = {"model": {}, "context": {"messages": [{"role": "user", "content": "x" * 5000}]}}
            response = await client.post(f"{url}/api/stream", json=big, headers=auth)
            assert response.status_code == 413
            assert "too large" in response.json()["error"]

            async def chunks() -> AsyncIterator[bytes]:
                for _ in range(10):
                    yield b" " * 500

            response = await client.post(f"{url}/api/stream", content=chunks(), headers=auth)
            assert response.status_code == 413
        stream = stream_proxy(
            client_view(served),
            Context([UserMessage("y" * 5000)]),
            proxy_url=url,
            auth_token=TOKEN,
        )
        message = await stream.result()
    assert message.stop_reason == "error" and "413" in (message.error_message or "")
    assert spy.calls == 0


async def test_model_allow_list_and_bad_requests() -> None:
    served = faux_model([FauxResponse(["x"])])
    other = faux_model([FauxResponse(["y"])], id="other-model")
    app = create_proxy_app(token=TOKEN, models=[served])
    auth = {"authorization": f"Bearer {TOKEN}"}
    async with serving(app) as url:
        stream = stream_proxy(
            client_view(other), Context([UserMessage("x")]), proxy_url=url, auth_token=TOKEN
        )
        message = await stream.result()
        assert message.error_message == (
            "Proxy error: 403 model faux/other-model is not allowed on this proxy"
        )
        async with httpx2.AsyncClient() as client:
            response = await client.post(f"{url}/api/stream", content=b"{not json", headers=auth)
            assert response.status_code == 400 and "not valid JSON" in response.json()["error"]
            valid_model = {"id": served.id, "api": "faux", "provider": "faux"}
            response = await client.post(
                f"{url}/api/stream",
                json={"model": valid_model, "context": {"messages": [{"role": "robot"}]}},
                headers=auth,
            )
            assert response.status_code == 400 and "unknown role" in response.json()["error"]
            response = await client.post(
                f"{url}/api/stream",
                json={
                    "model": valid_model,
                    "context": {"messages": []},
                    "options": {"apiKey": "x"},
                },
                headers=auth,
            )
            assert (
                response.status_code == 400
                and "'apiKey' is not accepted" in response.json()["error"]
            )
            response = await client.get(f"{url}/api/stream", headers=auth)
            assert response.status_code == 405


async def test_a_client_cannot_redirect_the_server_model() -> None:
    served = faux_model([FauxResponse(["from the server's own model"])])
    app = create_proxy_app(token=TOKEN, models=[served])
    hostile = Model(
        id=served.id, name="x", api="faux", provider="faux", base_url="https://attacker.example"
    )
    async with serving(app) as url:
        message = await stream_proxy(
            hostile, Context([UserMessage("x")]), proxy_url=url, auth_token=TOKEN
        ).result()
    assert message.text == "from the server's own model"


async def test_two_concurrent_clients_do_not_affect_each_other() -> None:
    first = faux_model([FauxResponse([text("alpha " * 20)], chunk_size=5, delay=0.002)], id="m1")
    second = faux_model([FauxResponse([text("beta " * 20)], chunk_size=5, delay=0.002)], id="m2")
    recorder = Recorder()
    app = create_proxy_app(token=TOKEN, models=[first, second], stream_fn=recorder)

    async def run(model: Model) -> tuple[list[str], AssistantMessage]:
        stream = stream_proxy(
            client_view(model), Context([UserMessage("go")]), proxy_url=url, auth_token=TOKEN
        )
        deltas = [e.delta async for e in stream if e.type == "text_delta"]  # type: ignore[union-attr]
        return deltas, await stream.result()

    async with serving(app) as url:
        (d1, m1), (d2, m2) = await asyncio.wait_for(asyncio.gather(run(first), run(second)), 10)
    assert m1.text == "alpha " * 20 and m2.text == "beta " * 20
    assert "".join(d1) == m1.text and "".join(d2) == m2.text
    assert (m1.model, m2.model) == ("m1", "m2")
    assert recorder.max_active == 2  # both were streaming at the same time


async def test_client_abort_cancels_the_upstream_request() -> None:
    served = faux_model([FauxResponse([text("x" * 400)], chunk_size=1, delay=0.01)])
    recorder = Recorder()
    app = create_proxy_app(token=TOKEN, models=[served], stream_fn=recorder)
    controller = AbortController()
    async with serving(app) as url:
        stream = stream_proxy(
            client_view(served),
            Context([UserMessage("x")]),
            proxy_url=url,
            auth_token=TOKEN,
            signal=controller.signal,
        )
        async for event in stream:
            if event.type == "text_delta":
                controller.abort()
        message = await stream.result()
        await asyncio.wait_for(recorder.idle.wait(), 3)
    assert message.stop_reason == "aborted"
    assert len(recorder.event_types[0]) < 100  # the server stopped long before the end


async def test_server_stream_without_terminal_event_is_an_error_not_a_hang() -> None:
    served = faux_model([])

    def truncated(model: Model, context: Context, **options: Any) -> Any:
        stream = AssistantMessageEventStream()
        stream.end()
        return stream

    app = create_proxy_app(token=TOKEN, models=[served], stream_fn=truncated)
    async with serving(app) as url:
        message = await asyncio.wait_for(
            stream_proxy(
                client_view(served), Context([UserMessage("x")]), proxy_url=url, auth_token=TOKEN
            ).result(),
            5,
        )
    assert message.error_message == "Proxy error: the stream ended without a done or error event"


async def test_provider_error_crosses_the_proxy() -> None:
    served = faux_model([FauxResponse([text("half")], error="upstream 529 overloaded")])
    app = create_proxy_app(token=TOKEN, models=[served])
    async with serving(app) as url:
        message = await stream_proxy(
            client_view(served), Context([UserMessage("x")]), proxy_url=url, auth_token=TOKEN
        ).result()
    assert message.stop_reason == "error"
    assert message.error_message == "upstream 529 overloaded"
    assert message.text == "half"


async def test_unreachable_proxy_is_a_proxy_error() -> None:
    message = await stream_proxy(
        client_view(faux_model([])),
        Context([UserMessage("x")]),
        proxy_url="http://127.0.0.1:9",
        auth_token=TOKEN,
        max_retries=0,
    ).result()
    assert message.stop_reason == "error"
    assert (message.error_message or "").startswith("Proxy error: Could not connect")


def test_command_line(monkeypatch: pytest.MonkeyPatch, tmp_path: Any, capsys: Any) -> None:
    from tau.ai.capabilities.serialization import dump_model

    served: list[tuple[Any, dict[str, Any]]] = []
    models_file = tmp_path / "models.json"
    model = faux_model([])
    models_file.write_text(json.dumps([dump_model(model)]))
    monkeypatch.setenv("TAU_PROXY_TOKEN", "env-token")
    code = main(
        ["--port", "9999", "--models-file", str(models_file)],
        serve=lambda app, **kw: served.append((app, kw)),
    )
    options = dict(served[0][1])
    assert options.pop("http").__name__ == "GuardedH11Protocol"  # header timeout, per-IP cap
    assert code == 0 and options == {"host": "127.0.0.1", "port": 9999}
    monkeypatch.delenv("TAU_PROXY_TOKEN")
    with pytest.raises(SystemExit):
        main(["--models-file", str(models_file)], serve=lambda app, **kw: None)
    assert "a token is required" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["--token", "t", "--model", "nope"], serve=lambda app, **kw: None)
    assert "use provider/model-id" in capsys.readouterr().err


def test_tools_travel_as_schemas() -> None:
    from tau.ai.capabilities.serialization import dump_tool

    tool = AgentTool("t", "d", None, execute=lambda *a: "x")
    assert dump_tool(tool) == dump_tool(Tool("t", "d"))


async def test_the_output_schema_crosses_the_proxy_and_is_checked() -> None:
    served = faux_model([FauxResponse(['{"a": 1}'])])
    recorder = Recorder()
    app = create_proxy_app(token=TOKEN, models=[served], stream_fn=recorder)
    output: OutputSchema = {
        "name": "A",
        "schema": {"type": "object", "properties": {"a": {"type": "integer"}}},
    }
    async with serving(app) as url:
        stream = stream_proxy(
            client_view(served),
            Context([UserMessage("x")]),
            proxy_url=url,
            auth_token=TOKEN,
            output_schema=output,
        )
        assert (await stream.result()).text == '{"a": 1}'
        assert recorder.options[0]["output_schema"] == output
        async with httpx2.AsyncClient() as client:
            response = await client.post(
                f"{url}/api/stream",
                json={
                    "model": {"id": served.id, "api": "faux", "provider": "faux"},
                    "context": {"messages": []},
                    "options": {"outputSchema": {"name": "A", "schema": "not an object"}},
                },
                headers={"authorization": f"Bearer {TOKEN}"},
            )
            assert response.status_code == 400
            assert "outputSchema must be" in response.json()["error"]
