"""Cross-provider handoff with tau's fixes: thinking, signatures, orphans, ids."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tau.ai import (
    AssistantMessage,
    Message,
    Model,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
    dump_message,
)
from tau.ai.capabilities.transform_messages import (
    MistralIdNormalizer,
    normalize_id_anthropic,
    normalize_id_openai_completions,
    normalize_id_responses,
    transform_messages,
)
from tests import factories

CLAUDE = Model("claude-sonnet-4-5", "Claude", "anthropic-messages", "anthropic", "https://a")
GPT = Model("gpt-5", "GPT-5", "openai-responses", "openai", "https://o")
MISTRAL = Model("mistral-large", "Mistral", "mistral-conversations", "mistral", "https://m")


assistant = factories.assistant


def result(call_id: str, text: str = "ok", name: str = "read") -> ToolResultMessage:
    return factories.tool_result(call_id, text, name=name)


def snapshot(messages: list[Message]) -> str:
    return json.dumps([dump_message(m) for m in messages], sort_keys=True)


def run(messages: list[Message], target: Model, **kwargs: Any) -> list[Message]:
    """transform_messages, checking on the way that it leaves its input untouched."""
    before = snapshot(messages)
    out = transform_messages(messages, target, **kwargs)
    assert snapshot(messages) == before
    return out


# --------------------------------------------------------------------------- thinking


def test_same_model_keeps_signed_thinking_and_signatures() -> None:
    thinking = ThinkingContent("let me see", thinking_signature="sig==")
    encrypted = ThinkingContent("", thinking_signature='{"type":"reasoning","id":"rs_1"}')
    text = TextContent("answer", text_signature="msg_1")
    call = ToolCall("toolu_1", "read", {"p": 1}, thought_signature="ts")
    message = assistant(CLAUDE, thinking, encrypted, text, call, stop_reason="toolUse")
    out = run([UserMessage("hi"), message, result("toolu_1")], CLAUDE)
    assert out[1] is message  # nothing to change: the very same object
    assert out[2].tool_call_id == "toolu_1"  # type: ignore[union-attr]


@pytest.mark.parametrize("signature", [None, "", "   "])
def test_unsigned_thinking_of_the_same_model_is_not_replayed_as_thinking(
    signature: str | None,
) -> None:
    message = assistant(CLAUDE, ThinkingContent("half a thought", signature), TextContent("hi"))
    dropped = run([message], CLAUDE)[0]
    assert isinstance(dropped, AssistantMessage)
    assert dropped.content == [TextContent("hi")]
    kept = run([message], CLAUDE, foreign_thinking="text")[0]
    assert kept.content == [TextContent("half a thought"), TextContent("hi")]  # type: ignore[union-attr]
    assert all(not isinstance(b, ThinkingContent) for b in kept.content)  # type: ignore[union-attr]


def test_foreign_thinking_dropped_by_default_or_plain_text_on_request() -> None:
    message = assistant(
        GPT,
        ThinkingContent("reasoning", thinking_signature='{"id":"rs_1"}'),
        ThinkingContent("   ", thinking_signature="x"),
        TextContent("done"),
    )
    assert run([message], CLAUDE)[0].content == [TextContent("done")]  # type: ignore[union-attr]
    as_text = run([message], CLAUDE, foreign_thinking="text")[0].content  # type: ignore[union-attr]
    assert as_text == [TextContent("reasoning"), TextContent("done")]
    assert "<thinking>" not in as_text[0].text  # type: ignore[union-attr]


def test_redacted_thinking_only_for_its_own_model() -> None:
    redacted = ThinkingContent("[Reasoning redacted]", thinking_signature="opaque", redacted=True)
    message = assistant(CLAUDE, redacted, TextContent("x"))
    assert run([message], CLAUDE)[0].content[0] is redacted  # type: ignore[union-attr]
    other = Model("claude-opus-4", "Opus", "anthropic-messages", "anthropic", "https://a")
    for mode in ("drop", "text"):
        out = run([message], other, foreign_thinking=mode)[0]
        assert out.content == [TextContent("x")]  # type: ignore[union-attr]


def test_same_model_requires_provider_api_and_id() -> None:
    signed = ThinkingContent("t", thinking_signature="sig")
    for other in (
        Model(CLAUDE.id, "", CLAUDE.api, "amazon-bedrock", ""),  # Bedrock-hosted Claude
        Model(CLAUDE.id, "", "bedrock-converse-stream", CLAUDE.provider, ""),
        Model("claude-opus-4", "", CLAUDE.api, CLAUDE.provider, ""),
    ):
        out = run([assistant(CLAUDE, signed, TextContent("a"))], other)[0]
        assert out.content == [TextContent("a")]  # type: ignore[union-attr]


def test_message_left_with_nothing_is_omitted() -> None:
    only_thinking = assistant(GPT, ThinkingContent("hmm", thinking_signature="s"))
    out = run([UserMessage("q"), only_thinking, UserMessage("again")], CLAUDE)
    assert [m.role for m in out] == ["user", "user"]


def test_foreign_thinking_option_is_checked() -> None:
    with pytest.raises(ValueError, match="foreign_thinking"):
        transform_messages([], CLAUDE, foreign_thinking="tags")  # type: ignore[arg-type]


# --------------------------------------------------------------------------- text and tool calls


def test_foreign_text_and_tool_calls_lose_signatures() -> None:
    message = assistant(
        Model("gemini-3-pro", "", "google-generative-ai", "google", ""),
        TextContent("see", text_signature="gsig"),
        ToolCall("read_1", "read", {"p": "/x"}, thought_signature="gsig2"),
        stop_reason="toolUse",
    )
    out = run([message, result("read_1")], CLAUDE)
    new = out[0]
    assert isinstance(new, AssistantMessage) and new is not message
    assert new.content[0].text_signature is None  # type: ignore[union-attr]
    call = new.content[1]
    assert isinstance(call, ToolCall) and call.thought_signature is None
    assert call.arguments == {"p": "/x"} and call.id == "read_1"
    assert (new.api, new.provider, new.model) == (message.api, message.provider, message.model)
    assert message.content[1].thought_signature == "gsig2"  # type: ignore[union-attr]


def test_ids_are_normalised_and_results_follow() -> None:
    seen: list[tuple[str, Model, AssistantMessage]] = []

    def normalise(id: str, target: Model, source: AssistantMessage) -> str:
        seen.append((id, target, source))
        return normalize_id_anthropic(id)

    message = assistant(
        GPT,
        ToolCall("call_a+/=|fc_1", "read", {}),
        ToolCall("call_b|fc_2", "read", {}),
        stop_reason="toolUse",
    )
    original_result = result("call_b|fc_2", "B")
    out = run(
        [message, result("call_a+/=|fc_1", "A"), original_result],
        CLAUDE,
        normalize_tool_call_id=normalise,
    )
    assert [c.id for c in out[0].tool_calls] == ["call_a____fc_1", "call_b_fc_2"]  # type: ignore[union-attr]
    assert [(m.tool_call_id, m.content) for m in out[1:]] == [  # type: ignore[union-attr]
        ("call_a____fc_1", [TextContent("A")]),
        ("call_b_fc_2", [TextContent("B")]),
    ]
    assert out[2] is not original_result and original_result.tool_call_id == "call_b|fc_2"
    assert [s[0] for s in seen] == ["call_a+/=|fc_1", "call_b|fc_2"]
    assert seen[0][1] is CLAUDE and seen[0][2] is message


def test_normaliser_not_called_for_the_same_model() -> None:
    def fail(id: str, target: Model, source: AssistantMessage) -> str:
        raise AssertionError("called")

    message = assistant(CLAUDE, ToolCall("toolu_1", "read", {}), stop_reason="toolUse")
    assert run([message, result("toolu_1")], CLAUDE, normalize_tool_call_id=fail)[0] is message


# --------------------------------------------------------------------------- orphans and errors


@pytest.mark.parametrize("stop_reason", ["error", "aborted"])
def test_failed_assistant_and_its_results_are_left_out(stop_reason: str) -> None:
    failed = assistant(
        CLAUDE,
        ThinkingContent("x", thinking_signature=""),
        ToolCall("toolu_bad", "read", {}),
        stop_reason=stop_reason,
    )
    messages: list[Message] = [UserMessage("q"), failed, result("toolu_bad"), UserMessage("retry")]
    out = run(messages, CLAUDE)
    assert [m.role for m in out] == ["user", "user"]


def test_missing_results_get_synthetic_errors_everywhere() -> None:
    first = assistant(
        CLAUDE, ToolCall("t1", "read", {}), ToolCall("t2", "write", {}), stop_reason="toolUse"
    )
    second = assistant(CLAUDE, ToolCall("t3", "read", {}), stop_reason="toolUse")
    last = assistant(CLAUDE, ToolCall("t4", "grep", {}), stop_reason="toolUse")
    messages: list[Message] = [
        first,
        result("t2", name="write"),
        UserMessage("interrupt"),  # t1 never answered
        second,  # t3 never answered before the next assistant message
        last,  # t4 pending at the very end (pi leaves this one out)
    ]
    out = run(messages, CLAUDE)
    shape = [(m.role, getattr(m, "tool_call_id", None), getattr(m, "is_error", None)) for m in out]
    assert shape == [
        ("assistant", None, None),
        ("toolResult", "t2", False),
        ("toolResult", "t1", True),
        ("user", None, None),
        ("assistant", None, None),
        ("toolResult", "t3", True),
        ("assistant", None, None),
        ("toolResult", "t4", True),
    ]
    synthetic = out[2]
    assert isinstance(synthetic, ToolResultMessage)
    assert synthetic.tool_name == "read" and synthetic.content == [
        TextContent("No result provided")
    ]


def test_late_and_duplicate_results_are_left_out_unknown_ones_kept() -> None:
    call = assistant(CLAUDE, ToolCall("t1", "read", {}), stop_reason="toolUse")
    messages: list[Message] = [
        call,
        result("t1", "first"),
        result("t1", "again"),  # a duplicate
        UserMessage("u"),
        result("t1", "late"),  # after it was answered
        result("mystery", "?"),  # answers no call tau knows: left to the provider
    ]
    out = run(messages, CLAUDE)
    texts = [m.content[0].text for m in out if isinstance(m, ToolResultMessage)]  # type: ignore[union-attr]
    assert texts == ["first", "?"]


def test_synthetic_result_uses_the_normalised_id() -> None:
    message = assistant(GPT, ToolCall("call_x|fc_y", "read", {}), stop_reason="toolUse")
    out = run([message], CLAUDE, normalize_tool_call_id=normalize_id_anthropic)
    assert out[1].tool_call_id == "call_x_fc_y"  # type: ignore[union-attr]


# --------------------------------------------------------------------------- normalisers


def test_normalize_id_anthropic() -> None:
    assert normalize_id_anthropic("call_abc|fc_1+/=") == "call_abc_fc_1___"
    assert len(normalize_id_anthropic("x" * 100)) == 64
    assert normalize_id_anthropic("toolu_01-AbC") == "toolu_01-AbC"


def test_normalize_id_openai_completions() -> None:
    openai = Model("gpt-4o", "", "openai-completions", "openai", "")
    groq = Model("llama", "", "openai-completions", "groq", "")
    assert normalize_id_openai_completions("call_pAYb+/=|fc_123", openai) == "call_pAYb___"
    assert normalize_id_openai_completions("c" * 60 + "|fc", groq) == "c" * 40
    assert normalize_id_openai_completions("t" * 50, openai) == "t" * 40
    assert normalize_id_openai_completions("t" * 50, groq) == "t" * 50


def test_normalize_id_responses_verified_example() -> None:
    out = normalize_id_responses("call_pAYb+/=|t5nnb2q+/YMFW==", GPT)
    assert out == "call_pAYb|fc_t5nnb2q__YMFW"
    assert normalize_id_responses("call_1|fc_2", GPT) == "call_1|fc_2"
    assert normalize_id_responses("a" * 80 + "|" + "b" * 80, GPT) == "a" * 64 + "|fc_" + "b" * 61
    assert normalize_id_responses("toolu_1", GPT) == "toolu_1"  # no pipe: unchanged
    other = Model("gpt-5", "", "openai-responses", "openrouter", "")
    assert normalize_id_responses("call_pAYb+/=|x", other) == "call_pAYb+/=|x"
    azure = Model("gpt-5", "", "azure-openai-responses", "azure-openai-responses", "")
    assert normalize_id_responses("c+|i", azure) == "c|fc_i"


def test_mistral_ids_are_nine_alphanumerics_and_injective() -> None:
    normalise = MistralIdNormalizer()
    assert normalise("abcDE1234") == "abcDE1234"  # already fits
    assert normalise("ab-cDE1234") != "abcDE1234"  # strips to a taken id: hashed instead
    assert normalise("abcDE1234") == "abcDE1234"
    ids = [f"toolu_{i:04d}" for i in range(2000)] + ["call|x", "", "!!!", "日本", "abcDE1234"]
    ids += ["ab-cDE1234", "abcDE_1234"]  # strip to the same nine characters as an earlier id
    out = [normalise(i) for i in ids]
    assert all(len(o) == 9 and o.isalnum() and o.isascii() for o in out)
    assert len(set(out)) == len(set(ids))  # injective
    assert [normalise(i) for i in ids] == out  # stable
    assert MistralIdNormalizer()("toolu_0001") == out[1]  # deterministic across requests


def test_mistral_normaliser_in_a_handoff() -> None:
    message = assistant(CLAUDE, ToolCall("toolu_01XYZ", "read", {}), stop_reason="toolUse")
    out = run(
        [message, result("toolu_01XYZ")], MISTRAL, normalize_tool_call_id=MistralIdNormalizer()
    )
    new_id = out[0].tool_calls[0].id  # type: ignore[union-attr]
    assert len(new_id) == 9 and out[1].tool_call_id == new_id  # type: ignore[union-attr]
