"""What a page's protocol decides about a request: which chat, what to run, how to encode.

:func:`tau.ui.chat_app` is the same for both protocols; a :class:`Protocol` reads the body
(the chat id, the new input or the decisions of a paused run) into a :class:`PreparedRun`,
whose encoder turns the run's events into the protocol's SSE frames. The AI SDK's is here;
AG-UI's is :func:`tau.ui.ag_ui.ag_ui_protocol`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from typing import Protocol as TypingProtocol

from tau.agent import Agent, AgentEvent, AgentMessage, Deny, RunResult
from tau.ai import AssistantMessage, UserMessage
from tau.proxy.sse import HTTPError
from tau.ui.ai_sdk import DONE_FRAME, UI_MESSAGE_STREAM_HEADERS, AISDKEncoder, sse_frame
from tau.ui.parts import Approval, decode_decisions, decode_user_message, shown
from tau.ui.run_stream import RunStream
from tau.ui.store import Chat

__all__ = ["PreparedRun", "Protocol", "ai_sdk_protocol", "paused_message_index"]


@dataclass(slots=True)
class PreparedRun:
    """A run to start: ``run(agent)`` starts it, ``encode`` makes an event's frames,
    ``failed(text)`` the frames of an unexpected failure, ``tail`` ends the stream;
    ``approvals`` are the page's answers to keep with the chat."""

    run: Callable[[Agent[Any]], Awaitable[RunResult[Any]]]
    encode: Callable[[AgentEvent], list[bytes]]
    failed: Callable[[str], list[bytes]]
    tail: list[bytes] = field(default_factory=list)
    approvals: dict[str, Approval] = field(default_factory=dict)

    def stream(
        self,
        agent: Agent[Any],
        on_done: Callable[[RunResult[Any] | None], Awaitable[None]],
        max_buffered: int,
    ) -> RunStream:
        """The :class:`~tau.ui.run_stream.RunStream` of this run on ``agent``."""
        return RunStream(
            agent,
            lambda: self.run(agent),
            self.encode,
            on_done,
            failed=self.failed,
            tail=self.tail,
            max_buffered=max_buffered,
        )


class Protocol(TypingProtocol):
    """A page protocol, as :func:`tau.ui.chat_app` uses it."""

    chat_id_field: str
    """Where the body names the chat (for error messages)."""
    headers: Mapping[str, str]
    """Added to the stream's response."""

    def chat_id(self, body: Mapping[str, Any]) -> Any:
        """The chat the body names (checked by the app)."""
        ...

    def choices(self, body: Mapping[str, Any]) -> Mapping[str, Any]:
        """Where the body carries the page's ``model`` and ``thinking`` choices."""
        ...

    def prepare(self, chat: Chat, agent: Agent[Any], body: Mapping[str, Any]) -> PreparedRun:
        """The run the body asks for (raises ``HTTPError`` or ``UIMessageError``)."""
        ...


def paused_message_index(messages: Sequence[AgentMessage]) -> int:
    """The index of the paused run's first assistant message (its page message id)."""
    start = 0
    for index, message in enumerate(messages):
        if isinstance(message, UserMessage):
            start = index + 1
    for index in range(start, len(messages)):
        if isinstance(messages[index], AssistantMessage):
            return index
    return start


def not_paused(chat: Chat) -> HTTPError:
    """The 409 for decisions sent to a chat that waits for none."""
    return HTTPError(409, f"chat {chat.id!r} has no paused run: there is nothing to decide")


def paused(chat: Chat) -> HTTPError:
    """The 409 for a new message sent to a chat whose run waits for decisions."""
    names = ", ".join(f"{c.id} ({c.tool_name})" for c in chat.state.pending) if chat.state else ""
    return HTTPError(
        409, f"chat {chat.id!r} waits for decisions on its tool calls ({names}): answer them first"
    )


class _AISDK:
    chat_id_field = "id"
    headers: Mapping[str, str] = UI_MESSAGE_STREAM_HEADERS

    def chat_id(self, body: Mapping[str, Any]) -> Any:
        return body.get("id")

    def choices(self, body: Mapping[str, Any]) -> Mapping[str, Any]:
        return body  # useChat's `body` option adds its fields to the request's

    def prepare(self, chat: Chat, agent: Agent[Any], body: Mapping[str, Any]) -> PreparedRun:
        trigger = body.get("trigger", "submit-message")
        if trigger not in ("submit-message", "regenerate-message"):
            raise HTTPError(
                400,
                f"trigger {shown(trigger)} is not supported (submit-message, regenerate-message)",
            )
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            raise HTTPError(400, "messages must be a non-empty list of UIMessages")
        path = f"messages[{len(messages) - 1}]"
        last = messages[-1]
        denied: set[str] = set()
        answers: dict[str, Approval] = {}
        if trigger == "regenerate-message":
            message_id = _regenerate_from(chat, agent, messages)

            def run(agent: Agent[Any]) -> Awaitable[RunResult[Any]]:
                return agent.continue_()

        elif isinstance(last, dict) and last.get("role") == "assistant":
            state = chat.state
            if state is None:
                raise not_paused(chat)
            decisions, answers = decode_decisions(last, state.pending, path)
            denied = {key for key, value in decisions.items() if isinstance(value, Deny)}
            message_id = f"m{paused_message_index(chat.messages)}"

            def run(agent: Agent[Any]) -> Awaitable[RunResult[Any]]:
                return agent.resume(state, decisions)

        else:
            user = decode_user_message(last, path)
            if chat.state is not None:
                raise paused(chat)
            message_id = f"m{len(chat.messages) + 1}"

            def run(agent: Agent[Any]) -> Awaitable[RunResult[Any]]:
                return agent.prompt(user)

        encoder = AISDKEncoder(
            message_id,
            resumed=chat.state is not None,
            denied=denied,
            is_aborted=lambda: agent.state.error is not None,
        )

        def encode(event: AgentEvent) -> list[bytes]:
            return [sse_frame(chunk) for chunk in encoder.encode(event)]

        def failed(text: str) -> list[bytes]:
            return [sse_frame({"type": "error", "errorText": text})]

        return PreparedRun(run, encode, failed, [DONE_FRAME], answers)


def _regenerate_from(chat: Chat, agent: Agent[Any], messages: list[Any]) -> str:
    """Set ``agent`` up to answer again (``useChat``'s ``regenerate()``); returns the id of
    the answer it will stream.

    The page sends its messages up to the user message whose answer is regenerated (the
    answer and everything after it dropped): that is the chat's user message of the same
    rank, whatever ids the page gave them. The chat's transcript is cut after it, so the
    saved chat holds the new answer in place of the old one.
    """
    if chat.state is not None:
        raise paused(chat)
    last = messages[-1]
    if not isinstance(last, dict) or last.get("role") != "user":
        raise HTTPError(
            400, "regenerate-message needs the messages up to a user message (its answer is redone)"
        )
    rank = sum(1 for m in messages if isinstance(m, dict) and m.get("role") == "user")
    users = [i for i, m in enumerate(chat.messages) if isinstance(m, UserMessage)]
    if rank > len(users):
        raise HTTPError(
            400,
            f"chat {chat.id!r} has {len(users)} user message(s): there is no answer to user "
            f"message {rank} to regenerate",
        )
    keep = users[rank - 1] + 1
    agent.replace_messages(chat.messages[:keep])
    return f"m{keep}"


def ai_sdk_protocol() -> Protocol:
    """The AI SDK's ``useChat`` request and UI message stream (see :mod:`tau.ui.ai_sdk`)."""
    return _AISDK()
