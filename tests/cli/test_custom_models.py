"""``$TAU_HOME/models.json`` (pi's format), bare model ids, ``--base-url``, and which model is
remembered as the last used."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tau.ai.providers.faux import faux_calls
from tau.cli import models
from tau.cli.app import App, Settings
from tau.cli.errors import UsageError
from tau.cli.models import (
    AD_HOC_PROVIDER,
    ModelChoiceError,
    ad_hoc_model,
    check_credentials,
    endpoint_of,
    model_from_entry,
    parse_model,
    remembered_spec,
)
from tau.cli.tools import Workspace
from tests.ai.servers import refused_url
from tests.cli.conftest import TauRunner


@pytest.fixture
def home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.setenv("TAU_HOME", str(tmp_path))
    monkeypatch.setattr(models, "has_key", lambda provider: False)
    return tmp_path


def _write(home: Path, providers: dict[str, Any]) -> None:
    (home / "models.json").write_text(json.dumps({"providers": providers}))


OLLAMA = {
    "baseUrl": "http://localhost:11434/v1",
    "api": "openai-completions",
    "apiKey": "OLLAMA_KEY",
    "headers": {"X-Team": "tools", "X-Token": "TEAM_TOKEN"},
    "compat": {"maxTokensField": "max_tokens", "supportsDeveloperRole": False},
    "models": [
        {
            "id": "qwen2.5-coder:7b",
            "name": "Qwen Coder",
            "reasoning": True,
            "input": ["text", "image"],
            "contextWindow": 32768,
            "maxTokens": 8192,
            "cost": {"input": 0.1, "output": 0.2, "cacheRead": 0.01, "cacheWrite": 0},
        },
        {"id": "llama3.1", "baseUrl": "http://gpu:8000/v1"},
    ],
}


def test_a_provider_and_its_models(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _write(home, {"ollama": OLLAMA})
    monkeypatch.setenv("TEAM_TOKEN", "t-123")
    model = parse_model("ollama/qwen2.5-coder:7b")
    assert (model.provider, model.api, model.base_url) == (
        "ollama",
        "openai-completions",
        "http://localhost:11434/v1",
    )
    assert (model.name, model.reasoning, model.input) == ("Qwen Coder", True, ["text", "image"])
    assert (model.context_window, model.max_tokens, model.cost.input) == (32768, 8192, 0.1)
    assert model.compat is not None and model.compat.max_tokens_field == "max_tokens"
    # A header value that names a variable is the variable's value; others are literal.
    assert model.headers == {"X-Team": "tools", "X-Token": "t-123"}
    other = parse_model("ollama/llama3.1")  # pi's defaults, its own URL
    assert (other.base_url, other.context_window, other.max_tokens) == (
        "http://gpu:8000/v1",
        128_000,
        16_384,
    )
    assert parse_model("qwen2.5-coder:7b").provider == "ollama", "a bare id finds it"


def test_keys_from_a_variable_a_command_or_the_file(
    home: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _write(home, {"ollama": OLLAMA})
    with pytest.raises(ModelChoiceError, match=r"no API key for provider 'ollama': set OLLAMA_KEY"):
        check_credentials(parse_model("ollama/llama3.1"))
    monkeypatch.setenv("OLLAMA_KEY", "k-1")
    check_credentials(parse_model("ollama/llama3.1"))
    assert models.custom_key("ollama") == "k-1"
    _write(
        home,
        {
            "local": {
                "api": "faux",
                "baseUrl": "faux://keyed",
                "apiKey": "!echo s3cret",
                "models": [{"id": "m"}],
            }
        },
    )
    assert models.custom_key("local") == "s3cret"
    failing = {"api": "openai-completions", "baseUrl": "http://x/v1", "apiKey": "!exit 3"}
    failing["models"] = [{"id": "m"}]
    _write(home, {"broken": failing})
    with pytest.raises(ModelChoiceError, match=r"`exit 3` failed: exit status 3"):
        check_credentials(parse_model("broken/m"))


async def test_the_agent_sends_the_key_models_json_gives(home: Path, tmp_path: Path) -> None:
    _write(
        home,
        {
            "keyed": {
                "api": "faux",
                "baseUrl": "faux://keyed-test",
                "apiKey": "!echo s3cret",
                "models": [{"id": "m"}],
            }
        },
    )
    model = parse_model("keyed/m")
    app = App(Settings(model=model, tool_names=[], workspace=Workspace(tmp_path)), None)
    await app.run("hi")
    _, options = faux_calls(model)[-1]
    assert options["api_key"] == "s3cret"


def test_a_catalog_provider_behind_a_proxy_and_with_new_models(home: Path) -> None:
    _write(
        home,
        {
            "anthropic": {
                "baseUrl": "https://proxy.example/anthropic",
                "headers": {"X-Via": "proxy"},
            },
            "openai": {"models": [{"id": "gpt-future", "contextWindow": 1000000}]},
        },
    )
    proxied = parse_model("anthropic/claude-sonnet-4-5")
    assert proxied.base_url == "https://proxy.example/anthropic"
    assert proxied.headers is not None and proxied.headers["X-Via"] == "proxy"
    assert proxied.cost.input > 0, "the catalog's prices stay"
    future = parse_model("openai/gpt-future")
    assert (future.api, future.base_url) == (
        parse_model("openai/gpt-4o").api,
        "https://api.openai.com/v1",
    )
    assert future.context_window == 1_000_000
    with pytest.raises(ModelChoiceError, match="no API key for provider 'openai'"):
        check_credentials(future)


def test_bare_ids(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert models.model_spec(parse_model("gpt-4o")) == "openai/gpt-4o"  # the maker, not Azure
    assert models.model_spec(parse_model("claude-sonnet-4-5")) == "anthropic/claude-sonnet-4-5"
    monkeypatch.setattr(models, "has_key", lambda provider: provider == "azure-openai-responses")
    assert parse_model("gpt-4o").provider == "azure-openai-responses", "the one with a key"
    with pytest.raises(
        UsageError, match=r"offered by several providers: minimax/MiniMax-M2, minimax-cn/MiniMax-M2"
    ):
        parse_model("MiniMax-M2")
    with pytest.raises(UsageError, match=r"unknown model 'gpt4o' \(did you mean: openai/gpt-4o"):
        parse_model("gpt4o")
    assert parse_model("anthropic").provider == "anthropic", "a provider alone: its default"


def test_base_url_models(home: Path) -> None:
    ad_hoc = ad_hoc_model("llama3", "http://localhost:8080/v1/")
    assert (ad_hoc.provider, ad_hoc.api, ad_hoc.base_url) == (
        AD_HOC_PROVIDER,
        "openai-completions",
        "http://localhost:8080/v1",
    )
    assert ad_hoc.compat is not None and ad_hoc.compat.max_tokens_field == "max_tokens"
    named = ad_hoc_model("openai/gpt-4o", "https://gateway.example/v1")
    assert (named.provider, named.api, named.base_url) == (
        "openai",
        "openai-responses",
        "https://gateway.example/v1",
    )
    sluggish = ad_hoc_model("meta-llama/Llama-3-8B", "http://vllm:8000/v1")
    assert (sluggish.provider, sluggish.id) == (AD_HOC_PROVIDER, "meta-llama/Llama-3-8B")
    with pytest.raises(UsageError, match="--base-url needs an http:// or https:// URL"):
        ad_hoc_model("x", "localhost:8080")
    # A session records what the name alone cannot find again.
    assert endpoint_of(ad_hoc) == {
        "api": "openai-completions",
        "baseUrl": "http://localhost:8080/v1",
    }
    assert endpoint_of(named) == {
        "api": "openai-responses",
        "baseUrl": "https://gateway.example/v1",
    }
    assert endpoint_of(parse_model("openai/gpt-4o")) is None
    entry = {"provider": AD_HOC_PROVIDER, "modelId": "llama3", **(endpoint_of(ad_hoc) or {})}
    assert model_from_entry(entry) == ad_hoc
    entry = {"provider": "openai", "modelId": "gpt-4o", **(endpoint_of(named) or {})}
    assert model_from_entry(entry) == named


def test_only_configuration_is_remembered_as_the_last_used(home: Path, tmp_path: Path) -> None:
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF")
    _write(home, {"ollama": OLLAMA})
    assert remembered_spec(parse_model("openai/gpt-4o")) == "openai/gpt-4o"
    assert remembered_spec(parse_model("ollama/llama3.1")) == "ollama/llama3.1"
    assert (
        remembered_spec(parse_model("local/smollm2-135m-instruct")) == "local/smollm2-135m-instruct"
    )
    assert remembered_spec(parse_model(f"local/{gguf}")) is None
    assert remembered_spec(parse_model("faux/echo")) is None
    assert remembered_spec(ad_hoc_model("llama3", "http://localhost:8080/v1")) is None
    assert remembered_spec(ad_hoc_model("openai/gpt-4o", "https://gateway.example/v1")) is None


def test_an_unreachable_base_url_is_one_clear_line(tau: TauRunner) -> None:
    done = tau("--base-url", refused_url(), "hi")
    assert done.returncode == 1
    assert done.stderr.startswith("tau: error: cannot ask http://127.0.0.1:")
    assert "name one with -m" in done.stderr and "Traceback" not in done.stderr
