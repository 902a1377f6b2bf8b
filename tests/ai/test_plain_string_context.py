"""A plain string where a context or a message belongs is one user message, everywhere."""

from __future__ import annotations

import pytest

from tau.ai import Context, UserMessage, complete, complete_sync, get_model, stream, stream_sync
from tau.ai.providers.faux import faux_calls


def _echo():
    return get_model("faux", "echo")


def test_complete_sync_with_a_string_is_one_user_message() -> None:
    answer = complete_sync(_echo(), "hi there")
    assert answer.stop_reason == "stop", answer.error_message
    assert answer.text == "hi there"


async def test_async_entry_points_take_a_string_too() -> None:
    model = _echo()
    answer = await complete(model, "async hi")
    assert (answer.stop_reason, answer.text) == ("stop", "async hi")
    s = stream(model, "streamed hi")
    final = await s.result()
    assert final.text == "streamed hi"
    context, _ = faux_calls(model)[-1]
    assert isinstance(context, Context)
    [message] = context.messages
    assert isinstance(message, UserMessage) and message.content == "streamed hi"


def test_stream_sync_with_a_string() -> None:
    deltas = [e.delta for e in stream_sync(_echo(), "sync stream") if e.type == "text_delta"]
    assert "".join(deltas) == "sync stream"


def test_strings_inside_a_context_are_user_messages() -> None:
    context = Context(["hi", UserMessage("there")])
    assert all(isinstance(m, UserMessage) for m in context.messages)
    assert [m.content for m in context.messages] == ["hi", "there"]
    assert complete_sync(_echo(), Context(["echo this"])).text == "echo this"
    assert [m.content for m in Context("just a string").messages] == ["just a string"]  # type: ignore[arg-type]


def test_anything_else_is_a_clear_type_error_at_the_call() -> None:
    with pytest.raises(TypeError, match=r"Context\.messages\[0\].*dict.*UserMessage"):
        Context([{"role": "user", "content": "hi"}])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="context must be a Context or a str"):
        complete_sync(_echo(), [UserMessage("hi")])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="context must be a Context or a str"):
        stream_sync(_echo(), None)  # type: ignore[arg-type]
