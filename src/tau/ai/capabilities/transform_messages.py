"""Cross-provider handoff: make a history written by any models safe to send to ``target``.

Every adapter runs this before converting messages to its wire format. It never modifies the
messages it is given; changed messages and blocks are new objects.

* Thinking is replayed only to the model that wrote it (same provider, api and model id), and
  only with a non-empty signature: a thinking block without one (an Anthropic stream cut before
  its ``signature_delta``) cannot go back as thinking. Another model's thinking, and unsigned
  thinking, is dropped by default; ``foreign_thinking="text"`` keeps it as a plain text block
  instead (never wrapped in ``<thinking>`` tags, which models learn to imitate). Redacted
  thinking is kept for its own model only, never turned into text.
* Text and tool calls from another model lose their opaque signatures; tool-call ids can be
  rewritten for the target by a normaliser, and the tool results answering them follow.
* Assistant messages that ended in ``error`` or ``aborted`` are left out, and so are the tool
  results answering their calls (results of calls the provider never saw would be rejected).
* A tool call without a result gets a synthetic error result, ``"No result provided"``, also
  when it is the last thing in the history. A second result for the same call is left out.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Literal, TypeAlias

from tau.ai.core.types import (
    AssistantContent,
    AssistantMessage,
    Message,
    Model,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from tau.ai.streaming.hash import short_hash

__all__ = [
    "ForeignThinking",
    "MistralIdNormalizer",
    "ToolCallIdNormalizer",
    "normalize_id_anthropic",
    "normalize_id_openai_completions",
    "normalize_id_responses",
    "transform_messages",
]

ToolCallIdNormalizer: TypeAlias = Callable[[str, Model, AssistantMessage], str]
"""``(tool_call_id, target_model, source_message) -> id`` valid for the target provider."""

ForeignThinking: TypeAlias = Literal["drop", "text"]
"""What becomes of thinking that cannot be replayed as thinking: dropped, or plain text."""

NO_RESULT = "No result provided"


def transform_messages(
    messages: Sequence[Message],
    target_model: Model,
    normalize_tool_call_id: ToolCallIdNormalizer | None = None,
    *,
    foreign_thinking: ForeignThinking = "drop",
) -> list[Message]:
    """The history ``messages`` rewritten for ``target_model`` (see the module docstring).

    ``normalize_tool_call_id`` is applied to tool calls written by another model; the ids it
    changes are changed in the matching tool results too.
    """
    if foreign_thinking not in ("drop", "text"):
        raise ValueError(f"foreign_thinking must be 'drop' or 'text', not {foreign_thinking!r}")
    out: list[Message] = []
    # The calls of the last kept assistant message still waiting for a result, by (new) id.
    pending: dict[str, ToolCall] = {}
    renamed: dict[str, str] = {}  # old id -> new id, for the last kept assistant message
    answered: set[str] = set()  # ids that have had their result (real or synthetic)
    skipped: set[str] = set()  # ids of calls in left-out (errored or aborted) messages

    def close_pending() -> None:
        for call_id, call in pending.items():
            out.append(
                ToolResultMessage(call_id, call.name, [TextContent(NO_RESULT)], is_error=True)
            )
            answered.add(call_id)
        pending.clear()

    for message in messages:
        if isinstance(message, UserMessage):
            close_pending()
            out.append(message)
        elif isinstance(message, AssistantMessage):
            close_pending()
            if message.stop_reason in ("error", "aborted"):
                skipped.update(call.id for call in message.tool_calls)
                continue
            renamed = {}
            rewritten = _rewrite_assistant(
                message, target_model, normalize_tool_call_id, foreign_thinking, renamed
            )
            if not rewritten.content:
                continue  # nothing left to send (it held only thinking that was dropped)
            out.append(rewritten)
            pending = {call.id: call for call in rewritten.tool_calls}
        elif isinstance(message, ToolResultMessage):
            call_id = renamed.get(message.tool_call_id, message.tool_call_id)
            if call_id in pending:
                del pending[call_id]
                answered.add(call_id)
                if call_id != message.tool_call_id:
                    message = ToolResultMessage(
                        call_id,
                        message.tool_name,
                        message.content,
                        message.is_error,
                        message.details,
                        message.timestamp,
                    )
                out.append(message)
            elif call_id in answered or message.tool_call_id in skipped:
                continue  # a duplicate, or the answer to a call that was left out
            else:
                out.append(message)  # answers nothing known: left for the provider to judge
    close_pending()
    return out


def _same_model(message: AssistantMessage, target: Model) -> bool:
    return (
        message.provider == target.provider
        and message.api == target.api
        and message.model == target.id
    )


def _rewrite_assistant(
    message: AssistantMessage,
    target: Model,
    normalize: ToolCallIdNormalizer | None,
    foreign_thinking: ForeignThinking,
    renamed: dict[str, str],
) -> AssistantMessage:
    same = _same_model(message, target)
    content: list[AssistantContent] = []
    changed = False
    for block in message.content:
        if isinstance(block, ThinkingContent):
            signed = bool(block.thinking_signature and block.thinking_signature.strip())
            if same and signed:
                content.append(block)  # replayable as is, even with empty text (encrypted)
                continue
            changed = True
            if not block.redacted and foreign_thinking == "text" and block.thinking.strip():
                content.append(TextContent(block.thinking))
        elif isinstance(block, TextContent):
            if same or block.text_signature is None:
                content.append(block)
            else:
                changed = True
                content.append(TextContent(block.text))
        elif isinstance(block, ToolCall):
            if same:
                content.append(block)
                continue
            new_id = normalize(block.id, target, message) if normalize is not None else block.id
            if new_id != block.id:
                renamed[block.id] = new_id
            if new_id != block.id or block.thought_signature is not None:
                changed = True
                block = ToolCall(new_id, block.name, block.arguments)
            content.append(block)
        else:
            content.append(block)
    if not changed:
        return message
    return AssistantMessage(
        content,
        message.api,
        message.provider,
        message.model,
        message.usage,
        message.stop_reason,
        message.error_message,
        message.timestamp,
    )


# --------------------------------------------------------------------------- id normalisers

_NOT_ID_CHAR = re.compile(r"[^A-Za-z0-9_-]")
_NOT_ALNUM = re.compile(r"[^A-Za-z0-9]")
_RESPONSES_PROVIDERS = frozenset({"openai", "openai-codex", "opencode"})


def normalize_id_anthropic(
    id: str, target_model: Model | None = None, source: AssistantMessage | None = None
) -> str:
    """Anthropic (and Bedrock) tool-use ids: ``[A-Za-z0-9_-]`` only, at most 64 characters."""
    return _NOT_ID_CHAR.sub("_", id)[:64]


def normalize_id_openai_completions(
    id: str, target_model: Model | None = None, source: AssistantMessage | None = None
) -> str:
    """Chat-completions ids: a Responses ``call_id|item_id`` keeps its sanitised call id (40
    characters at most); an id longer than 40 is cut to 40 for OpenAI itself."""
    if "|" in id:
        return _NOT_ID_CHAR.sub("_", id.split("|", 1)[0])[:40]
    if target_model is not None and target_model.provider == "openai" and len(id) > 40:
        return id[:40]
    return id


def normalize_id_responses(
    id: str, target_model: Model | None = None, source: AssistantMessage | None = None
) -> str:
    """OpenAI Responses ``call_id|item_id`` pairs from another model, made valid for OpenAI's
    own Responses endpoints: both parts sanitised, the item id prefixed ``fc_``, each at most 64
    characters without trailing underscores. Other ids and other providers pass unchanged."""
    if target_model is None or "|" not in id:
        return id
    allowed = target_model.provider in _RESPONSES_PROVIDERS or (
        target_model.api == "azure-openai-responses"
        and target_model.provider == "azure-openai-responses"
    )
    if not allowed:
        return id
    call_id, item_id = (_NOT_ID_CHAR.sub("_", part) for part in id.split("|", 1))
    if not item_id.startswith("fc"):
        item_id = "fc_" + item_id
    return f"{call_id[:64].rstrip('_')}|{item_id[:64].rstrip('_')}"


class MistralIdNormalizer:
    """Mistral's tool-call ids: exactly 9 letters or digits. Make one per request.

    An id that is 9 alphanumerics once stripped of other characters keeps them; any other id
    gets 9 characters of :func:`short_hash` of it (re-hashed with ``:1``, ``:2``… on a clash).
    The mapping is remembered both ways, so it is injective and stable within the request.
    """

    __slots__ = ("_by_id", "_owner")

    def __init__(self) -> None:
        self._by_id: dict[str, str] = {}
        self._owner: dict[str, str] = {}

    def __call__(
        self, id: str, target_model: Model | None = None, source: AssistantMessage | None = None
    ) -> str:
        """The 9-character id for ``id``."""
        known = self._by_id.get(id)
        if known is not None:
            return known
        stripped = _NOT_ALNUM.sub("", id)
        candidate = stripped if len(stripped) == 9 and stripped not in self._owner else ""
        seed = stripped or id
        attempt = 0
        while not candidate or candidate in self._owner:
            candidate = _hash9(seed if attempt == 0 else f"{seed}:{attempt}")
            attempt += 1
        self._by_id[id] = candidate
        self._owner[candidate] = id
        return candidate


def _hash9(seed: str) -> str:
    """Nine alphanumerics from ``short_hash`` (extended in the rare case it is shorter)."""
    digest = short_hash(seed)
    while len(digest) < 9:
        digest += short_hash(digest)
    return digest[:9]
