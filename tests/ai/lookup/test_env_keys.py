"""API keys from the environment."""

from __future__ import annotations

from pathlib import Path

import pytest

from tau.ai import ProviderError, get_env_api_key
from tau.ai.lookup.env_keys import (
    _AWS_CREDENTIAL_VARS,
    _KEY_VARS,
    AUTHENTICATED,
    require_api_key,
    resolve_api_key,
)
from tau.ai.providers.faux import faux_model

_ALL_VARS = (
    {v for names in _KEY_VARS.values() for v in names}
    | set(_AWS_CREDENTIAL_VARS)
    | {
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "GOOGLE_CLOUD_API_KEY",
        "GOOGLE_CLOUD_PROJECT",
        "GCLOUD_PROJECT",
        "GOOGLE_CLOUD_LOCATION",
        "GOOGLE_APPLICATION_CREDENTIALS",
    }
)


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in _ALL_VARS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))  # no real ~/.config/gcloud ADC file


@pytest.mark.parametrize(
    ("provider", "var"),
    [
        ("openai", "OPENAI_API_KEY"),
        ("azure-openai-responses", "AZURE_OPENAI_API_KEY"),
        ("google", "GEMINI_API_KEY"),
        ("groq", "GROQ_API_KEY"),
        ("cerebras", "CEREBRAS_API_KEY"),
        ("xai", "XAI_API_KEY"),
        ("openrouter", "OPENROUTER_API_KEY"),
        ("vercel-ai-gateway", "AI_GATEWAY_API_KEY"),
        ("zai", "ZAI_API_KEY"),
        ("mistral", "MISTRAL_API_KEY"),
        ("minimax", "MINIMAX_API_KEY"),
        ("minimax-cn", "MINIMAX_CN_API_KEY"),
        ("huggingface", "HF_TOKEN"),
        ("opencode", "OPENCODE_API_KEY"),
        ("opencode-go", "OPENCODE_API_KEY"),
        ("kimi-coding", "KIMI_API_KEY"),
        ("deepseek", "DEEPSEEK_API_KEY"),
        ("github-copilot", "GITHUB_TOKEN"),
    ],
)
def test_single_variable(monkeypatch: pytest.MonkeyPatch, provider: str, var: str) -> None:
    assert get_env_api_key(provider) is None
    monkeypatch.setenv(var, "sk-test")
    assert get_env_api_key(provider) == "sk-test"


def test_precedence(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "api-key")
    assert get_env_api_key("anthropic") == "api-key"
    monkeypatch.setenv("ANTHROPIC_OAUTH_TOKEN", "oauth")
    assert get_env_api_key("anthropic") == "oauth"
    monkeypatch.setenv("GITHUB_TOKEN", "gh3")
    monkeypatch.setenv("GH_TOKEN", "gh2")
    assert get_env_api_key("github-copilot") == "gh2"
    monkeypatch.setenv("COPILOT_GITHUB_TOKEN", "gh1")
    assert get_env_api_key("github-copilot") == "gh1"


def test_empty_variable_is_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "")
    assert get_env_api_key("openai") is None


def test_unknown_and_keyless_providers() -> None:
    assert get_env_api_key("no-such-provider") is None
    assert get_env_api_key("local") is None
    assert get_env_api_key("openai-codex") is None


@pytest.mark.parametrize("var", _AWS_CREDENTIAL_VARS)
def test_bedrock_credential_chain(monkeypatch: pytest.MonkeyPatch, var: str) -> None:
    assert get_env_api_key("amazon-bedrock") is None
    monkeypatch.setenv(var, "x")
    assert get_env_api_key("amazon-bedrock") == AUTHENTICATED


def test_bedrock_needs_both_static_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIA")
    assert get_env_api_key("amazon-bedrock") is None
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret")
    assert get_env_api_key("amazon-bedrock") == AUTHENTICATED


def test_vertex_api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GOOGLE_CLOUD_API_KEY", "vk")
    assert get_env_api_key("google-vertex") == "vk"


def test_vertex_adc_needs_file_project_and_location(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    creds = tmp_path / "adc.json"
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(creds))
    monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", "proj")
    monkeypatch.setenv("GOOGLE_CLOUD_LOCATION", "us-central1")
    assert get_env_api_key("google-vertex") is None  # the file does not exist
    creds.write_text("{}")
    assert get_env_api_key("google-vertex") == AUTHENTICATED
    monkeypatch.delenv("GOOGLE_CLOUD_LOCATION")
    assert get_env_api_key("google-vertex") is None
    monkeypatch.setenv("GOOGLE_CLOUD_LOCATION", "us-central1")
    monkeypatch.delenv("GOOGLE_CLOUD_PROJECT")
    assert get_env_api_key("google-vertex") is None
    monkeypatch.setenv("GCLOUD_PROJECT", "proj")
    assert get_env_api_key("google-vertex") == AUTHENTICATED


def test_vertex_default_adc_location(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", "proj")
    monkeypatch.setenv("GOOGLE_CLOUD_LOCATION", "europe-west4")
    assert get_env_api_key("google-vertex") is None
    adc = tmp_path / ".config" / "gcloud" / "application_default_credentials.json"
    adc.parent.mkdir(parents=True)
    adc.write_text("{}")
    assert get_env_api_key("google-vertex") == AUTHENTICATED


def test_resolve_api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    model = faux_model(provider="openai")
    assert resolve_api_key(model, {}) is None
    monkeypatch.setenv("OPENAI_API_KEY", "from-env")
    assert resolve_api_key(model, {}) == "from-env"
    assert resolve_api_key(model, {"api_key": "explicit"}) == "explicit"
    assert resolve_api_key(model, {"api_key": ""}) == "from-env"


def test_require_api_key_names_what_to_set(monkeypatch: pytest.MonkeyPatch) -> None:
    anthropic = faux_model(provider="anthropic")
    with pytest.raises(ProviderError) as err:
        require_api_key(anthropic, {})
    assert str(err.value) == (
        "No API key for provider 'anthropic': "
        "set ANTHROPIC_OAUTH_TOKEN or ANTHROPIC_API_KEY or pass api_key"
    )
    with pytest.raises(ProviderError, match="'my-proxy': set its key variable or pass api_key"):
        require_api_key(faux_model(provider="my-proxy"), {})
    assert require_api_key(anthropic, {"api_key": "opt"}) == "opt"
    monkeypatch.setenv("ANTHROPIC_API_KEY", "env")
    assert require_api_key(anthropic, {}) == "env"
