"""The demo run end to end: the ``tau`` command with the embedded model calls a tool and answers."""

from __future__ import annotations

import json

from tests.cli.conftest import TauRunner


def test_weather_demo_calls_the_tool_and_answers(tau: TauRunner) -> None:
    done = tau(
        "--model",
        "local/smollm2-135m-instruct",
        "--tools",
        "weather",
        "What is the weather in Paris?",
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert '→ get_weather({"city": "Paris"})' in done.stderr
    assert "← The weather in Paris is sunny, 22°C." in done.stderr
    assert done.stdout.strip(), "the model must answer after the tool result"


def test_no_key_and_no_setting_picks_the_embedded_model(tau: TauRunner) -> None:
    done = tau("--json", "--tools", "none", "--max-tokens", "8", "Say hi", timeout=300)
    assert done.returncode == 0, done.stderr
    end = json.loads(done.stdout.splitlines()[-1])
    assert end["type"] == "agent_end"
    assert (end["messages"][-1]["provider"], end["messages"][-1]["model"]) == (
        "local",
        "smollm2-135m-instruct",
    )
