"""Context → OpenAI Responses request, and the request bodies
checked against the ``openai`` SDK's own ``ResponseCreateParamsStreaming`` type."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import ValidationError

from tau.ai.core.types import (
    AssistantMessage,
    Context,
    ImageContent,
    Model,
    StopReason,
    TextContent,
    ThinkingContent,
    Tool,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from tau.ai.lookup.catalog import find_model, get_model
from tau.ai.providers.openai_responses import azure as azure_openai_responses
from tau.ai.providers.openai_responses import openai as openai_responses
from tau.ai.providers.openai_responses.request import (
    convert_messages,
    decode_text_signature,
    encode_text_signature,
)
from tau.ai.streaming.builder import ProviderError
from tests import factories
from tests.ai.responses_sdk import validate_with_sdk

PNG = "iVBORw0KGgo="


def gpt(model_id: str = "gpt-5-mini") -> Model:
    model = get_model("openai", model_id)
    assert model is not None
    return model


def reasoning_item(item_id: str, summary: str = "thought") -> dict[str, Any]:
    return {
        "type": "reasoning",
        "id": item_id,
        "summary": [{"type": "summary_text", "text": summary}],
        "encrypted_content": "gAAAA" + item_id,
    }


def assistant(model: Model, *content: Any, stop: StopReason = "stop") -> AssistantMessage:
    return factories.assistant(model, *content, stop_reason=stop)


def thinking_block(item: dict[str, Any]) -> ThinkingContent:
    return ThinkingContent(item["summary"][0]["text"], json.dumps(item))


def text_block(text: str, item_id: str | None = None, phase: str | None = None) -> TextContent:
    return TextContent(text, encode_text_signature(item_id, phase) if item_id else None)


# --------------------------------------------------------------------------- messages


def test_system_prompt_role_depends_on_reasoning() -> None:
    context = Context([UserMessage("hi")], system_prompt="Be brief.")
    assert convert_messages(gpt(), context)[0] == {
        "role": "developer",
        "content": "Be brief.",
    }
    plain = gpt("gpt-4o")
    assert not plain.reasoning
    assert convert_messages(plain, context)[0] == {
        "role": "system",
        "content": "Be brief.",
    }


def test_user_text_and_images() -> None:
    context = Context(
        [
            UserMessage("hello"),
            UserMessage([TextContent("look"), ImageContent(PNG, "image/png")]),
        ]
    )
    items = convert_messages(gpt(), context)
    assert items == [
        {"role": "user", "content": [{"type": "input_text", "text": "hello"}]},
        {
            "role": "user",
            "content": [
                {"type": "input_text", "text": "look"},
                {
                    "type": "input_image",
                    "detail": "auto",
                    "image_url": f"data:image/png;base64,{PNG}",
                },
            ],
        },
    ]


def test_images_dropped_for_text_only_models_and_empty_messages_skipped() -> None:
    model = gpt()
    model.input = ["text"]
    context = Context([UserMessage([ImageContent(PNG, "image/png")]), UserMessage("x")])
    assert convert_messages(model, context) == [
        {"role": "user", "content": [{"type": "input_text", "text": "x"}]}
    ]


def test_same_model_replay_keeps_reasoning_text_ids_phase_and_call_ids() -> None:
    model = gpt()
    rs = reasoning_item("rs_1")
    message = assistant(
        model,
        thinking_block(rs),
        text_block("Let me check.", "msg_1", "commentary"),
        ToolCall("call_1|fc_1", "lookup", {"q": "x"}),
    )
    result = ToolResultMessage("call_1|fc_1", "lookup", [TextContent("42")])
    items = convert_messages(model, Context([UserMessage("q"), message, result]))
    assert items[1:] == [
        rs,
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "Let me check.", "annotations": []}],
            "status": "completed",
            "id": "msg_1",
            "phase": "commentary",
        },
        {
            "type": "function_call",
            "call_id": "call_1",
            "name": "lookup",
            "arguments": '{"q": "x"}',
            "id": "fc_1",
        },
        {"type": "function_call_output", "call_id": "call_1", "output": "42"},
    ]


def test_reasoning_items_travel_with_their_following_item() -> None:
    model = gpt()
    first, second, lost, third, orphan = (
        reasoning_item(f"rs_{name}") for name in ("a", "b", "lost", "c", "orphan")
    )
    message = assistant(
        model,
        thinking_block(first),
        ToolCall("call_1|fc_1", "a", {}),
        thinking_block(second),
        text_block("", None),  # an empty text block is not an item: rs_b pairs with the next
        text_block("done", "msg_2"),
        # rs_lost was followed by a server-side tool call (not kept): it has no follower here
        thinking_block(lost),
        thinking_block(third),
        text_block("more", "msg_3"),
        thinking_block(orphan),  # nothing follows it in this turn: it cannot be replayed
    )
    items = convert_messages(model, Context([message]))
    kinds = [(i.get("type"), i.get("id")) for i in items if i.get("type") != "function_call_output"]
    assert kinds == [
        ("reasoning", "rs_a"),
        ("function_call", "fc_1"),
        ("reasoning", "rs_b"),
        ("message", "msg_2"),
        ("reasoning", "rs_c"),
        ("message", "msg_3"),
    ]


def test_reasoning_without_signature_is_not_sent() -> None:
    model = gpt()
    message = assistant(model, ThinkingContent("no signature"), text_block("hi", "msg_1"))
    assert [i["type"] for i in convert_messages(model, Context([message]))] == ["message"]


def test_broken_reasoning_signature_is_a_clear_error() -> None:
    model = gpt()
    message = assistant(model, ThinkingContent("x", "{not json"), text_block("hi", "msg_1"))
    with pytest.raises(ProviderError, match="not a Responses reasoning item"):
        convert_messages(model, Context([message]))


def test_text_ids_legacy_missing_and_too_long() -> None:
    model = gpt()
    legacy = assistant(model, TextContent("a", "msg_legacy"))
    missing = assistant(model, TextContent("b"))
    long_id = "msg_" + "x" * 80
    too_long = assistant(model, TextContent("c", encode_text_signature(long_id, None)))
    items = convert_messages(model, Context([legacy, missing, too_long]))
    assert items[0]["id"] == "msg_legacy" and "phase" not in items[0]
    assert items[1]["id"] == "msg_1"  # msg_<index of the message>
    assert items[2]["id"].startswith("msg_") and len(items[2]["id"]) <= 64
    assert items[2]["id"] != long_id


def test_text_signature_round_trip() -> None:
    assert decode_text_signature(encode_text_signature("msg_1", "final_answer")) == (
        "msg_1",
        "final_answer",
    )
    assert decode_text_signature(encode_text_signature("msg_1", None)) == ("msg_1", None)
    assert decode_text_signature("msg_plain") == ("msg_plain", None)
    assert decode_text_signature(None) == (None, None)
    assert decode_text_signature('{"v":2,"id":"x"}') == (None, None)


def test_same_provider_other_model_drops_fc_item_id() -> None:
    target = gpt()
    other = assistant(gpt("gpt-4o"), ToolCall("call_1|fc_1", "a", {"x": 1}))
    items = convert_messages(target, Context([UserMessage("q"), other]))
    call = next(i for i in items if i.get("type") == "function_call")
    assert call["call_id"] == "call_1"
    assert "id" not in call


def test_foreign_tool_call_without_pipe_has_no_item_id() -> None:
    target = gpt()
    claude = AssistantMessage(
        [ToolCall("toolu_01ABC", "a", {})],
        api="anthropic-messages",
        provider="anthropic",
        model="claude-sonnet-4-5",
    )
    result = ToolResultMessage("toolu_01ABC", "a", [TextContent("ok")])
    items = convert_messages(target, Context([UserMessage("q"), claude, result]))
    call = next(i for i in items if i.get("type") == "function_call")
    assert call["call_id"] == "toolu_01ABC" and "id" not in call
    assert items[-1] == {"type": "function_call_output", "call_id": "toolu_01ABC", "output": "ok"}


def test_tool_result_images_become_input_image_parts() -> None:
    model = gpt()
    call = assistant(model, ToolCall("call_1|fc_1", "shot", {}))
    result = ToolResultMessage(
        "call_1|fc_1", "shot", [TextContent("a screenshot"), ImageContent(PNG, "image/png")]
    )
    image_only = ToolResultMessage("call_2|fc_2", "shot", [ImageContent(PNG, "image/png")])
    call2 = assistant(model, ToolCall("call_2|fc_2", "shot", {}))
    items = convert_messages(model, Context([call, result, call2, image_only]))
    outputs = [i["output"] for i in items if i.get("type") == "function_call_output"]
    image = {"type": "input_image", "detail": "auto", "image_url": f"data:image/png;base64,{PNG}"}
    assert outputs == [[{"type": "input_text", "text": "a screenshot"}, image], [image]]

    text_only = gpt()
    text_only.input = ["text"]
    items = convert_messages(text_only, Context([call, result, call2, image_only]))
    outputs = [i["output"] for i in items if i.get("type") == "function_call_output"]
    assert outputs == ["a screenshot", "(see attached image)"]


def test_errored_and_aborted_turns_are_not_replayed() -> None:
    model = gpt()
    aborted = assistant(model, thinking_block(reasoning_item("rs_x")), stop="aborted")
    items = convert_messages(model, Context([UserMessage("q"), aborted, UserMessage("again")]))
    assert [i.get("role") for i in items] == ["user", "user"]


# --------------------------------------------------------------------------- params


def test_openai_params() -> None:
    model = gpt()
    context = Context(
        [UserMessage("hi")], tools=[Tool("get", "Get it.", {"type": "object", "properties": {}})]
    )
    payload = openai_responses.request_body(
        model,
        context,
        {
            "session_id": "sess-1",
            "max_tokens": 1000,
            "temperature": 0.2,
            "service_tier": "flex",
            "reasoning_effort": "high",
        },
    )
    assert payload["model"] == "gpt-5-mini"
    assert payload["stream"] is True and payload["store"] is False
    assert payload["prompt_cache_key"] == "sess-1"
    assert "prompt_cache_retention" not in payload
    assert payload["max_output_tokens"] == 1000
    assert payload["temperature"] == 0.2
    assert payload["service_tier"] == "flex"
    assert payload["reasoning"] == {"effort": "high", "summary": "auto"}
    assert payload["include"] == ["reasoning.encrypted_content"]
    assert payload["tools"] == [
        {
            "type": "function",
            "name": "get",
            "description": "Get it.",
            "parameters": {"type": "object", "properties": {}},
            "strict": False,
        }
    ]


def test_cache_retention() -> None:
    model = gpt()
    context = Context([UserMessage("hi")])
    long = openai_responses.request_body(
        model, context, {"session_id": "s", "cache_retention": "long"}
    )
    assert long["prompt_cache_retention"] == "24h" and long["prompt_cache_key"] == "s"
    none = openai_responses.request_body(
        model, context, {"session_id": "s", "cache_retention": "none"}
    )
    assert "prompt_cache_key" not in none and "prompt_cache_retention" not in none
    elsewhere = gpt()
    elsewhere.base_url = "https://openrouter.ai/api/v1"
    other = openai_responses.request_body(
        elsewhere, context, {"session_id": "s", "cache_retention": "long"}
    )
    assert "prompt_cache_retention" not in other and other["prompt_cache_key"] == "s"


def test_reasoning_params_only_for_reasoning_models() -> None:
    context = Context([UserMessage("hi")])
    plain = openai_responses.request_body(gpt("gpt-4o"), context, {"reasoning_effort": "high"})
    assert "reasoning" not in plain and "include" not in plain
    quiet = openai_responses.request_body(gpt(), context, {})
    assert "reasoning" not in quiet
    assert quiet["include"] == ["reasoning.encrypted_content"]
    summary = openai_responses.request_body(gpt(), context, {"reasoning_summary": "detailed"})
    assert summary["reasoning"] == {"effort": "medium", "summary": "detailed"}


@pytest.mark.parametrize(
    ("model_id", "level", "effort"),
    [
        ("gpt-5-mini", "xhigh", "high"),
        ("gpt-5.2", "xhigh", "xhigh"),
        ("gpt-5-mini", "minimal", "minimal"),
    ],
)
def test_stream_simple_maps_level_to_effort(model_id: str, level: str, effort: str) -> None:
    model = find_model("openai", model_id) or gpt()
    model.id = model_id
    options = openai_responses.simple_reasoning_options(model, {"reasoning": level})
    assert options["reasoning_effort"] == effort
    assert "reasoning" not in options


# --------------------------------------------------------------------------- azure


def azure_model() -> Model:
    model = find_model("azure-openai-responses", "gpt-5-mini") or get_model(
        "azure-openai-responses", "gpt-4.1"
    )
    assert model is not None
    return model


def test_azure_deployment_base_url_and_version(monkeypatch: pytest.MonkeyPatch) -> None:
    model = azure_model()
    for name in ("AZURE_OPENAI_BASE_URL", "AZURE_OPENAI_RESOURCE_NAME", "AZURE_OPENAI_API_VERSION"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AZURE_OPENAI_DEPLOYMENT_NAME_MAP", f" {model.id} = my-dep , broken, =x, y=")
    assert azure_openai_responses.resolve_deployment(model, {}) == "my-dep"
    assert (
        azure_openai_responses.resolve_deployment(model, {"azure_deployment_name": "explicit"})
        == "explicit"
    )
    monkeypatch.setenv("AZURE_OPENAI_DEPLOYMENT_NAME_MAP", "other=dep")
    assert azure_openai_responses.resolve_deployment(model, {}) == model.id

    model.base_url = ""
    with pytest.raises(ProviderError, match="AZURE_OPENAI_RESOURCE_NAME"):
        azure_openai_responses.resolve_base_url(model, {})
    monkeypatch.setenv("AZURE_OPENAI_RESOURCE_NAME", "myres")
    assert (
        azure_openai_responses.resolve_base_url(model, {})
        == "https://myres.openai.azure.com/openai/v1"
    )
    monkeypatch.setenv("AZURE_OPENAI_BASE_URL", "https://proxy.example/openai/v1/")
    assert azure_openai_responses.resolve_base_url(model, {}) == "https://proxy.example/openai/v1"
    assert (
        azure_openai_responses.resolve_base_url(
            model, {"azure_base_url": " https://o.example/v1/ "}
        )
        == "https://o.example/v1"
    )
    assert azure_openai_responses.resolve_api_version({}) == "v1"
    monkeypatch.setenv("AZURE_OPENAI_API_VERSION", "2025-04-01-preview")
    assert azure_openai_responses.resolve_api_version({}) == "2025-04-01-preview"
    assert azure_openai_responses.resolve_api_version({"azure_api_version": "x"}) == "x"


def test_azure_params_store_false_and_cache_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AZURE_OPENAI_DEPLOYMENT_NAME_MAP", raising=False)
    model = azure_model()
    payload = azure_openai_responses.request_body(
        model,
        Context([UserMessage("hi")]),
        {"session_id": "s", "azure_deployment_name": "dep", "service_tier": "flex"},
    )
    assert payload["model"] == "dep"
    assert payload["store"] is False  # pi omits it; tau never stores by default
    assert payload["prompt_cache_key"] == "s"
    assert "service_tier" not in payload and "prompt_cache_retention" not in payload


# --------------------------------------------------------------------------- SDK types


def handoff_context() -> Context:
    model = gpt()
    claude = AssistantMessage(
        [
            ThinkingContent("foreign thought", "sig"),
            TextContent("Claude here"),
            ToolCall("toolu_9", "shot", {"a": 1}),
        ],
        api="anthropic-messages",
        provider="anthropic",
        model="claude-sonnet-4-5",
    )
    mine = assistant(
        model,
        thinking_block(reasoning_item("rs_1")),
        text_block("Checking.", "msg_1", "commentary"),
        ToolCall("call_1|fc_1", "shot", {}),
    )
    return Context(
        [
            UserMessage([TextContent("see"), ImageContent(PNG, "image/png")]),
            claude,
            ToolResultMessage(
                "toolu_9", "shot", [TextContent("img"), ImageContent(PNG, "image/png")]
            ),
            mine,
            ToolResultMessage(
                "call_1|fc_1", "shot", [ImageContent(PNG, "image/png")], is_error=True
            ),
            assistant(
                gpt("gpt-4o"), TextContent("older model"), ToolCall("call_2|fc_2", "shot", {})
            ),
            ToolResultMessage("call_2|fc_2", "shot", [TextContent("")]),
            UserMessage("go on"),
        ],
        system_prompt="sys",
        tools=[
            Tool(
                "shot", "Screenshot.", {"type": "object", "properties": {"a": {"type": "integer"}}}
            )
        ],
    )


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"session_id": "s", "cache_retention": "long", "max_tokens": 10, "temperature": 0.5},
        {"reasoning_effort": "low", "reasoning_summary": "concise", "service_tier": "priority"},
        {"tool_choice": "required"},
        {"tool_choice": {"type": "function", "name": "shot"}},
    ],
)
@pytest.mark.parametrize("model_id", ["gpt-5-mini", "gpt-4o"])
def test_request_bodies_match_the_sdk_types(options: dict[str, Any], model_id: str) -> None:
    model = gpt(model_id)
    for context in (Context([UserMessage("hi")]), handoff_context()):
        validate_with_sdk(openai_responses.request_body(model, context, options))
        validate_with_sdk(azure_openai_responses.request_body(azure_model(), context, options))


def test_sdk_validation_can_fail() -> None:
    text = {"type": "output_text", "text": "x", "annotations": []}
    message = {"type": "message", "role": "assistant", "id": "m", "status": "completed"}
    validate_with_sdk({"model": "m", "input": [{**message, "content": [text]}], "stream": True})
    for bad in (
        {"model": "m", "input": [], "stream": True, "bogus": 1},
        {"model": "m", "input": [{**message, "content": [{**text, "extra": 1}]}], "stream": True},
        {"model": "m", "input": [{"type": "function_call", "call_id": "c"}], "stream": True},
    ):
        with pytest.raises(ValidationError):
            validate_with_sdk(bad)
