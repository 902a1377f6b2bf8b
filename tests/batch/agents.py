"""Agent factories for the batch tests: module-level, so Ray workers can unpickle them."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping
from typing import Any, cast

from tau.agent import Agent
from tau.ai import Context, Model, Settings, UserMessage, get_model
from tau.ai.providers.faux import FauxResponse, faux_model, text


def echo_agent() -> Agent:
    """The catalog's faux echo model."""
    return Agent(model=get_model("faux", "echo"))


def _last_text(context: Context) -> str:
    message = context.messages[-1]
    assert isinstance(message, UserMessage)
    content = message.content
    return content if isinstance(content, str) else "".join(getattr(b, "text", "") for b in content)


def _pid_reply(context: Context, options: Mapping[str, Any]) -> FauxResponse:
    return FauxResponse([text(f"{os.getpid()} {_last_text(context)}")], first_delay=0.02)


def pid_agent() -> Agent:
    """Answers ``<pid> <prompt>`` after 20 ms: shows which process ran an item."""
    return Agent(model=faux_model(_pid_reply, id="pid"))


def _slow_reply(context: Context, options: Mapping[str, Any]) -> FauxResponse:
    prompt = _last_text(context)
    number = int(prompt.rsplit(" ", 1)[-1]) if prompt[-1:].isdigit() else 0
    return FauxResponse([text(prompt)], first_delay=0.05 + 0.1 * (number % 5))


def slow_agent() -> Agent:
    """Echoes after 50 to 450 ms: ``… <n>`` takes 0.05 + 0.1 × (n mod 5) s."""
    return Agent(model=faux_model(_slow_reply, id="slow"))


async def async_echo_agent() -> Agent:
    """An async factory."""
    await asyncio.sleep(0)
    return echo_agent()


def api_key(provider: str) -> str:
    return "test-key"


class HttpAgent:
    """Agents of a model served by a :class:`~tests.batch.fake_llm.FakeLLM` (picklable).

    tau.ai's own HTTP retries are off unless ``max_retries`` says otherwise.
    """

    def __init__(self, model: Model, **settings: Any) -> None:
        self.model = model
        self.settings: Settings = cast(Settings, {"max_retries": 0, **settings})

    def __call__(self) -> Agent:
        return Agent(model=self.model, get_api_key=api_key, settings=self.settings)
