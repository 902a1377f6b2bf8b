"""Usage limits and a run's totals: how much a run may spend, and what it has spent.

::

    agent = Agent(model=model, tools=tools, usage_limits=UsageLimits(max_turns=20, max_cost=0.50))
    await agent.prompt("Fix the failing test")
    print(agent.state.usage)        # RunUsage(turns=7, requests=7, tool_calls=11, ..., cost=0.31)

:class:`RunUsage` adds up everything a run asked of the models: every response, including
ones that ended in an error, and every failed attempt a fallback made (see
:func:`tau.ai.fallback_stream_fn`), with the cost the catalog's prices give each of them.

The limits are checked at three points:

* **before each LLM request**: no request starts once the run has had ``max_turns``
  responses, once a token or cost limit is reached (the total is at or above it), or after
  tool calls were refused;
* **after each response**: its usage is added before its ``message_end``; if that reaches a
  token or cost limit, none of its tool calls run;
* **before tools run**: of a response asking for more calls than ``max_tool_calls`` still
  allows, the calls that fit run, in call order, and none of the rest.

A call that does not run gets an error result naming the limit, so every call has a result.
The run then ends with one more assistant message, ``stop_reason`` ``error``, whose
``error_message`` names the limit and the amount, e.g. ``Usage limit reached: cost $0.52 of
$0.50``; ``agent_end`` follows as always. Providers never see that message (tau leaves failed
assistant messages out of the context), so after raising the limit
:meth:`~tau.agent.Agent.continue_` goes on from where the run stopped.
"""

from __future__ import annotations

import math
from contextvars import ContextVar
from dataclasses import dataclass, fields, replace
from typing import Any

from tau.ai import AssistantMessage

__all__ = [
    "LIMIT_REACHED",
    "RunUsage",
    "UsageGuard",
    "UsageLimitReached",
    "UsageLimits",
    "current_guard",
]

LIMIT_REACHED = "Usage limit reached"
"""How the message of a run stopped by a limit begins."""


def _check_count(name: str, value: object) -> None:
    if value is None:
        return
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{name} must be an int or None, not {type(value).__name__}")
    if value < 0:
        raise ValueError(f"{name} must not be negative, got {value}")


@dataclass(frozen=True, slots=True, kw_only=True)
class UsageLimits:
    """How much one run may use; None means no limit.

    ``max_turns`` counts responses (LLM turns), ``max_tool_calls`` the tool calls that run,
    ``max_input_tokens`` every prompt token (cached or not: input + cache read + cache
    write), ``max_total_tokens`` prompt and output tokens together, and ``max_cost`` US
    dollars at the catalog's prices.
    """

    max_turns: int | None = None
    max_tool_calls: int | None = None
    max_input_tokens: int | None = None
    max_output_tokens: int | None = None
    max_total_tokens: int | None = None
    max_cost: float | None = None

    def __post_init__(self) -> None:
        for name in (
            "max_turns",
            "max_tool_calls",
            "max_input_tokens",
            "max_output_tokens",
            "max_total_tokens",
        ):
            _check_count(name, getattr(self, name))
        cost = self.max_cost
        if cost is not None:
            if not isinstance(cost, int | float) or isinstance(cost, bool):
                raise TypeError(f"max_cost must be a number or None, not {type(cost).__name__}")
            if not math.isfinite(cost) or cost < 0:
                raise ValueError(f"max_cost must be a finite number of dollars >= 0, got {cost}")


@dataclass(slots=True)
class RunUsage:
    """What a run has used so far (an agent's ``state.usage``, and ``agent_end``'s ``usage``).

    ``turns`` are the responses the run asked for; ``requests`` also count the failed attempts
    of a fallback (tau.ai's retries of a rejected HTTP request happen inside one request and
    cost no tokens). ``tool_calls`` are the calls that were let through to run. Token counts
    and ``cost`` (USD) add up every response and failed attempt; ``input_tokens`` is the
    non-cached part of the prompt, as in :class:`tau.ai.Usage`.
    """

    turns: int = 0
    requests: int = 0
    tool_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    total_tokens: int = 0
    cost: float = 0.0

    @property
    def prompt_tokens(self) -> int:
        """Every prompt token, cached or not (what ``max_input_tokens`` limits)."""
        return self.input_tokens + self.cache_read_tokens + self.cache_write_tokens

    def add_message(self, message: AssistantMessage) -> None:
        """Add the tokens and cost of one response or failed attempt."""
        usage = message.usage
        self.input_tokens += usage.input
        self.output_tokens += usage.output
        self.cache_read_tokens += usage.cache_read
        self.cache_write_tokens += usage.cache_write
        # The sum of the parts, whatever total a provider reports: limits must add up.
        self.total_tokens += usage.input + usage.output + usage.cache_read + usage.cache_write
        self.cost += usage.cost.total

    def copy(self) -> RunUsage:
        """A snapshot."""
        return replace(self)

    def __add__(self, other: RunUsage) -> RunUsage:
        """The totals of two runs together."""
        if not isinstance(other, RunUsage):
            return NotImplemented
        return RunUsage(
            **{
                item.name: getattr(self, item.name) + getattr(other, item.name)
                for item in fields(self)
            }
        )

    @classmethod
    def load(cls, data: Any) -> RunUsage:
        """A :class:`RunUsage` from :meth:`dump` output (missing keys are 0); raises
        ``ValueError`` naming a key that is not a number >= 0."""
        if not isinstance(data, dict):
            raise ValueError(f"usage: expected an object, got {type(data).__name__}")
        usage = cls()
        for item in fields(usage):
            head, *rest = item.name.split("_")
            key = head + "".join(part.title() for part in rest)
            value = data.get(key, 0)
            if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
                raise ValueError(f"{key}: expected a number >= 0, got {value!r}")
            setattr(usage, item.name, float(value) if item.name == "cost" else int(value))
        return usage

    def dump(self) -> dict[str, Any]:
        """The JSON form, with camelCase keys (``toolCalls``, ``inputTokens``…)."""
        out: dict[str, Any] = {}
        for item in fields(self):
            head, *rest = item.name.split("_")
            out[head + "".join(part.title() for part in rest)] = getattr(self, item.name)
        return out


class UsageLimitReached(Exception):
    """A limit stops the run before a request; the loop turns it into the run's last message."""


def _dollars(amount: float, limit: float) -> tuple[str, str]:
    # Two decimals, or as many as it takes to show the amount and to tell it from the limit.
    digits = 2
    smallest = min((x for x in (amount, limit) if x > 0), default=1.0)
    if smallest < 0.01:
        digits = min(10, 1 - math.floor(math.log10(smallest)))
    while digits < 10 and amount != limit and f"{amount:.{digits}f}" == f"{limit:.{digits}f}":
        digits += 1
    return f"${amount:.{digits}f}", f"${limit:.{digits}f}"


current_guard: ContextVar[UsageGuard | None] = ContextVar("tau_current_guard", default=None)
"""The guard of the run whose code is running (its tools see it): a sub-agent run counts into
it and is bounded by its limits."""


class UsageGuard:
    """One run's totals against its limits (the agent loop asks it at each check point)."""

    __slots__ = ("batch_total", "limits", "refusal", "usage")

    def __init__(self, limits: UsageLimits | None, usage: RunUsage | None) -> None:
        self.limits = limits
        self.usage = usage if usage is not None else RunUsage()
        self.refusal: str | None = None
        """Why tool calls were refused: the run stops before its next request."""
        self.batch_total = 0

    def budget_reached(self) -> str | None:
        """The first token or cost limit the totals have reached, described; else None."""
        limits, usage = self.limits, self.usage
        if limits is None:
            return None
        if limits.max_cost is not None and usage.cost >= limits.max_cost:
            amount, limit = _dollars(usage.cost, limits.max_cost)
            return f"cost {amount} of {limit}"
        for what, spent, limit_tokens in (
            ("total tokens", usage.total_tokens, limits.max_total_tokens),
            ("input tokens", usage.prompt_tokens, limits.max_input_tokens),
            ("output tokens", usage.output_tokens, limits.max_output_tokens),
        ):
            if limit_tokens is not None and spent >= limit_tokens:
                return f"{what} {spent:,} of {limit_tokens:,}"
        return None

    def before_request(self) -> None:
        """Raise :class:`UsageLimitReached` if the run may not make another request."""
        limits = self.limits
        if limits is None:
            return
        reason = self.refusal or self.budget_reached()
        if reason is None and limits.max_turns is not None and self.usage.turns >= limits.max_turns:
            reason = f"turns {self.usage.turns:,} of {limits.max_turns:,}"
        if reason is not None:
            raise UsageLimitReached(f"{LIMIT_REACHED}: {reason}")

    def count_request(self) -> None:
        """A response is being asked for: one more turn and request."""
        self.usage.turns += 1
        self.usage.requests += 1

    def add_failed_attempt(self, message: AssistantMessage) -> None:
        """A fallback's failed attempt: one more request, and what it cost."""
        self.usage.requests += 1
        self.usage.add_message(message)

    def begin_tool_batch(self, count: int) -> None:
        """A response asks for ``count`` tool calls (admitted one by one, in call order)."""
        self.batch_total = self.usage.tool_calls + count

    def admit_tool_call(self) -> str | None:
        """Count one call of the batch as run; or refuse it and return its error result text."""
        limits, usage = self.limits, self.usage
        if limits is None:
            usage.tool_calls += 1
            return None
        reason = self.budget_reached()
        cap = limits.max_tool_calls
        if reason is None and cap is not None and usage.tool_calls >= cap:
            # The batch's total names what running every call would have reached.
            reason = f"tool calls {self.batch_total:,} of {cap:,}"
        if reason is None:
            usage.tool_calls += 1
            return None
        self.refusal = self.refusal or reason
        return f"Tool call not run: {LIMIT_REACHED.lower()}: {reason}"

    def refund_tool_call(self) -> None:
        """An admitted call did not run after all (it waits for approval): uncount it."""
        self.usage.tool_calls -= 1
