"""What a structured call ends with: :class:`StructuredResult` or :class:`StructuredOutputError`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Generic, Literal, TypeAlias, TypeVar

from tau.ai.core.types import AssistantMessage, Usage, UsageCost

T = TypeVar("T")

FailureReason: TypeAlias = Literal["invalid", "refusal", "length", "error", "aborted"]
"""Why no valid output came: answers that never validated, a refusal, the length limit hit
before the object was finished, a provider error, an abort."""


def total_usage(messages: list[AssistantMessage]) -> Usage:
    """The usage of several calls added up (tokens and cost)."""
    usage = Usage(cost=UsageCost())
    for message in messages:
        u = message.usage
        usage.input += u.input
        usage.output += u.output
        usage.cache_read += u.cache_read
        usage.cache_write += u.cache_write
        usage.total_tokens += u.total_tokens
        if u.reasoning is not None:
            usage.reasoning = (usage.reasoning or 0) + u.reasoning
        cost = usage.cost
        cost.input += u.cost.input
        cost.output += u.cost.output
        cost.cache_read += u.cost.cache_read
        cost.cache_write += u.cost.cache_write
        cost.total += u.cost.total
    return usage


@dataclass(slots=True)
class StructuredResult(Generic[T]):
    """A validated output, the message it came in, and every attempt (failed ones too)."""

    output: T
    message: AssistantMessage
    attempts: list[AssistantMessage] = field(default_factory=list)

    @property
    def usage(self) -> Usage:
        """The usage of all attempts added up."""
        return total_usage(self.attempts)


class StructuredOutputError(Exception):
    """No valid output: ``reason`` says why, nothing is lost.

    ``raw_text`` is the last answer's JSON text (or text), ``errors`` the last validation
    errors as ``(path, message)`` pairs, ``attempts`` every message received, so usage and
    cost still add up (:attr:`usage`).
    """

    def __init__(
        self,
        message: str,
        *,
        reason: FailureReason,
        raw_text: str,
        errors: list[tuple[str, str]],
        attempts: list[AssistantMessage],
    ) -> None:
        super().__init__(message)
        self.reason: FailureReason = reason
        self.raw_text = raw_text
        self.errors = errors
        self.attempts = attempts

    @property
    def usage(self) -> Usage:
        """The usage of all attempts added up."""
        return total_usage(self.attempts)
