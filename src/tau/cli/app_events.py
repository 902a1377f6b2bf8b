"""What a ``tau`` session reports besides the agent's events: automatic compactions
(:class:`CompactionStart`, :class:`CompactionEnd`) as a notice line or as pi's JSON events, and
the session's numbers (:class:`SessionInfo`, what ``/session`` shows).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from tau.agent import RunUsage
from tau.ai import redact_secrets
from tau.cli.compaction import Compacted


@dataclass(frozen=True, slots=True)
class CompactionStart:
    """An automatic compaction begins (``reason``: ``threshold`` or ``overflow``)."""

    reason: Literal["threshold", "overflow"]
    tokens: int
    type: Literal["auto_compaction_start"] = "auto_compaction_start"


@dataclass(frozen=True, slots=True)
class CompactionEnd:
    """An automatic compaction ended: its result, or why it did not happen."""

    reason: Literal["threshold", "overflow"]
    result: Compacted | None
    aborted: bool = False
    will_retry: bool = False
    error: str | None = None
    type: Literal["auto_compaction_end"] = "auto_compaction_end"


AppEvent = CompactionStart | CompactionEnd


def describe_compaction(result: Compacted) -> str:
    """``N messages summarised: A → B tokens`` for a notice."""
    pieces = f" in {result.requests} requests" if result.requests > 1 else ""
    return (
        f"{result.messages_summarised} messages summarised{pieces}: "
        f"{result.tokens_before:,} → {result.tokens_after:,} tokens"
    )


def describe_app_event(event: AppEvent) -> str:
    """One line for a person."""
    match event:
        case CompactionStart(reason="overflow"):
            return "[the context overflowed the model's window: compacting, then retrying]"
        case CompactionStart():
            return f"[the context is large ({event.tokens:,} tokens): compacting]"
        case CompactionEnd(result=None):
            return f"[compaction failed: {event.error}]"
        case CompactionEnd(result=result):
            assert result is not None
            return f"[compacted: {describe_compaction(result)}]"


def dump_app_event(event: AppEvent) -> dict[str, Any]:
    """The JSON form (pi's ``auto_compaction_*`` events)."""
    match event:
        case CompactionStart():
            return {"type": event.type, "reason": event.reason}
        case CompactionEnd():
            data: dict[str, Any] = {
                "type": event.type,
                "reason": event.reason,
                "result": dump_compaction(event.result) if event.result else None,
                "aborted": event.aborted,
                "willRetry": event.will_retry,
            }
            if event.error is not None:
                data["errorMessage"] = redact_secrets(event.error)
            return data


def dump_compaction(result: Compacted) -> dict[str, Any]:
    """A compaction's result as JSON."""
    return {
        "summary": result.summary.summary,
        "tokensBefore": result.tokens_before,
        "tokensAfter": result.tokens_after,
        "messagesSummarised": result.messages_summarised,
        "requests": result.requests,
    }


def notice_on_stderr(event: AppEvent) -> None:
    """The event's notice line on stderr (dimmed on a terminal)."""
    line = describe_app_event(event)
    if sys.stderr.isatty():
        line = f"\033[2m{line}\033[0m"
    print(line, file=sys.stderr, flush=True)


@dataclass
class SessionInfo:
    """What ``/session`` shows."""

    path: Path | None
    saved: bool
    session_id: str | None
    model: str
    thinking: str
    user_messages: int
    assistant_messages: int
    tool_results: int
    context_messages: int
    context_tokens: int
    context_window: int
    usage: RunUsage

    def lines(self) -> list[str]:
        """The numbers as lines of text."""
        if self.path is None:
            where = "not saved (--no-session)"
        else:
            where = str(self.path) + ("" if self.saved else " (written after the first answer)")
        usage = self.usage
        percent = 100 * self.context_tokens / self.context_window if self.context_window else 0
        return [
            f"file:     {where}",
            f"id:       {self.session_id or '-'}",
            f"model:    {self.model} · thinking {self.thinking}",
            f"messages: {self.user_messages} user, {self.assistant_messages} assistant, "
            f"{self.tool_results} tool results ({self.context_messages} in the context)",
            f"context:  {self.context_tokens:,} of {self.context_window:,} tokens ({percent:.0f}%)",
            f"tokens:   {usage.input_tokens:,} input + {usage.output_tokens:,} output, cache read "
            f"{usage.cache_read_tokens:,}, cache write {usage.cache_write_tokens:,}",
            f"cost:     ${usage.cost:.4f}",
        ]
