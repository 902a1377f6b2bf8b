"""Custom endpoints against llama.cpp's OpenAI-compatible server: a provider in
``$TAU_HOME/models.json``, and the one-off ``--base-url``, through the ``tau`` command."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.cli.conftest import TauRunner


def _models_json(tmp_path: Path, provider: dict[str, Any]) -> None:
    home = tmp_path / "tau-home"
    home.mkdir(exist_ok=True)
    (home / "models.json").write_text(json.dumps({"providers": {"llamacpp": provider}}))


def test_a_models_json_provider_answers(tau: TauRunner, tmp_path: Path, llama_server: str) -> None:
    _models_json(
        tmp_path,
        {
            "baseUrl": llama_server,
            "api": "openai-completions",
            "compat": {"maxTokensField": "max_tokens", "supportsStore": False},
            "models": [
                {"id": "smollm2", "name": "SmolLM2", "contextWindow": 2048, "maxTokens": 64}
            ],
        },
    )
    listed = tau("models", "llamacpp")
    assert (
        "llamacpp/smollm2\tSmolLM2\t2,048 ctx\t$0/$0 per Mtok\t-\t-\tmodels.json" in listed.stdout
    )
    done = tau("-m", "llamacpp/smollm2", "--tools", "none", "Say hello.", timeout=180)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip()
    # Remembered as the default (it is configuration, not a one-off), and resumable.
    again = tau("-c", "--tools", "none", "And goodbye?", timeout=180)
    assert again.returncode == 0, again.stderr
    assert again.stderr.startswith("resumed 2 messages · llamacpp/smollm2")
    config = json.loads((tmp_path / "tau-home" / "config.json").read_text())
    assert config["model"] == "llamacpp/smollm2"


def test_base_url_alone_finds_the_servers_model(
    tau: TauRunner, tmp_path: Path, llama_server: str
) -> None:
    done = tau("--base-url", llama_server, "--tools", "none", "Say hello.", timeout=180)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip()
    # The model line; a sampled answer may also run into its token limit (the only other
    # notice a plain answer gets).
    line, *rest = done.stderr.splitlines()
    assert line.startswith("model: openai-compatible/"), line
    assert rest in ([], ["[stopped: max tokens]"]), rest
    # The endpoint is kept in the session (a name alone could not find it again) ...
    again = tau("-c", "--tools", "none", "Thanks!", timeout=180)
    assert again.returncode == 0, again.stderr
    assert again.stderr.startswith("resumed 2 messages · openai-compatible/")
    # ... but never remembered as the default model.
    config = tmp_path / "tau-home" / "config.json"
    assert not config.exists() or "openai-compatible" not in config.read_text()
