"""Each adapter takes exactly its own options: an unknown key is a TypeError at the call that
names the close matches, never silently ignored."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import tau.ai
from tau.ai import Context, Model, UserMessage, complete, complete_sync, stream, stream_simple
from tau.ai.adapters import register_api_provider, unregister_api_providers
from tau.ai.core.options import SimpleStreamOptions, StreamOptions, option_keys
from tau.ai.lookup.catalog import get_model
from tau.ai.lookup.registry import get_api_provider, get_api_providers
from tau.ai.providers.faux import faux_model

SRC = Path(__file__).resolve().parents[3] / "src"
CTX = Context([UserMessage("hi")])


def claude() -> Model:
    model = get_model("anthropic", "claude-sonnet-4-5")
    assert model is not None
    return model


def test_a_misspelt_key_names_the_close_match() -> None:
    with pytest.raises(TypeError) as caught:
        stream(claude(), CTX, thinking_enable=True)  # type: ignore[call-arg]
    text = str(caught.value)
    assert "stream() for api 'anthropic-messages'" in text
    assert "'thinking_enable' (did you mean 'thinking_enabled'?)" in text


def test_another_adapters_key_is_refused() -> None:
    # Vertex AI's `project` means nothing to the Messages API: it is refused, not ignored.
    with pytest.raises(TypeError, match="unknown option 'project'"):
        stream(claude(), CTX, project="p")
    with pytest.raises(TypeError, match="'reasoning_efort' \\(did you mean 'reasoning_effort'"):
        stream(get_model("openai", "gpt-5-mini"), CTX, reasoning_efort="low")  # type: ignore[arg-type, call-arg]


def test_several_unknown_keys_are_all_named() -> None:
    with pytest.raises(TypeError) as caught:
        stream(claude(), CTX, colour=1, flavour=2)  # type: ignore[call-arg]
    assert "unknown options 'colour', 'flavour'" in str(caught.value)


def test_stream_simple_takes_the_simple_options_and_what_it_passes_on() -> None:
    # stream_simple() takes settings: a key no provider reads is refused, naming the close
    # settings key (the provider's own key, by its own name, is taken as before).
    with pytest.raises(TypeError, match="stream_simple\\(\\) for api 'anthropic-messages'"):
        stream_simple(claude(), CTX, thinking_enabld=True)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="did you mean 'reasoning'"):
        complete_sync(claude(), CTX, reasonin="high")  # type: ignore[call-arg]


async def test_every_declared_key_is_accepted() -> None:
    checked = 0
    for api in get_api_providers():
        provider = get_api_provider(api)
        assert provider is not None
        if provider.source_id != "builtin":
            continue  # an adapter whose extra is not installed, or a test's own
        checked += 1
        assert provider.option_keys is not None, api
        # Every adapter takes at least every common option, and stream_simple the simple ones.
        assert option_keys(StreamOptions) <= provider.option_keys, api
        assert provider.simple_option_keys is not None
        assert option_keys(SimpleStreamOptions) <= provider.simple_option_keys, api
    assert checked >= 7  # every adapter without an extra, at least
    model = faux_model()
    message = await complete(model, CTX, tool_choice="auto", max_tokens=5, signal=None)  # type: ignore[arg-type]
    assert message.stop_reason == "stop"


async def test_the_unknown_key_fails_before_any_request() -> None:
    model = faux_model()
    with pytest.raises(TypeError):
        await complete(model, CTX, temprature=0.2)  # type: ignore[call-arg]
    # Nothing was sent: the faux model still has its first (echo) reply to give.
    assert (await complete(model, CTX)).text == "hi"


def test_a_custom_adapter_declares_its_options_or_takes_any() -> None:
    seen: list[dict[str, Any]] = []

    def fake(model: Model, context: Context, options: Any) -> Any:
        seen.append(dict(options))
        return "stream"

    model = Model("m", "m", "custom-api", "p", "http://h")
    register_api_provider("custom-api", fake, source_id="test-options")
    try:
        assert stream(model, CTX, anything=1) == "stream"  # type: ignore[call-arg,comparison-overlap]
        register_api_provider("custom-api", fake, source_id="test-options", options=StreamOptions)
        with pytest.raises(TypeError, match="'anything'"):
            stream(model, CTX, anything=1)  # type: ignore[call-arg]
        assert stream(model, CTX, max_tokens=3) == "stream"  # type: ignore[comparison-overlap]
    finally:
        unregister_api_providers("test-options")
    assert seen == [{"anything": 1}, {"max_tokens": 3}]


def test_option_types_are_public_and_load_no_adapter() -> None:
    code = (
        "import json, sys, tau.ai\n"
        "from tau.ai import AnthropicOptions, GoogleVertexOptions, ProviderStreamOptions\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('tau.ai.providers')"
        " or m.split('.')[0] in ('httpx2', 'botocore', 'xllamacpp'))))"
    )
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    out = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True, env=env
    ).stdout
    loaded = json.loads(out)
    assert loaded and all(m.endswith(".options") or m.count(".") <= 3 for m in loaded), loaded
    assert not [m for m in loaded if m.rsplit(".", 1)[-1] in ("adapter", "request", "decoder")]
    assert not [m for m in loaded if not m.startswith("tau.")]
    # Every option type is in tau.ai's public face.
    for name in tau.ai._LAZY:
        assert name in tau.ai.__all__ and getattr(tau.ai, name) is not None
