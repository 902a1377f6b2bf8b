"""The :class:`~tau.agent.AgentLoopConfig` an :class:`~tau.agent.Agent` gives each run: its
settings read once, when the run starts (the snapshot rule of :mod:`tau.agent.agent`).

``agent`` is typed ``Any``: ``tau.agent.agent`` imports this module, and the import graph of
``tau.agent`` has no cycles."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tau.agent.run_state import Resumption
from tau.agent.types import AgentLoopConfig, GetMessages
from tau.ai import Model

__all__ = ["loop_config"]


def loop_config(
    agent: Any,
    model: Model,
    get_steering_messages: GetMessages,
    resume_from: Resumption | None,
) -> AgentLoopConfig:
    """The config of ``agent``'s next run on ``model``; ``resume_from`` finishes a paused
    turn first."""
    state = agent.state
    # The settings are handed on as they are (the run makes the one copy, adding its own
    # keys); a merged copy here only when the older keywords have something to add.
    extra = {
        key: value
        for key, value in (
            ("on_payload", agent._on_payload),
            ("max_retry_delay_ms", agent.max_retry_delay_ms),
        )
        if value is not None
    }
    options: Mapping[str, Any] = agent.settings
    if agent.stream_options or extra:
        options = {**agent.stream_options, **agent.settings, **extra}
    return AgentLoopConfig(
        model=model,
        convert_to_llm=agent._convert_to_llm,
        transform_context=agent._transform_context,
        get_api_key=agent.get_api_key,
        get_steering_messages=get_steering_messages,
        get_follow_up_messages=agent._dequeue_follow_ups,
        before_tool_call=agent.before_tool_call,
        after_tool_call=agent.after_tool_call,
        tool_execution=agent.tool_execution,
        reasoning=None if state.thinking_level == "off" else state.thinking_level,
        thinking_budgets=agent.thinking_budgets,
        session_id=agent.session_id,
        stream_fn=agent._stream_fn(),
        stream_options=options,
        usage_limits=agent.usage_limits,
        usage=state.usage,
        name=agent.name,
        instrument=agent.instrument,
        tool_sources=list(agent.tool_sources),
        output_type=agent.output_type,
        output_mode=agent._output_mode(model),
        output_retries=agent.output_retries,
        output_validators=list(agent.output_validators),
        approver=agent.approver,
        resume_from=resume_from,
    )
