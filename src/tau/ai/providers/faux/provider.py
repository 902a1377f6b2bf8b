"""The ``faux`` provider record: scripted responses through the real event machinery."""

from __future__ import annotations

import asyncio
from typing import Any

from tau.ai.core.types import Context, Model, ThinkingBudgets, ThinkingLevel
from tau.ai.lookup.provider import Provider
from tau.ai.providers.faux.decoder import FauxDecoder
from tau.ai.providers.faux.options import FauxOptions
from tau.ai.providers.faux.request import request_body
from tau.ai.providers.faux.script import next_response, record_payload
from tau.ai.streaming.adapter import apply_on_payload
from tau.ai.streaming.builder import MessageBuilder
from tau.ai.streaming.event_stream import AssistantMessageEventStream
from tau.ai.streaming.launch import launch_stream

__all__ = ["PROVIDER", "stream"]


def stream(model: Model, context: Context, options: FauxOptions) -> AssistantMessageEventStream:
    """Stream the model's next scripted response (after "sending" its request body)."""

    async def run(builder: MessageBuilder) -> None:
        payload = await apply_on_payload(options, request_body(model, context, options), model)
        record_payload(model, payload)
        response = next_response(model, context, options)
        if response.first_delay:
            await asyncio.sleep(response.first_delay)
        await FauxDecoder(builder, context).play(response)

    return launch_stream(model, options, run)


def reasoning(
    model: Model,
    options: dict[str, Any],
    level: ThinkingLevel | None,
    budgets: ThinkingBudgets | None,
) -> None:
    """The level is recorded, as a real adapter would send it."""
    if level is not None:
        options["reasoning"] = level
    if budgets is not None:
        options["thinking_budgets"] = budgets


PROVIDER = Provider(
    api="faux",
    options=FauxOptions,
    prefix="faux_",
    stream=stream,
    reasoning=reasoning,
)
"""A scripted stand-in for tests, examples and trying tau with no key."""
