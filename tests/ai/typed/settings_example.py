"""Typed settings as a user's type checker sees them (mypy --strict runs on this file in
tests/ai/test_settings.py): the marked lines must be reported, and nothing else."""

from __future__ import annotations

from tau.agent import Agent
from tau.ai import Settings, complete, get_model

model = get_model("anthropic", "claude-sonnet-4-5")
good = Settings(max_tokens=2000, reasoning="high", anthropic_effort="max", timeout=30.0)
fallback: Settings = {"openai_service_tier": "flex", "google_thinking": {"enabled": True}}
agent = Agent(model=model, settings=good)

misspelt = Settings(max_token=2000)  # error: misspelt
wrong_type = Settings(temperature="hot")  # error: wrong type
agent_misspelt = Agent(model=model, settings=Settings(temprature=0.5))  # error: misspelt


async def ask() -> None:
    await complete(model, "hi", settings=good)
    await complete(model, "hi", settings={"anthropic_efort": "max"})  # error: misspelt
