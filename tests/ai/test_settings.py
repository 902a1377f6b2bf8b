"""Typed settings: checked where they are given, resolved once per request, per provider."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tau.agent import Agent
from tau.ai import (
    Context,
    UserMessage,
    complete,
    complete_structured,
    complete_sync,
    get_model,
    stream,
)
from tau.ai.core.options import StreamOptions
from tau.ai.core.settings import (
    default_max_tokens,
)
from tau.ai.lookup.provider import Provider
from tau.ai.lookup.registry import known_setting_keys, resolve_api_provider
from tau.ai.providers.faux import FauxResponse, faux_calls, faux_model, faux_payloads, text
from tau.ai.streaming.output_cap import output_cap, output_chars_for

REPO = Path(__file__).resolve().parents[2]
CTX = Context([UserMessage("hi")])


def record(api: str) -> Any:
    provider = resolve_api_provider(api)
    assert provider.record is not None
    return provider.record


# --------------------------------------------------------------------------- checked at the call


async def test_a_misspelt_setting_fails_at_complete_naming_the_close_match() -> None:
    model = faux_model([FauxResponse([text("never sent")])])
    with pytest.raises(TypeError, match=r"'max_token' \(did you mean 'max_tokens'\?\)"):
        await complete(model, "hi", settings={"max_token": 5})  # type: ignore[typeddict-unknown-key]
    with pytest.raises(TypeError, match="did you mean 'anthropic_effort'"):
        stream(model, "hi", settings={"anthropic_efort": "max"})  # type: ignore[typeddict-unknown-key]
    with pytest.raises(TypeError, match="did you mean 'temperature'"):
        complete_sync(model, "hi", settings={"temprature": 0.1})  # type: ignore[typeddict-unknown-key]
    assert faux_calls(model) == []  # nothing was sent


def test_a_misspelt_setting_fails_at_agent_construction() -> None:
    with pytest.raises(TypeError, match=r"'temprature' \(did you mean 'temperature'\?\)"):
        Agent(model=faux_model(), settings={"temprature": 0.5})  # type: ignore[typeddict-unknown-key]


def test_every_key_of_another_provider_is_a_setting_not_an_error() -> None:
    model = faux_model([FauxResponse([text("ok")])])
    settings: dict[str, Any] = {"anthropic_effort": "max", "bedrock_region": "eu-west-1"}
    message = complete_sync(model, "hi", settings=settings)  # type: ignore[arg-type]
    assert message.stop_reason == "stop"
    assert {"anthropic_effort", "openai_service_tier", "google_project"} <= known_setting_keys()


def test_mypy_reports_the_misspelt_keys_of_a_typed_example(tmp_path: Path) -> None:
    example = REPO / "tests" / "ai" / "typed" / "settings_example.py"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--follow-imports=silent",
            "--cache-dir",
            str(tmp_path / "cache"),
            "--no-error-summary",
            str(example),
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    reported = sorted(
        int(line.split(":")[1]) for line in done.stdout.splitlines() if ": error:" in line
    )
    marked = [
        number
        for number, line in enumerate(example.read_text().splitlines(), 1)
        if "# error:" in line
    ]
    assert reported == marked, done.stdout
    assert '"max_token"' in done.stdout and '"temprature"' in done.stdout


# --------------------------------------------------------------------------- resolved per provider


def test_a_provider_reads_its_own_keys_unprefixed_and_ignores_the_others() -> None:
    model = get_model("anthropic", "claude-sonnet-4-5")
    settings = {
        "max_tokens": 900,
        "tool_choice": "auto",
        "anthropic_effort": "max",
        "openai_service_tier": "flex",
        "bedrock_region": "eu-west-1",
    }
    options = record("anthropic-messages").resolve(model, settings)
    assert options == {
        "max_tokens": 900,
        "tool_choice": "auto",
        "effort": "max",
        "thinking_enabled": False,
    }
    # The same object for an OpenAI model: its own key, nothing of Anthropic's.
    gpt = get_model("openai", "gpt-5")
    assert record("openai-responses").resolve(gpt, settings) == {
        "max_tokens": 900,
        "tool_choice": "auto",
        "service_tier": "flex",
    }


def test_a_common_key_a_provider_has_no_use_for_is_left_out() -> None:
    # A provider without a tool choice (llama-cpp's options are these): the key is dropped.
    plain = Provider(api="plain", options=StreamOptions, prefix="plain_", stream=stream)
    local = get_model("faux", "echo")
    options = plain.resolve(local, {"tool_choice": "auto", "temperature": 0.2})
    assert options == {"temperature": 0.2, "max_tokens": default_max_tokens(local)}


def test_the_reasoning_level_is_mapped_and_an_explicit_own_key_wins() -> None:
    model = get_model("anthropic", "claude-sonnet-4-5")
    anthropic = record("anthropic-messages")
    mapped = anthropic.resolve(model, {"reasoning": "low"})
    assert mapped["thinking_enabled"] is True
    assert mapped["max_tokens"] == default_max_tokens(model) + mapped["thinking_budget_tokens"]
    explicit = anthropic.resolve(
        model, {"reasoning": "low", "anthropic_thinking_budget_tokens": 3000}
    )
    assert explicit["thinking_budget_tokens"] == 3000


def test_the_azure_keys_keep_their_names() -> None:
    # The prefix rule: an own option already under the prefix is its own settings key.
    azure = record("azure-openai-responses")
    assert azure.setting_keys["azure_api_version"] == "azure_api_version"
    assert azure.setting_keys["azure_reasoning_effort"] == "reasoning_effort"


# --------------------------------------------------------------------------- max_tokens, one rule


def test_max_tokens_has_one_default() -> None:
    model = get_model("anthropic", "claude-sonnet-4-5")
    assert default_max_tokens(model) == min(model.max_tokens, 32_000)
    from tau.ai.providers.anthropic.request import request_body

    body = request_body(model, CTX, {})
    assert body["max_tokens"] == default_max_tokens(model)
    assert output_cap(model, {}) == output_chars_for(default_max_tokens(model))


# --------------------------------------------------------------------------- end to end


async def test_agent_settings_reach_the_request_body() -> None:
    model = faux_model([FauxResponse([text("fine")])])
    agent = Agent(model=model, settings={"max_tokens": 77, "temperature": 0.25})
    await agent.prompt("hi")
    (payload,) = faux_payloads(model)
    assert payload["max_tokens"] == 77
    assert payload["temperature"] == 0.25


async def test_complete_takes_settings_and_keywords_together() -> None:
    model = faux_model([FauxResponse([text("fine")])])
    await complete(model, "hi", settings={"max_tokens": 12}, temperature=0.5)
    (payload,) = faux_payloads(model)
    assert (payload["max_tokens"], payload["temperature"]) == (12, 0.5)


async def test_complete_structured_takes_the_same_settings() -> None:
    model = faux_model([FauxResponse([text('{"city": "Paris"}')])])
    result = await complete_structured(
        model, "Where?", {"type": "object"}, {"max_tokens": 21}, mode="prompted", temperature=0.5
    )
    assert result.output == {"city": "Paris"}
    (payload,) = faux_payloads(model)
    assert (payload["max_tokens"], payload["temperature"]) == (21, 0.5)
    with pytest.raises(TypeError, match="did you mean 'max_tokens'"):
        await complete_structured(model, "Where?", dict, {"max_token": 5})  # type: ignore[typeddict-unknown-key]
    assert len(faux_payloads(model)) == 1  # the misspelt call sent nothing


async def test_stream_options_still_work_with_a_deprecation_warning() -> None:
    model = faux_model([FauxResponse([text("fine")])])
    with pytest.warns(DeprecationWarning, match="settings="):
        agent = Agent(model=model, stream_options={"max_tokens": 33})
    await agent.prompt("hi")
    assert faux_payloads(model)[0]["max_tokens"] == 33


def test_the_resolved_options_are_what_the_provider_sees() -> None:
    model = faux_model([FauxResponse([text("fine")])])
    complete_sync(model, "hi", settings={"max_tokens": 5, "anthropic_effort": "max"})
    ((_, options),) = faux_calls(model)
    assert "anthropic_effort" not in options and "effort" not in options
    assert options["max_tokens"] == 5
    assert resolve_api_provider("faux").api == "faux"
