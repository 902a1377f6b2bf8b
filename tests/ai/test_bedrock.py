"""Bedrock ConverseStream adapter: request body, signing, event-stream decoding, errors."""

from __future__ import annotations

import json
from typing import Any

import pytest

pytest.importorskip("botocore")

from botocore.session import get_session
from botocore.validate import ParamValidator

from tau.ai import Context, UserMessage, stream, stream_simple
from tau.ai.core.types import (
    AssistantMessage,
    ImageContent,
    Model,
    TextContent,
    ThinkingContent,
    Tool,
    ToolCall,
    ToolResultMessage,
)
from tau.ai.providers.bedrock import auth as bedrock_auth
from tau.ai.providers.bedrock import request as bedrock
from tests import factories
from tests.ai.servers import CLOSE, LocalServer, Reply
from tests.ai.stream_checks import check_grammar, stream_aborting_at
from tests.factories import bedrock_event, bedrock_exception, event_stream_frame

EVENT_STREAM = {"content-type": "application/vnd.amazon.eventstream"}
IMG = ImageContent("aGVsbG8=", "image/png")
CLAUDE = "us.anthropic.claude-sonnet-4-20250514-v1:0"


def model(
    model_id: str = CLAUDE,
    base_url: str = "https://bedrock-runtime.us-east-1.amazonaws.com",
    **kw: Any,
) -> Model:
    kw.setdefault("reasoning", True)
    return factories.model(
        "bedrock-converse-stream", "amazon-bedrock", model_id, base_url, max_tokens=64000, **kw
    )


def validate(body: dict[str, Any], model_id: str = CLAUDE) -> None:
    """Validate against botocore's ConverseStream input shape (the service model)."""
    shape = (
        get_session()
        .get_service_model("bedrock-runtime")
        .operation_model("ConverseStream")
        .input_shape
    )
    report = ParamValidator().validate({"modelId": model_id, **body}, shape)
    assert not report.has_errors(), report.generate_report()


START = bedrock_event("messageStart", {"role": "assistant"})


def text_events(text: str, index: int = 0) -> list[bytes]:
    return [
        bedrock_event("contentBlockDelta", {"contentBlockIndex": index, "delta": {"text": text}}),
        bedrock_event("contentBlockStop", {"contentBlockIndex": index}),
    ]


def stop(reason: str = "end_turn", usage: dict[str, int] | None = None) -> list[bytes]:
    usage = usage or {"inputTokens": 5, "outputTokens": 2, "totalTokens": 7}
    return [
        bedrock_event("messageStop", {"stopReason": reason}),
        bedrock_event("metadata", {"usage": usage, "metrics": {"latencyMs": 1}}),
    ]


@pytest.fixture(autouse=True)
def aws_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    for name in (
        "AWS_PROFILE",
        "AWS_REGION",
        "AWS_DEFAULT_REGION",
        "AWS_BEDROCK_SKIP_AUTH",
        "AWS_BEARER_TOKEN_BEDROCK",
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
    ):
        monkeypatch.delenv(name, raising=False)
    # No profile files and no instance-metadata lookups: the chain sees only what a test sets.
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setattr(bedrock_auth, "_sessions", {})


async def run(
    body: list[Any],
    *,
    status: int = 200,
    m: Model | None = None,
    simple: bool = False,
    context: Context | None = None,
    **options: Any,
) -> tuple[list[Any], AssistantMessage, Any]:
    headers = (
        EVENT_STREAM
        if status == 200
        else {
            "content-type": "application/json",
            "x-amzn-errortype": "ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/",
        }
    )
    async with LocalServer([Reply(status, headers, body)]) as server:
        target = m or model(base_url=server.url)
        if m is not None:
            target.base_url = server.url
        options.setdefault("api_key", "bearer-key")
        options.setdefault("max_retries", 0)
        call = stream_simple if simple else stream
        s = call(target, context or Context([UserMessage("hi")]), **options)
        events = [e async for e in s]
        check_grammar(events, await s.result())
        if server.requests and server.requests[0].body and not options.get("on_payload"):
            validate(json.loads(server.requests[0].body), target.id)
        return events, await s.result(), server.requests[0] if server.requests else None


# --------------------------------------------------------------------------- request body


def history(m: Model) -> Context:
    same = dict(api=m.api, provider=m.provider, model=m.id)
    return Context(
        [
            UserMessage([TextContent("look"), IMG]),
            AssistantMessage(
                [
                    ThinkingContent("signed", "sig=="),
                    ThinkingContent("unsigned"),
                    ThinkingContent("", "cmVkYWN0ZWQ=", redacted=True),
                    TextContent("answer"),
                    TextContent("  "),
                    ToolCall("call-1", "get", {"q": 1}),
                    ToolCall("call-2", "get", {"q": 2}),
                ],
                **same,
            ),
            ToolResultMessage("call-1", "get", [TextContent("r1"), IMG]),
            ToolResultMessage("call-2", "get", [], is_error=True),
            UserMessage("thanks"),
        ],
        system_prompt="Be brief.",
        tools=[Tool("get", "Get it", {"type": "object", "properties": {"q": {"type": "integer"}}})],
    )


def test_claude_body_blocks_merging_and_cache_points() -> None:
    m = model()
    body = bedrock.request_body(m, history(m), {"max_tokens": 100, "temperature": 0.3})
    validate(body)
    assert body["system"] == [{"text": "Be brief."}, {"cachePoint": {"type": "default"}}]
    # Converse wants roles to alternate: the closing user text joins the tool results.
    user, assistant, results = body["messages"]
    assert user["content"] == [
        {"text": "look"},
        {"image": {"format": "png", "source": {"bytes": "aGVsbG8="}}},
    ]
    assert assistant["content"] == [
        {"reasoningContent": {"reasoningText": {"text": "signed", "signature": "sig=="}}},
        {"reasoningContent": {"redactedContent": "cmVkYWN0ZWQ="}},
        {"text": "answer"},
        {"toolUse": {"toolUseId": "call-1", "name": "get", "input": {"q": 1}}},
        {"toolUse": {"toolUseId": "call-2", "name": "get", "input": {"q": 2}}},
    ]
    assert results == {
        "role": "user",
        "content": [
            {
                "toolResult": {
                    "toolUseId": "call-1",
                    "content": [
                        {"text": "r1"},
                        {"image": {"format": "png", "source": {"bytes": "aGVsbG8="}}},
                    ],
                    "status": "success",
                }
            },
            {"toolResult": {"toolUseId": "call-2", "content": [{"text": ""}], "status": "error"}},
            {"text": "thanks"},
            {"cachePoint": {"type": "default"}},
        ],
    }
    assert body["inferenceConfig"] == {"maxTokens": 100, "temperature": 0.3}
    assert body["toolConfig"]["toolChoice"] == {"auto": {}}
    assert body["toolConfig"]["tools"][0]["toolSpec"]["inputSchema"] == {
        "json": {"type": "object", "properties": {"q": {"type": "integer"}}}
    }


def test_roles_alternate_when_an_aborted_turn_is_left_out() -> None:
    m = model()
    same = dict(api=m.api, provider=m.provider, model=m.id)
    context = Context(
        [
            UserMessage("one"),
            AssistantMessage([ToolCall("call-1", "get", {})], **same, stop_reason="toolUse"),
            ToolResultMessage("call-1", "get", [TextContent("r1")]),
            AssistantMessage([TextContent("half")], **same, stop_reason="aborted"),
            UserMessage("two"),
            AssistantMessage([TextContent("ok")], **same),
            AssistantMessage([TextContent("and more")], **same),
            UserMessage("three"),
        ]
    )
    body = bedrock.request_body(m, context, {"cache_retention": "none"})
    validate(body)
    assert [(msg["role"], msg["content"]) for msg in body["messages"]] == [
        ("user", [{"text": "one"}]),
        ("assistant", [{"toolUse": {"toolUseId": "call-1", "name": "get", "input": {}}}]),
        (
            "user",
            [
                {
                    "toolResult": {
                        "toolUseId": "call-1",
                        "content": [{"text": "r1"}],
                        "status": "success",
                    }
                },
                {"text": "two"},
            ],
        ),
        ("assistant", [{"text": "ok"}, {"text": "and more"}]),
        ("user", [{"text": "three"}]),
    ]


def test_handoff_from_another_provider() -> None:
    m = model()
    foreign = AssistantMessage(
        [
            ThinkingContent("other thinks", "sig"),
            TextContent("calling"),
            ToolCall("call|a+/=", "get", {}),
        ],
        api="openai-responses",
        provider="openai",
        model="gpt-5",
        stop_reason="toolUse",
    )
    history = [UserMessage("q"), foreign, ToolResultMessage("call|a+/=", "get", [TextContent("r")])]
    body = bedrock.request_body(m, Context(history), {"cache_retention": "none"})
    validate(body)
    assert body["messages"][1]["content"] == [
        {"text": "calling"},
        {"toolUse": {"toolUseId": "call_a___", "name": "get", "input": {}}},
    ]
    assert body["messages"][2]["content"][0]["toolResult"]["toolUseId"] == "call_a___"


def test_non_claude_models_get_no_signature_and_no_cache_points() -> None:
    m = model("amazon.nova-pro-v1:0")
    body = bedrock.request_body(m, history(m), {"cache_retention": "long"})
    validate(body, m.id)
    assert "cachePoint" not in json.dumps(body)
    assert body["messages"][1]["content"][0] == {
        "reasoningContent": {"reasoningText": {"text": "signed"}}
    }


def test_long_retention_and_none() -> None:
    m = model()
    long = bedrock.request_body(m, history(m), {"cache_retention": "long"})
    assert long["system"][1] == {"cachePoint": {"type": "default", "ttl": "1h"}}
    validate(long)
    assert "cachePoint" not in json.dumps(
        bedrock.request_body(m, history(m), {"cache_retention": "none"})
    )


@pytest.mark.parametrize(
    ("choice", "expected"),
    [
        ("any", {"any": {}}),
        ("get", {"tool": {"name": "get"}}),
        ({"type": "tool", "name": "get"}, {"tool": {"name": "get"}}),
    ],
)
def test_tool_choice(choice: Any, expected: dict[str, Any]) -> None:
    m = model()
    body = bedrock.request_body(m, history(m), {"tool_choice": choice})
    assert body["toolConfig"]["toolChoice"] == expected
    validate(body)
    assert "toolConfig" not in bedrock.request_body(m, history(m), {"tool_choice": "none"})


def test_reasoning_fields_budget_adaptive_and_non_claude() -> None:
    m = model()
    body = bedrock.request_body(m, history(m), {"reasoning": "medium", "temperature": 1.0})
    assert body["additionalModelRequestFields"] == {
        "thinking": {"type": "enabled", "budget_tokens": 8192},
        "anthropic_beta": ["interleaved-thinking-2025-05-14"],
    }
    assert "temperature" not in body.get("inferenceConfig", {})
    validate(body)
    opus = model("global.anthropic.claude-opus-4-6-v1")
    assert bedrock.request_body(opus, history(opus), {"reasoning": "xhigh"})["additionalModelRequestFields"] == {
        "thinking": {"type": "adaptive"}, "output_config": {"effort": "max"}
    }  # fmt: skip
    nova = model("amazon.nova-pro-v1:0")
    assert "additionalModelRequestFields" not in bedrock.request_body(
        nova, history(nova), {"reasoning": "high"}
    )
    no_interleave = bedrock.request_body(
        m, history(m), {"reasoning": "low", "interleaved_thinking": False}
    )
    assert "anthropic_beta" not in no_interleave["additionalModelRequestFields"]


def test_unknown_image_type_is_an_error() -> None:
    m = model()
    with pytest.raises(Exception, match="Unknown image type"):
        bedrock.request_body(m, Context([UserMessage([ImageContent("x", "image/bmp")])]), {})


def test_endpoint_and_region(monkeypatch: pytest.MonkeyPatch) -> None:
    m = model()
    assert (
        bedrock.endpoint_url(m, "eu-west-1")
        == f"https://bedrock-runtime.eu-west-1.amazonaws.com/model/{CLAUDE.replace(':', '%3A')}/converse-stream"
    )
    assert bedrock_auth.resolve_region({}) == "us-east-1"
    monkeypatch.setenv("AWS_DEFAULT_REGION", "ap-south-1")
    assert bedrock_auth.resolve_region({}) == "ap-south-1"
    monkeypatch.setenv("AWS_REGION", "eu-central-1")
    assert bedrock_auth.resolve_region({}) == "eu-central-1"
    assert bedrock_auth.resolve_region({"region": "us-west-2"}) == "us-west-2"


def test_region_from_profile(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    (tmp_path / "config").write_text("[profile work]\nregion = eu-north-1\n")
    assert bedrock_auth.resolve_region({"profile": "work"}) == "eu-north-1"


async def test_stream_simple_adjusts_max_tokens_for_the_budget() -> None:
    _, _, request = await run(
        [START, *text_events("x"), *stop()], simple=True, reasoning="high", max_tokens=4096
    )
    body = json.loads(request.body)
    assert body["inferenceConfig"]["maxTokens"] == 4096 + 16384
    assert body["additionalModelRequestFields"]["thinking"]["budget_tokens"] == 16384


# --------------------------------------------------------------------------- auth


async def test_sigv4_signing_from_the_credential_chain(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret")
    monkeypatch.setenv("AWS_SESSION_TOKEN", "session")
    _, msg, request = await run(
        [START, *text_events("hi"), *stop()], api_key="<authenticated>", region="eu-west-3"
    )
    assert msg.stop_reason == "stop", msg.error_message
    auth = request.headers["authorization"]
    assert auth.startswith("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/")
    assert "/eu-west-3/bedrock/aws4_request" in auth
    assert "SignedHeaders=" in auth and "Signature=" in auth
    assert request.headers["x-amz-security-token"] == "session"
    assert "x-amz-date" in request.headers

    # The signature is the one botocore computes for the same request.
    import datetime

    import botocore.auth
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    url = f"http://{request.headers['host']}{request.path}"
    check = AWSRequest(
        method="POST", url=url, data=request.body, headers={"Content-Type": "application/json"}
    )
    signed_at = datetime.datetime.strptime(request.headers["x-amz-date"], "%Y%m%dT%H%M%SZ")
    monkeypatch.setattr(botocore.auth, "get_current_datetime", lambda: signed_at)
    SigV4Auth(Credentials("AKIDEXAMPLE", "secret", "session"), "bedrock", "eu-west-3").add_auth(
        check
    )
    assert check.headers["Authorization"] == auth


async def test_bearer_token_from_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_BEARER_TOKEN_BEDROCK", "env-token")
    _, _, request = await run([START, *text_events("hi"), *stop()], api_key="<authenticated>")
    assert request.headers["authorization"] == "Bearer env-token"


async def test_no_credentials_is_a_clear_error() -> None:
    _, msg, request = await run([], api_key=None)
    assert request is None
    assert msg.stop_reason == "error"
    assert "No AWS credentials" in (msg.error_message or "") and "AWS_BEARER_TOKEN_BEDROCK" in (
        msg.error_message or ""
    )


async def test_skip_auth(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_BEDROCK_SKIP_AUTH", "1")
    _, msg, request = await run([START, *text_events("hi"), *stop()], api_key=None)
    assert msg.text == "hi" and "authorization" not in request.headers


# --------------------------------------------------------------------------- stream


async def test_text_reasoning_tool_use_and_usage() -> None:
    body = [
        START,
        bedrock_event(
            "contentBlockDelta",
            {"contentBlockIndex": 0, "delta": {"reasoningContent": {"text": "think"}}},
        ),
        bedrock_event(
            "contentBlockDelta",
            {"contentBlockIndex": 0, "delta": {"reasoningContent": {"signature": "c2ln"}}},
        ),
        bedrock_event("contentBlockStop", {"contentBlockIndex": 0}),
        *text_events("Hello", 1)[:1],
        bedrock_event("contentBlockDelta", {"contentBlockIndex": 1, "delta": {"text": ""}}),
        bedrock_event("contentBlockStop", {"contentBlockIndex": 1}),
        bedrock_event(
            "contentBlockStart",
            {"contentBlockIndex": 2, "start": {"toolUse": {"toolUseId": "t1", "name": "get"}}},
        ),
        bedrock_event(
            "contentBlockDelta", {"contentBlockIndex": 2, "delta": {"toolUse": {"input": '{"q":'}}}
        ),
        bedrock_event(
            "contentBlockDelta", {"contentBlockIndex": 2, "delta": {"toolUse": {"input": " 1}"}}}
        ),
        bedrock_event("contentBlockStop", {"contentBlockIndex": 2}),
        *stop(
            "tool_use",
            {
                "inputTokens": 10,
                "outputTokens": 5,
                "cacheReadInputTokens": 100,
                "cacheWriteInputTokens": 20,
                "totalTokens": 135,
            },
        ),
    ]
    events, msg, _ = await run(body)
    assert [e.type for e in events] == [
        "start", "thinking_start", "thinking_delta", "thinking_end", "text_start", "text_delta", "text_end",
        "toolcall_start", "toolcall_delta", "toolcall_delta", "toolcall_end", "done",
    ]  # fmt: skip
    assert msg.content == [
        ThinkingContent("think", "c2ln"),
        TextContent("Hello"),
        ToolCall("t1", "get", {"q": 1}),
    ]
    assert msg.stop_reason == "toolUse"
    u = msg.usage
    assert (u.input, u.output, u.cache_read, u.cache_write, u.total_tokens) == (10, 5, 100, 20, 135)


@pytest.mark.parametrize(
    ("reason", "expected"),
    [
        ("max_tokens", "length"),
        ("model_context_window_exceeded", "length"),
        ("stop_sequence", "stop"),
    ],
)
async def test_stop_reasons(reason: str, expected: str) -> None:
    _, msg, _ = await run([START, *text_events("x"), *stop(reason)])
    assert msg.stop_reason == expected


async def test_guardrail_stop_is_an_error() -> None:
    events, msg, _ = await run([START, *text_events("x"), *stop("guardrail_intervened")])
    assert events[-1].type == "error"
    assert msg.error_message == "Bedrock stopped with guardrail_intervened"


@pytest.mark.parametrize(
    ("name", "prefix"),
    [
        ("throttlingException", "Throttling error"),
        ("modelStreamErrorException", "Model stream error"),
        ("validationException", "Validation error"),
        ("internalServerException", "Internal server error"),
        ("serviceUnavailableException", "Service unavailable"),
    ],
)
async def test_exception_events(name: str, prefix: str) -> None:
    events, msg, _ = await run(
        [START, *text_events("partial"), bedrock_exception(name, "slow down")]
    )
    assert events[-1].type == "error"
    assert msg.error_message == f"{prefix}: slow down"
    assert msg.text == "partial"


async def test_broken_crc_is_a_clear_error() -> None:
    good = bedrock_event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "Hello"}})
    broken = bytearray(
        bedrock_event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": " world"}})
    )
    broken[-8] ^= 0xFF  # a payload byte: the message CRC no longer matches
    events, msg, _ = await run([START, good, bytes(broken), *stop()])
    assert events[-1].type == "error"
    assert msg.error_message is not None and msg.error_message.startswith(
        "Bedrock event stream is corrupt:"
    )
    assert "checksum" in msg.error_message.lower() or "crc" in msg.error_message.lower()
    assert msg.text == "Hello"


async def test_broken_prelude_crc() -> None:
    broken = bytearray(bedrock_event("messageStop", {"stopReason": "end_turn"}))
    broken[9] ^= 0x01
    _, msg, _ = await run([START, bytes(broken)])
    assert (msg.error_message or "").startswith("Bedrock event stream is corrupt:")


async def test_truncated_mid_frame() -> None:
    last = bedrock_event(
        "metadata", {"usage": {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2}}
    )
    body = [
        START,
        *text_events("Hi"),
        bedrock_event("messageStop", {"stopReason": "end_turn"}),
        last[:20],
    ]
    _, msg, _ = await run(body)
    assert msg.stop_reason == "error"
    assert "middle of a frame" in (msg.error_message or "")


async def test_ended_before_message_stop() -> None:
    _, msg, _ = await run([START, *text_events("Hi")])
    assert msg.stop_reason == "error" and "before messageStop" in (msg.error_message or "")
    assert msg.text == "Hi"


async def test_connection_dropped() -> None:
    _, msg, _ = await run([START, *text_events("Hi"), CLOSE])
    assert msg.stop_reason == "error" and msg.text == "Hi"


async def test_malformed_event_json() -> None:
    headers = {
        ":event-type": "contentBlockDelta",
        ":content-type": "application/json",
        ":message-type": "event",
    }
    _, msg, _ = await run(
        [START, event_stream_frame(headers, b'{"contentBlockIndex": 0, "delta": ')]
    )
    assert msg.stop_reason == "error" and "malformed JSON" in (msg.error_message or "")


async def test_http_error_gives_the_provider_message() -> None:
    events, msg, _ = await run(
        [b'{"message": "The provided model identifier is invalid."}'], status=400
    )
    assert [e.type for e in events] == ["start", "error"]
    assert msg.error_message == "400 The provided model identifier is invalid."


async def test_server_tool_use_is_not_a_client_tool_call() -> None:
    body = [
        START,
        bedrock_event(
            "contentBlockStart",
            {
                "contentBlockIndex": 0,
                "start": {
                    "toolUse": {
                        "toolUseId": "s1",
                        "name": "nova_code_interpreter",
                        "type": "server_tool_use",
                    }
                },
            },
        ),
        bedrock_event(
            "contentBlockDelta", {"contentBlockIndex": 0, "delta": {"toolUse": {"input": "{}"}}}
        ),
        bedrock_event("contentBlockStop", {"contentBlockIndex": 0}),
        *text_events("42", 1),
        *stop(),
    ]
    _, msg, _ = await run(body)
    assert msg.content == [TextContent("42")] and msg.stop_reason == "stop"


async def test_wrong_role_is_an_error() -> None:
    _, msg, _ = await run([bedrock_event("messageStart", {"role": "user"})])
    assert msg.stop_reason == "error" and "role" in (msg.error_message or "")


def test_catalog_models() -> None:
    from tau.ai.lookup.catalog import get_model

    sonnet = get_model("amazon-bedrock", "us.anthropic.claude-sonnet-4-5-20250929-v1:0")
    assert bedrock.is_claude(sonnet) and bedrock.supports_cache_points(sonnet)
    assert not bedrock.is_adaptive_claude(sonnet)
    assert bedrock.endpoint_url(sonnet, "eu-west-1").startswith(
        "https://bedrock-runtime.eu-west-1.amazonaws.com/model/us.anthropic.claude-sonnet-4-5"
    )
    assert bedrock.is_adaptive_claude(
        get_model("amazon-bedrock", "global.anthropic.claude-opus-4-6-v1")
    )
    nova = get_model("amazon-bedrock", "amazon.nova-pro-v1:0")
    assert not bedrock.is_claude(nova) and not bedrock.supports_cache_points(nova)


async def test_missing_botocore_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from tau.ai.lookup import registry

    monkeypatch.setattr(registry, "_registry", {})
    for name in [n for n in sys.modules if n == "botocore" or n.startswith("botocore.")]:
        monkeypatch.delitem(sys.modules, name)
    for name in [n for n in sys.modules if n.startswith("tau.ai.providers.bedrock")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "botocore", None)
    msg = await stream(model(), Context([UserMessage("hi")])).result()
    assert msg.stop_reason == "error"
    assert "pip install 'tau[bedrock]'" in (msg.error_message or "")


def test_botocore_and_google_auth_are_not_imported_by_tau_ai() -> None:
    import subprocess
    import sys

    probe = (
        "import sys, tau.ai, tau.ai.providers.google.gemini, tau.ai.providers.google.vertex; "
        "print([m for m in ('botocore', 'google.auth', 'httpx2') if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


async def test_abort_mid_stream_keeps_the_partial_message() -> None:
    from tests.ai.servers import STALL

    body = [
        START,
        bedrock_event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "Hel"}}),
        STALL,
    ]
    async with LocalServer([Reply(200, EVENT_STREAM, body)]) as server:
        events, msg = await stream_aborting_at(
            model(base_url=server.url), "text_delta", api_key="k"
        )
    check_grammar(events, msg)
    assert events[-1].type == "error" and msg.stop_reason == "aborted"
    assert msg.text == "Hel"
