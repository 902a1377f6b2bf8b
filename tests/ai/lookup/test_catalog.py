"""The generated model catalog: loads lazily, holds sane entries, regenerates identically."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

from tau.ai import (
    UnknownModelError,
    find_model,
    get_model,
    get_models,
    get_providers,
    models_are_equal,
)
from tau.ai.adapters import calculate_cost
from tau.ai.core.types import Usage
from tau.ai.lookup.catalog import catalog_source
from tau.ai.lookup.env_keys import key_variables
from tau.ai.lookup.registry import BUILTIN_PROVIDERS

REPO = Path(__file__).resolve().parents[3]
CATALOG = REPO / "src" / "tau" / "ai" / "lookup" / "catalog_data.json"


def test_providers_are_sorted_and_include_the_main_ones() -> None:
    providers = get_providers()
    assert providers == sorted(providers)
    for p in [
        "anthropic",
        "openai",
        "google",
        "amazon-bedrock",
        "mistral",
        "groq",
        "xai",
        "openrouter",
        "azure-openai-responses",
        "google-vertex",
        "local",
        "faux",
    ]:
        assert p in providers, p


def test_known_entry_matches_models_dev() -> None:
    m = get_model("anthropic", "claude-sonnet-4-5")
    assert m is not None
    assert m.api == "anthropic-messages"
    assert m.base_url == "https://api.anthropic.com"
    assert m.reasoning is True
    assert m.input == ["text", "image"]
    assert (m.cost.input, m.cost.output, m.cost.cache_read, m.cost.cache_write) == (
        3,
        15,
        0.3,
        3.75,
    )
    assert m.context_window == 200_000
    assert m.max_tokens == 64_000


def test_every_entry_is_sane() -> None:
    total = 0
    for provider in get_providers():
        models = get_models(provider)
        assert models, provider
        assert [m.id for m in models] == sorted(m.id for m in models)
        for m in models:
            total += 1
            assert m.provider == provider
            assert m.id and m.name
            assert m.context_window > 0 and m.max_tokens > 0, m.id
            assert m.input in (["text"], ["text", "image"])
            assert min(m.cost.input, m.cost.output, m.cost.cache_read, m.cost.cache_write) >= 0
            assert m.base_url == "" or m.base_url.startswith(("https://", "faux://")), m.base_url
    assert total > 500


def test_every_api_in_the_catalog_is_a_builtin_api() -> None:
    apis = {m.api for p in get_providers() for m in get_models(p)}
    assert apis <= set(BUILTIN_PROVIDERS), apis - set(BUILTIN_PROVIDERS)


def test_every_keyed_provider_has_an_environment_variable() -> None:
    ambient = {"google-vertex", "amazon-bedrock", "local", "faux"}
    # Keyed only by a subscription login (`tau login <provider>`, tau.ai.oauth).
    logins = {"google-antigravity", "google-gemini-cli", "openai-codex"}
    missing = [p for p in get_providers() if p not in ambient | logins and not key_variables(p)]
    assert missing == []


def test_provider_mappings() -> None:
    gpt = get_model("openai", "gpt-4o")
    assert gpt is not None and gpt.api == "openai-responses"
    assert gpt.base_url == "https://api.openai.com/v1"
    azure = get_model("azure-openai-responses", "gpt-4o")
    assert azure is not None
    assert (azure.api, azure.base_url, azure.cost) == ("azure-openai-responses", "", gpt.cost)
    assert {m.id for m in get_models("azure-openai-responses")} == {
        m.id for m in get_models("openai")
    }
    for m in get_models("zai"):
        assert m.api == "openai-completions"
        assert m.base_url == "https://api.z.ai/api/coding/paas/v4"
        assert m.compat is not None
        assert m.compat.supports_developer_role is False
        assert m.compat.thinking_format == "zai"
    for m in get_models("huggingface"):
        assert m.compat is not None and m.compat.supports_developer_role is False
    for m in get_models("google-vertex"):
        assert m.api == "google-vertex" and m.id.startswith("gemini")
        assert m.base_url == "https://{location}-aiplatform.googleapis.com"
    for m in get_models("amazon-bedrock"):
        assert m.api == "bedrock-converse-stream"
        assert not m.id.startswith("ai21.jamba")
    assert {m.api for m in get_models("groq")} == {"openai-completions"}
    assert {m.api for m in get_models("mistral")} == {"mistral-conversations"}
    assert get_models("opencode") and {m.api for m in get_models("opencode")} >= {
        "openai-responses",
        "anthropic-messages",
    }


def test_static_entries() -> None:
    local = get_model("local", "smollm2-135m-instruct")
    assert local is not None
    assert (local.api, local.base_url, local.context_window, local.max_tokens) == (
        "llama-cpp",
        "",
        8192,
        2048,
    )
    assert local.name == "SmolLM2 135M Instruct (embedded)"
    assert local.cost.input == local.cost.output == 0
    echo = get_model("faux", "echo")
    assert echo is not None and echo.api == "faux"


async def test_catalog_echo_model_streams() -> None:
    from tau.ai import Context, UserMessage, complete

    echo = get_model("faux", "echo")
    assert echo is not None
    message = await complete(echo, Context([UserMessage("ping")]))
    assert message.text == "ping"


def test_unknown_lookups() -> None:
    assert find_model("anthropic", "no-such-model") is None
    assert find_model("no-such-provider", "x") is None
    assert get_models("no-such-provider") == []


def test_lookups_return_fresh_objects() -> None:
    a = get_model("anthropic", "claude-sonnet-4-5")
    b = get_model("anthropic", "claude-sonnet-4-5")
    assert a is not None and b is not None
    assert a == b and a is not b
    a.base_url = "https://proxy.example"
    a.cost.input = 999
    again = get_model("anthropic", "claude-sonnet-4-5")
    assert again is not None
    assert again.base_url == "https://api.anthropic.com" and again.cost.input == 3


def test_models_are_equal() -> None:
    a = get_model("openai", "gpt-4o")
    b = get_model("openai", "gpt-4o")
    azure = get_model("azure-openai-responses", "gpt-4o")
    assert models_are_equal(a, b)
    assert not models_are_equal(a, azure)
    assert not models_are_equal(a, None) and not models_are_equal(None, None)


def test_catalog_prices_feed_calculate_cost() -> None:
    m = get_model("anthropic", "claude-sonnet-4-5")
    assert m is not None
    cost = calculate_cost(m, Usage(input=1_000_000, output=1_000_000))
    assert cost.total == pytest.approx(18.0)


def test_catalog_is_not_loaded_at_import() -> None:
    code = (
        "import tau.ai, tau.ai.lookup.catalog as c; assert c._index is None; "
        "tau.ai.get_providers(); assert c._index is not None"
    )
    subprocess.run([sys.executable, "-c", code], check=True, env=_env())


def test_generator_is_deterministic(tmp_path: Path) -> None:
    version = metadata.version("models-dev")
    assert catalog_source() == f"models-dev {version}", (
        "the installed models-dev differs from the one the catalog was generated from: "
        "pin it in pyproject.toml and run scripts/generate_catalog.py"
    )
    out = tmp_path / "catalog.json"
    subprocess.run(
        [sys.executable, str(REPO / "scripts" / "generate_catalog.py"), "--output", str(out)],
        check=True,
        capture_output=True,
    )
    assert out.read_bytes() == CATALOG.read_bytes()


def test_catalog_file_is_valid_pi_json() -> None:
    data = json.loads(CATALOG.read_text())
    first = data["providers"]["anthropic"][0]
    assert set(first) >= {
        "id",
        "name",
        "api",
        "provider",
        "baseUrl",
        "reasoning",
        "input",
        "cost",
        "contextWindow",
        "maxTokens",
    }


def test_catalog_and_the_typing_marker_ship_in_the_wheel(tmp_path: Path) -> None:
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(tmp_path),
            str(REPO),
        ],
        check=True,
        capture_output=True,
    )
    import zipfile

    (wheel,) = tmp_path.glob("tau-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "tau/ai/lookup/catalog_data.json" in names
    # PEP 561: without it, a user's type checker sees tau as untyped (Agent[City] is Any).
    assert "tau/py.typed" in names


def _env() -> dict[str, str]:
    import os

    return {**os.environ, "PYTHONPATH": str(REPO / "src")}


# --------------------------------------------------------------------------- lookups that fail


def test_unknown_model_is_a_clear_error_with_close_matches() -> None:
    with pytest.raises(UnknownModelError) as caught:
        get_model("anthropic", "claude-sonet-4-5")
    message = str(caught.value)
    assert "unknown model 'claude-sonet-4-5' for provider 'anthropic'" in message
    assert "did you mean: claude-sonnet-4-5" in message
    assert isinstance(caught.value, LookupError)
    with pytest.raises(
        UnknownModelError, match=r"unknown provider 'antropic' \(did you mean: anthropic"
    ):
        get_model("antropic", "claude-sonnet-4-5")
    with pytest.raises(UnknownModelError, match="unknown model 'nope'"):
        get_model("anthropic", "nope")


def test_find_model_is_the_none_returning_form() -> None:
    assert find_model("anthropic", "nope") is None
    assert find_model("nope", "nope") is None
    found = find_model("anthropic", "claude-sonnet-4-5")
    assert found is not None and found.id == "claude-sonnet-4-5"


def test_one_argument_provider_slash_id() -> None:
    m = get_model("anthropic/claude-sonnet-4-5")
    assert (m.provider, m.id) == ("anthropic", "claude-sonnet-4-5")
    # Only the first slash separates: ids may contain more.
    routed = get_model("openrouter/anthropic/claude-sonnet-4.5")
    assert (routed.provider, routed.id) == ("openrouter", "anthropic/claude-sonnet-4.5")
    assert find_model("openrouter/anthropic/claude-sonnet-4.5") is not None
    with pytest.raises(UnknownModelError, match="provider/id"):
        get_model("claude-sonnet-4-5")
