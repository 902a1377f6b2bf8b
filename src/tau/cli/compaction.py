"""Compaction: a long conversation becomes a summary plus its recent turns, so it fits the window.

The recent messages (about ``keep_recent_tokens``, at most a quarter of the window) are kept
verbatim; everything before them, an earlier summary included, is written out as text and the
current model is asked for a structured summary of it. The context then holds a
:class:`CompactionSummary` (sent as a user message that says it is a summary) followed by the
kept messages. The session file keeps every original entry; a ``compaction`` entry says where
the kept part starts, so a resume rebuilds exactly this context.

Where this departs from pi's coding agent (deliberately):

* a conversation too long for one summary request (it overflowed the window, after all) is
  summarised in pieces, each piece updating the summary so far, instead of overflowing again;
* the cut never falls on a tool result or on a failed answer, and the turn in progress may be
  cut: its start goes into the summary, so one huge turn can still be compacted;
* the read and modified files listed with the summary accumulate across compactions.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import AliasChoices, BaseModel, Field

from tau.agent import AgentMessage, default_convert_to_llm, register_message_type
from tau.ai import (
    AssistantMessage,
    ImageContent,
    Message,
    Model,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)

COMPACTION_ROLE = "compactionSummary"
SUMMARY_PREFIX = (
    "The conversation history before this point was compacted into the following summary:\n\n"
    "<summary>\n"
)
SUMMARY_SUFFIX = "\n</summary>"
IMAGE_CHARS = 4800
"""What an image counts for in a token estimate (about 1,200 tokens)."""
TOOL_RESULT_CHARS = 2000
"""A tool result is cut to this many characters in the text the summary is written from."""
_READ_TOOLS = frozenset({"read"})
_WRITE_TOOLS = frozenset({"write", "edit"})


class CompactionSummary(BaseModel):
    """The summary that stands in for the compacted messages (pi's ``compactionSummary``)."""

    summary: str
    tokens_before: int = Field(
        serialization_alias="tokensBefore",
        validation_alias=AliasChoices("tokensBefore", "tokens_before"),
    )
    timestamp: int = Field(default_factory=lambda: int(time.time() * 1000))
    read_files: list[str] = Field(
        default_factory=list,
        serialization_alias="readFiles",
        validation_alias=AliasChoices("readFiles", "read_files"),
    )
    modified_files: list[str] = Field(
        default_factory=list,
        serialization_alias="modifiedFiles",
        validation_alias=AliasChoices("modifiedFiles", "modified_files"),
    )
    role: Literal["compactionSummary"] = "compactionSummary"


register_message_type(COMPACTION_ROLE, CompactionSummary)


def convert_to_llm(messages: Sequence[AgentMessage]) -> list[Message]:
    """The agent's messages as LLM messages: a compaction summary becomes a user message."""
    out: list[Message] = []
    for message in messages:
        if isinstance(message, CompactionSummary):
            text = f"{SUMMARY_PREFIX}{message.summary}{SUMMARY_SUFFIX}"
            out.append(UserMessage([TextContent(text)], timestamp=message.timestamp))
        else:
            out.extend(default_convert_to_llm([message]))
    return out


@dataclass(frozen=True, slots=True)
class CompactionSettings:
    """When to compact and how much to keep (the config's ``"compaction"`` object)."""

    enabled: bool = True
    threshold: float = 0.8
    """Compact once the context passes this share of the model's window."""
    keep_recent_tokens: int = 20_000
    """Keep about this many tokens of the newest messages (at most a quarter of the window)."""

    def keep_tokens(self, model: Model) -> int:
        """How many tokens of recent messages to keep for ``model``."""
        return max(1, min(self.keep_recent_tokens, model.context_window // 4))

    def over_threshold(self, tokens: int, model: Model) -> bool:
        """Whether ``tokens`` of context call for a compaction."""
        return self.enabled and tokens > self.threshold * model.context_window


def load_settings(raw: Any, warn: Callable[[str], None]) -> CompactionSettings:
    """Settings from the config's ``"compaction"`` value; a bad field is warned about and its
    default used."""
    if raw is None:
        return CompactionSettings()
    if not isinstance(raw, dict):
        warn('"compaction" in the config must be an object; using the defaults')
        return CompactionSettings()
    default = CompactionSettings()
    enabled = raw.get("enabled", default.enabled)
    if not isinstance(enabled, bool):
        warn('"compaction.enabled" must be true or false; compaction stays on')
        enabled = True
    threshold = raw.get("threshold", default.threshold)
    if (
        isinstance(threshold, bool)
        or not isinstance(threshold, int | float)
        or not 0 < threshold <= 1
    ):
        warn(
            f'"compaction.threshold" must be a number above 0 and at most 1; using {default.threshold}'
        )
        threshold = default.threshold
    keep = raw.get("keepRecentTokens", default.keep_recent_tokens)
    if isinstance(keep, bool) or not isinstance(keep, int) or keep < 1:
        warn(
            '"compaction.keepRecentTokens" must be a whole number above 0; '
            f"using {default.keep_recent_tokens}"
        )
        keep = default.keep_recent_tokens
    return CompactionSettings(enabled, float(threshold), keep)


# --------------------------------------------------------------------------- token estimates


def _tokens(chars: int) -> int:
    return math.ceil(chars / 4)


def message_chars(message: AgentMessage) -> int:
    """The size of ``message`` in characters, as estimates count it."""
    if isinstance(message, CompactionSummary):
        return len(SUMMARY_PREFIX) + len(message.summary) + len(SUMMARY_SUFFIX)
    content = getattr(message, "content", None)
    if isinstance(content, str):
        return len(content)
    total = 0
    for block in content or ():
        match block:
            case TextContent():
                total += len(block.text)
            case ThinkingContent():
                total += len(block.thinking)
            case ToolCall():
                total += len(block.name) + len(json.dumps(block.arguments, default=str))
            case ImageContent():
                total += IMAGE_CHARS
    return total


def estimate_tokens(message: AgentMessage) -> int:
    """About how many tokens ``message`` takes (four characters a token)."""
    return _tokens(message_chars(message))


def _reported(message: AssistantMessage) -> int:
    usage = message.usage
    return usage.total_tokens or usage.input + usage.output + usage.cache_read + usage.cache_write


def context_tokens(messages: Sequence[AgentMessage], system_prompt: str = "") -> int:
    """The context's size: the newest answer's reported usage plus an estimate of what came
    after it, or (no usage reported: llama.cpp's server sends none) an estimate of it all.

    An answer from before the last compaction reports the context it was given then, which
    was larger: only answers newer than the summary are believed.
    """
    first = messages[0] if messages else None
    since = first.timestamp if isinstance(first, CompactionSummary) else None
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if not isinstance(message, AssistantMessage) or message.stop_reason in ("error", "aborted"):
            continue
        if since is not None and message.timestamp <= since:
            break
        reported = _reported(message)
        if reported:
            return reported + sum(estimate_tokens(m) for m in messages[index + 1 :])
        break
    return _tokens(len(system_prompt)) + sum(estimate_tokens(m) for m in messages)


# --------------------------------------------------------------------------- the cut


def _is_cut_point(message: AgentMessage) -> bool:
    if isinstance(message, UserMessage):
        return True
    return isinstance(message, AssistantMessage) and message.stop_reason not in ("error", "aborted")


def find_cut(messages: Sequence[AgentMessage], keep_tokens: int) -> int | None:
    """Where the kept part starts: the earliest turn boundary after which at most
    ``keep_tokens`` remain (else the latest one), or None when there is nothing to drop.

    A boundary is a user message or an answer that did not fail: never a tool result (its call
    would be dropped) and never a failed answer (the request it failed on would be).
    """
    first = 2 if messages and isinstance(messages[0], CompactionSummary) else 1
    chosen: int | None = None
    latest: int | None = None
    suffix = 0
    for index in range(len(messages) - 1, first - 1, -1):
        suffix += estimate_tokens(messages[index])
        if not _is_cut_point(messages[index]):
            continue
        if latest is None:
            latest = index
        if suffix > keep_tokens:
            break
        chosen = index
    return chosen if chosen is not None else latest


# --------------------------------------------------------------------------- the summary


def _cut_text(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n[… {len(text) - limit} more characters]"


def _call_text(call: ToolCall) -> str:
    args = ", ".join(
        f"{key}={json.dumps(value, ensure_ascii=False, default=str)}"
        for key, value in call.arguments.items()
    )
    return f"{call.name}({args})"


def _user_text(content: str | Sequence[Any]) -> str:
    if isinstance(content, str):
        return content
    parts = []
    for block in content:
        if isinstance(block, TextContent):
            parts.append(block.text)
        elif isinstance(block, ImageContent):
            parts.append(f"[image {block.mime_type}]")
    return "\n".join(parts)


def serialize(messages: Sequence[AgentMessage]) -> list[str]:
    """The messages as labelled text blocks, one or more per message (tool results cut)."""
    blocks: list[str] = []
    for message in messages:
        match message:
            case CompactionSummary():
                blocks.append(f"[Summary of the conversation before]:\n{message.summary}")
            case UserMessage():
                blocks.append(f"[User]: {_user_text(message.content)}")
            case AssistantMessage():
                thinking = "\n".join(
                    b.thinking for b in message.content if isinstance(b, ThinkingContent)
                )
                if thinking:
                    blocks.append(f"[Assistant thinking]: {thinking}")
                if message.text:
                    blocks.append(f"[Assistant]: {message.text}")
                if message.tool_calls:
                    calls = "; ".join(_call_text(c) for c in message.tool_calls)
                    blocks.append(f"[Assistant tool calls]: {calls}")
                if message.stop_reason in ("error", "aborted"):
                    blocks.append(
                        f"[Assistant {message.stop_reason}]: {message.error_message or ''}"
                    )
            case ToolResultMessage():
                text = _cut_text(_user_text(message.content), TOOL_RESULT_CHARS)
                mark = " (error)" if message.is_error else ""
                blocks.append(f"[Tool result{mark}]: {text}")
    return blocks


SUMMARY_SYSTEM_PROMPT = (
    "You write the working memory of a coding assistant: a summary of a conversation between a "
    "user and the assistant that lets the assistant carry on the work from the summary alone. "
    "Answer with the summary only."
)
_STRUCTURE = """\
Use this structure, leaving out a section that would be empty:

## Goal
## Constraints and preferences
## Progress
### Done
### In progress
### Blocked
## Key decisions
## Next steps
## Critical context

Keep exact names: file paths, functions, commands, error messages, numbers."""


def summary_prompt(conversation: str, previous: str | None, instructions: str | None) -> str:
    """The user message of one summary request."""
    parts = []
    if previous:
        parts.append(f"<previous-summary>\n{previous}\n</previous-summary>")
    parts.append(f"<conversation>\n{conversation}\n</conversation>")
    if previous:
        parts.append(
            "Update the previous summary with the conversation above: keep what still holds, "
            "add what is new, and move finished work to Done."
        )
    else:
        parts.append("Summarise the conversation above.")
    parts.append(_STRUCTURE)
    if instructions:
        parts.append(f"Pay particular attention to: {instructions}")
    return "\n\n".join(parts)


def _chunks(blocks: Sequence[str], limit: int) -> list[str]:
    """The blocks joined into pieces of at most ``limit`` characters (a longer block is cut)."""
    pieces: list[str] = []
    current: list[str] = []
    size = 0
    for block in blocks:
        block = _cut_text(block, limit)
        if current and size + len(block) + 2 > limit:
            pieces.append("\n\n".join(current))
            current, size = [], 0
        current.append(block)
        size += len(block) + 2
    if current:
        pieces.append("\n\n".join(current))
    return pieces


def summary_tokens(model: Model) -> int:
    """The output budget of a summary request."""
    return max(64, min(model.max_tokens, 8192, max(256, model.context_window // 8)))


SummaryCall = Callable[[str, int], Awaitable[str]]
"""``(prompt, max_tokens) -> summary text``: one request to the model (raises on failure, and
:class:`CompactionError` for a summary cut at ``max_tokens``)."""

_MIN_SUMMARY_TOKENS = 64
"""The smallest budget a summary request gets (what it replaces is then too small to gain)."""


def _touched_files(messages: Sequence[AgentMessage]) -> tuple[list[str], list[str]]:
    read: dict[str, None] = {}
    modified: dict[str, None] = {}
    for message in messages:
        if isinstance(message, CompactionSummary):
            read.update(dict.fromkeys(message.read_files))
            modified.update(dict.fromkeys(message.modified_files))
        elif isinstance(message, AssistantMessage):
            for call in message.tool_calls:
                path = call.arguments.get("path")
                if not isinstance(path, str):
                    continue
                if call.name in _WRITE_TOOLS:
                    modified[path] = None
                elif call.name in _READ_TOOLS:
                    read[path] = None
    return [p for p in read if p not in modified], list(modified)


@dataclass
class Compacted:
    """What one compaction produced: the new context and the numbers the session records."""

    summary: CompactionSummary
    cut: int
    """Index, in the old context, of the first kept message."""
    messages_summarised: int
    tokens_before: int
    tokens_after: int
    requests: int = 1
    kept: list[AgentMessage] = field(default_factory=list)

    @property
    def messages(self) -> list[AgentMessage]:
        """The context after the compaction."""
        return [self.summary, *self.kept]


class CompactionError(RuntimeError):
    """Nothing could be compacted, or the summary request failed."""


async def compact_messages(
    messages: Sequence[AgentMessage],
    model: Model,
    settings: CompactionSettings,
    call: SummaryCall,
    *,
    system_prompt: str = "",
    instructions: str | None = None,
) -> Compacted:
    """Summarise all but the recent messages with ``call``; raises :class:`CompactionError`."""
    cut = find_cut(messages, settings.keep_tokens(model))
    if cut is None:
        raise CompactionError("nothing to compact yet: the conversation is only its latest turn")
    tokens_before = context_tokens(messages, system_prompt)
    dropped = list(messages[:cut])
    first = dropped[0]
    previous = (
        _without_file_lists(first.summary, first.read_files, first.modified_files)
        if isinstance(first, CompactionSummary)
        else None
    )
    blocks = serialize(dropped[1:] if previous is not None else dropped)
    replaced = sum(estimate_tokens(m) for m in dropped)
    # A summary must be well under what it replaces: its budget is half of that at most.
    out_tokens = min(summary_tokens(model), max(_MIN_SUMMARY_TOKENS, replaced // 2))
    # Each request must fit the window with room for the answer and the summary so far (at
    # most one answer long, or the previous summary); estimates are rough, hence the margin.
    so_far = max(out_tokens, _tokens(len(previous or "")))
    room = int(model.context_window * 0.75) - out_tokens - so_far - 600
    requests = 0
    summary = previous
    for piece in _chunks(blocks, max(2000, 4 * room)):
        text = await call(summary_prompt(piece, summary, instructions), out_tokens)
        requests += 1
        if not text.strip():
            raise CompactionError("the model wrote an empty summary")
        summary = text.strip()
    if summary is None:
        raise CompactionError("nothing to compact yet")
    read, modified = _touched_files(dropped)
    full = summary + _file_lists(read, modified)
    result = CompactionSummary(
        summary=full, tokens_before=tokens_before, read_files=read, modified_files=modified
    )
    written = estimate_tokens(result)
    if written >= replaced:
        raise CompactionError(
            f"the summary ({written:,} tokens) is not smaller than the {len(dropped)} messages "
            f"it would replace ({replaced:,} tokens); the context is left as it was"
        )
    kept = list(messages[cut:])
    after = _tokens(len(system_prompt)) + sum(estimate_tokens(m) for m in [result, *kept])
    return Compacted(result, cut, len(dropped), tokens_before, after, requests, kept)


def _without_file_lists(summary: str, read: Sequence[str], modified: Sequence[str]) -> str:
    lists = _file_lists(read, modified)
    return summary[: -len(lists)] if lists and summary.endswith(lists) else summary


def _file_lists(read: Sequence[str], modified: Sequence[str]) -> str:
    text = ""
    if read:
        text += "\n\n<read-files>\n" + "\n".join(read) + "\n</read-files>"
    if modified:
        text += "\n\n<modified-files>\n" + "\n".join(modified) + "\n</modified-files>"
    return text
