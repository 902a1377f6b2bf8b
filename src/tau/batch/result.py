"""What a batch produces: one :class:`BatchResult` per item, and a :class:`BatchSummary`."""

from __future__ import annotations

import dataclasses
import functools
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

if TYPE_CHECKING:
    from tau.agent import RunUsage

__all__ = ["BatchResult", "BatchStatus", "BatchSummary"]

BatchStatus: TypeAlias = Literal["ok", "error", "limited"]
"""``ok``: the run finished; ``limited``: a usage limit stopped it (``UsageLimits``);
``error``: it failed for good (a permanent error, or a transient one on every attempt)."""

STATUSES: tuple[BatchStatus, ...] = ("ok", "error", "limited")


@functools.cache
def _usage_keys() -> tuple[tuple[str, str], ...]:
    """``(attribute, JSON key)`` of each :class:`~tau.agent.RunUsage` field, as its ``dump()``
    names them (computed once: a result is written for every item)."""
    from tau.agent import RunUsage

    names = [f.name for f in dataclasses.fields(RunUsage)]
    return tuple(zip(names, RunUsage().dump(), strict=True))


def _run_usage(data: Any = None) -> RunUsage:
    from tau.agent import RunUsage

    usage = RunUsage()
    if isinstance(data, dict):
        for name, key in _usage_keys():
            value = data.get(key)
            if isinstance(value, int | float) and not isinstance(value, bool):
                setattr(usage, name, value)
    return usage


def _dump_usage(usage: RunUsage) -> dict[str, Any]:
    return {key: getattr(usage, name) for name, key in _usage_keys()}


def _add_usage(total: RunUsage, more: RunUsage) -> None:
    for name, _ in _usage_keys():
        setattr(total, name, getattr(total, name) + getattr(more, name))


@dataclass(slots=True, kw_only=True)
class BatchResult:
    """The outcome of one item, as written to the output file (one JSON line, camelCase keys)."""

    id: str
    status: BatchStatus
    text: str = ""
    """The final answer's text (what came before a failure, for ``error`` and ``limited``)."""
    output: Any = None
    """The run's typed output when the agent has an ``output_type``, else None."""
    has_output: bool = False
    """Whether the run gave a validated output, None included (an ``Optional`` output type):
    the line then has ``"output"``, ``null`` for a None. Always true when ``output`` is not
    None."""
    error: str | None = None
    """Why the item did not finish (``error`` and ``limited``), else None."""
    error_kind: str | None = None
    """The failure classified (:data:`tau.ai.FailureKind`: ``rate_limit``, ``server_error``,
    ``other``…) for ``error``; None otherwise."""
    model: str | None = None
    """``provider/id`` of the model that gave the final answer."""
    usage: RunUsage = field(default_factory=_run_usage)
    """Tokens and cost of every attempt together: what the item was paid."""
    attempts: int = 1
    started: float = 0.0
    """When the first attempt started (seconds since the epoch)."""
    elapsed: float = 0.0
    """Seconds from the first attempt's start to the result, retries and waits included."""
    rate_wait: float = 0.0
    """Seconds of that spent waiting for the rate limits."""
    transcript: list[dict[str, Any]] | None = None
    """The agent's messages in tau's JSON (``dump_agent_message``), when asked for."""

    def __post_init__(self) -> None:
        if self.output is not None:
            self.has_output = True

    @property
    def cost(self) -> float:
        """US dollars, every attempt together."""
        return self.usage.cost

    def to_json(self) -> dict[str, Any]:
        """The JSON object of the output line (plain JSON data: a typed output is dumped)."""
        data = self._data()
        if "output" in data:
            from pydantic_core import to_jsonable_python

            data["output"] = to_jsonable_python(data["output"])
        return data

    def to_line(self) -> bytes:
        """One line of the output file, newline included (always valid UTF-8)."""
        # pydantic-core's encoder: a result is written for every item, and it is several times
        # faster than json's; it also dumps a typed output (a pydantic model, a dataclass…).
        from pydantic_core import PydanticSerializationError, to_json, to_jsonable_python

        data = self._data()
        try:
            return to_json(data) + b"\n"
        except PydanticSerializationError:
            # A lone surrogate (a model's broken text) cannot be UTF-8: escaped, it survives.
            return (json.dumps(to_jsonable_python(data)) + "\n").encode("ascii")

    def _data(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "status": self.status, "text": self.text}
        if self.has_output:
            out["output"] = self.output
        if self.error is not None:
            out["error"] = self.error
            out["errorKind"] = self.error_kind
        out["model"] = self.model
        out["usage"] = _dump_usage(self.usage)
        out["attempts"] = self.attempts
        out["started"] = round(self.started, 3)
        out["elapsed"] = round(self.elapsed, 4)
        out["rateWait"] = round(self.rate_wait, 4)
        if self.transcript is not None:
            out["transcript"] = self.transcript
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> BatchResult:
        """A result back from its JSON object (``output`` stays plain JSON)."""
        status = data.get("status")
        ident = data.get("id")
        if not isinstance(ident, str) or status not in STATUSES:
            raise ValueError('a batch result needs a string "id" and a known "status"')
        return cls(
            id=ident,
            status=status,
            text=str(data.get("text") or ""),
            output=data.get("output"),
            has_output="output" in data,
            error=data.get("error"),
            error_kind=data.get("errorKind"),
            model=data.get("model"),
            usage=_run_usage(data.get("usage")),
            attempts=int(data.get("attempts") or 1),
            started=float(data.get("started") or 0.0),
            elapsed=float(data.get("elapsed") or 0.0),
            rate_wait=float(data.get("rateWait") or 0.0),
            transcript=data.get("transcript"),
        )


@dataclass(slots=True, kw_only=True)
class BatchSummary:
    """A batch so far (live while it runs) or at its end."""

    total: int
    """Items in the input."""
    skipped: int = 0
    """Items already in the output file (resume): not run again."""
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(STATUSES, 0))
    """Results of this run by status."""
    usage: RunUsage = field(default_factory=_run_usage)
    """Tokens and cost of this run's results."""
    elapsed: float = 0.0
    """Wall-clock seconds of this run."""
    interrupted: bool = False
    """The run was stopped before every item had a result."""
    results: list[BatchResult] | None = None
    """This run's results in input order (:func:`~tau.batch.run_batch_sync` only)."""

    @property
    def done(self) -> int:
        """Results this run produced."""
        return sum(self.counts.values())

    @property
    def remaining(self) -> int:
        """Items without a result yet."""
        return self.total - self.skipped - self.done

    @property
    def cost(self) -> float:
        """US dollars spent by this run."""
        return self.usage.cost

    def add(self, result: BatchResult) -> None:
        """Count one result."""
        self.counts[result.status] = self.counts.get(result.status, 0) + 1
        _add_usage(self.usage, result.usage)

    def describe(self) -> str:
        """A few lines for a person: counts by status, tokens, cost, wall time."""
        statuses = ", ".join(f"{count:,} {status}" for status, count in self.counts.items())
        usage = self.usage
        lines = [
            f"{self.done:,} of {self.total:,} items done this run ({statuses})"
            + (f"; {self.skipped:,} were already done" if self.skipped else ""),
            f"tokens: {usage.prompt_tokens:,} in, {usage.output_tokens:,} out; "
            f"cost ${usage.cost:.4f}; wall time {self.elapsed:.1f} s",
        ]
        if self.interrupted and self.remaining:
            lines.append(f"interrupted: {self.remaining:,} items left (run again to resume)")
        return "\n".join(lines)
