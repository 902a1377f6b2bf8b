"""``bedrock-converse-stream``: Amazon Bedrock's ConverseStream API.

The request is plain JSON posted over the shared HTTP client and signed with SigV4 (or sent
with a Bedrock API key as a bearer token); the response is the binary
``application/vnd.amazon.eventstream`` framing, decoded with botocore's frame parser (which
checks both CRCs). botocore is the ``[bedrock]`` extra: this module is imported only when a
Bedrock model is used.

Choices that differ from pi-ai, in one place:

* Redacted reasoning (``redactedContent``) is kept as a redacted thinking block and replayed
  to the same model; pi-ai drops it.
* Unsigned Claude thinking (a stream cut before its signature) and other models' thinking
  are left out of requests rather than sent as text.
* Server-side tool use (Nova's code interpreter…) is not a tau tool call: the client cannot
  run it, so it is skipped, and only the model's own text and calls remain.
* Temperature is left out when Claude's extended thinking is on (Anthropic rejects the pair).
* ``model.base_url`` is used as the endpoint when it is not an ``amazonaws.com`` URL (a proxy
  or a local test server); otherwise the endpoint follows the region.
* Credentials: ``AWS_BEARER_TOKEN_BEDROCK`` (or an ``api_key`` option other than the
  ``<authenticated>`` marker) is sent as a bearer token; otherwise botocore's standard chain
  (environment, profile files, SSO, container and instance roles) signs the request.
  ``AWS_BEDROCK_SKIP_AUTH=1`` sends it unsigned.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Mapping, Sequence
from typing import Any, cast
from urllib.parse import quote

import jiter
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.eventstream import EventStreamBuffer, EventStreamMessage, ParserError
from botocore.session import Session

from tau.ai.adapter import apply_on_payload
from tau.ai.builder import MessageBuilder, launch_stream
from tau.ai.env_keys import AUTHENTICATED
from tau.ai.errors import ProviderError
from tau.ai.event_stream import AssistantMessageEventStream
from tau.ai.headers import request_headers
from tau.ai.providers.simple_options import (
    adjust_max_tokens_for_thinking,
    base_options,
    clamp_reasoning,
)
from tau.ai.types import (
    AssistantMessage,
    CacheRetention,
    Context,
    ImageContent,
    Message,
    Model,
    StopReason,
    TextContent,
    ThinkingContent,
    ThinkingLevel,
    Tool,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from tau.ai.utils.sanitize import sanitize_surrogates
from tau.ai.utils.transform_messages import normalize_id_anthropic, transform_messages

_EVENT_STREAM = ("application/vnd.amazon.eventstream",)
_DEFAULT_HEADERS = {"accept": _EVENT_STREAM[0], "content-type": "application/json"}
_IMAGE_FORMATS = {
    "image/jpeg": "jpeg",
    "image/jpg": "jpeg",
    "image/png": "png",
    "image/gif": "gif",
    "image/webp": "webp",
}
_DEFAULT_BUDGETS: dict[str, int] = {
    "minimal": 1024,
    "low": 2048,
    "medium": 8192,
    "high": 16384,
}
_EFFORT = {"minimal": "low", "low": "low", "medium": "medium", "high": "high"}
_INTERLEAVED_BETA = "interleaved-thinking-2025-05-14"


# --------------------------------------------------------------------------- model families


def is_claude(model: Model) -> bool:
    """Anthropic models on Bedrock: they take signatures and ``anthropic_beta``."""
    return "anthropic.claude" in model.id or "anthropic/claude" in model.id


def is_adaptive_claude(model: Model) -> bool:
    """Claude 4.6 models reason adaptively (an effort, not a budget)."""
    return is_claude(model) and any(
        tag in model.id for tag in ("opus-4-6", "opus-4.6", "sonnet-4-6", "sonnet-4.6")
    )


def supports_cache_points(model: Model) -> bool:
    """Whether the model accepts ``cachePoint`` blocks (other models reject them)."""
    model_id = model.id
    return "claude" in model_id and any(
        tag in model_id for tag in ("-4-", "-4.", "claude-3-7-sonnet", "claude-3-5-haiku")
    )


# --------------------------------------------------------------------------- messages


def _image_block(image: ImageContent) -> dict[str, Any]:
    fmt = _IMAGE_FORMATS.get(image.mime_type.lower())
    if fmt is None:
        raise ProviderError(f"Unknown image type for Bedrock: {image.mime_type}")
    # The JSON protocol carries blobs as base64, which is what the image already is.
    return {"image": {"format": fmt, "source": {"bytes": image.data}}}


def _user_blocks(message: UserMessage) -> list[dict[str, Any]]:
    if isinstance(message.content, str):
        return [{"text": sanitize_surrogates(message.content)}] if message.content else []
    blocks: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, TextContent):
            if block.text:
                blocks.append({"text": sanitize_surrogates(block.text)})
        else:
            blocks.append(_image_block(block))
    return blocks


def _assistant_blocks(message: AssistantMessage, model: Model) -> list[dict[str, Any]]:
    # After the handoff transform, thinking left here is this model's own and signed.
    claude = is_claude(model)
    blocks: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, TextContent):
            if block.text.strip():
                blocks.append({"text": sanitize_surrogates(block.text)})
        elif isinstance(block, ThinkingContent):
            if block.redacted:
                blocks.append({"reasoningContent": {"redactedContent": block.thinking_signature}})
                continue
            reasoning: dict[str, Any] = {"text": sanitize_surrogates(block.thinking)}
            if claude:
                # Other models reject the signature field.
                reasoning["signature"] = block.thinking_signature
            blocks.append({"reasoningContent": {"reasoningText": reasoning}})
        else:
            blocks.append(
                {"toolUse": {"toolUseId": block.id, "name": block.name, "input": block.arguments}}
            )
    return blocks


def _tool_result_block(message: ToolResultMessage) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, TextContent):
            content.append({"text": sanitize_surrogates(block.text)})
        else:
            content.append(_image_block(block))
    if not content:
        content.append({"text": ""})
    return {
        "toolResult": {
            "toolUseId": message.tool_call_id,
            "content": content,
            "status": "error" if message.is_error else "success",
        }
    }


def convert_messages(messages: Sequence[Message], model: Model) -> list[dict[str, Any]]:
    """Converse ``messages`` for messages already passed through the handoff transform.

    Converse rejects two messages of the same role in a row ("A conversation must alternate
    between user and assistant roles"), so consecutive tool results, and a user message that
    follows them (as when the turn between was aborted and left out), share one user message.
    """
    out: list[dict[str, Any]] = []
    for message in messages:
        if isinstance(message, ToolResultMessage):
            blocks, role = [_tool_result_block(message)], "user"
        elif isinstance(message, UserMessage):
            blocks, role = _user_blocks(message), "user"
        else:
            blocks, role = _assistant_blocks(message, model), "assistant"
        if not blocks:
            continue
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})
    return out


# --------------------------------------------------------------------------- request body


def _cache_point(retention: CacheRetention) -> dict[str, Any]:
    point: dict[str, Any] = {"type": "default"}
    if retention == "long":
        point["ttl"] = "1h"
    return {"cachePoint": point}


def _tool_config(tools: Sequence[Tool] | None, tool_choice: Any) -> dict[str, Any] | None:
    if not tools or tool_choice == "none":
        return None
    config: dict[str, Any] = {
        "tools": [
            {
                "toolSpec": {
                    "name": tool.name,
                    "description": tool.description,
                    "inputSchema": {"json": tool.json_schema},
                }
            }
            for tool in tools
        ]
    }
    if tool_choice in (None, "auto"):
        config["toolChoice"] = {"auto": {}}
    elif tool_choice in ("any", "required"):
        config["toolChoice"] = {"any": {}}
    elif isinstance(tool_choice, Mapping) and tool_choice.get("type") == "tool":
        config["toolChoice"] = {"tool": {"name": tool_choice["name"]}}
    elif isinstance(tool_choice, str):
        config["toolChoice"] = {"tool": {"name": tool_choice}}
    else:
        raise ProviderError(f"Unsupported tool_choice for Bedrock: {tool_choice!r}")
    return config


def _reasoning_fields(model: Model, options: Mapping[str, Any]) -> dict[str, Any] | None:
    level: ThinkingLevel | None = options.get("reasoning")
    if not level or not model.reasoning or not is_claude(model):
        return None
    if is_adaptive_claude(model):
        effort = "max" if level == "xhigh" and "opus" in model.id else _EFFORT.get(level, "high")
        return {"thinking": {"type": "adaptive"}, "output_config": {"effort": effort}}
    clamped = "high" if level == "xhigh" else level
    budgets = cast(dict[str, int], options.get("thinking_budgets") or {})
    budget = budgets.get(clamped) or _DEFAULT_BUDGETS[clamped]
    fields: dict[str, Any] = {"thinking": {"type": "enabled", "budget_tokens": budget}}
    if options.get("interleaved_thinking", True):
        fields["anthropic_beta"] = [_INTERLEAVED_BETA]
    return fields


def build_body(
    model: Model,
    system_prompt: str | None,
    tools: Sequence[Tool] | None,
    messages: list[dict[str, Any]],
    options: Mapping[str, Any],
) -> dict[str, Any]:
    """The JSON body of ConverseStream (``modelId`` goes in the URL)."""
    retention: CacheRetention = options.get("cache_retention") or "short"
    caching = retention != "none" and supports_cache_points(model)
    body: dict[str, Any] = {"messages": messages}
    if system_prompt:
        system: list[dict[str, Any]] = [{"text": sanitize_surrogates(system_prompt)}]
        if caching:
            system.append(_cache_point(retention))
        body["system"] = system
    if caching and messages and messages[-1]["role"] == "user":
        messages[-1]["content"].append(_cache_point(retention))
    reasoning = _reasoning_fields(model, options)
    inference: dict[str, Any] = {}
    if options.get("max_tokens"):
        inference["maxTokens"] = options["max_tokens"]
    if options.get("temperature") is not None and reasoning is None:
        inference["temperature"] = options["temperature"]
    if inference:
        body["inferenceConfig"] = inference
    tool_config = _tool_config(tools, options.get("tool_choice"))
    if tool_config is not None:
        body["toolConfig"] = tool_config
    if reasoning is not None:
        body["additionalModelRequestFields"] = reasoning
    return body


# --------------------------------------------------------------------------- endpoint and auth


def resolve_region(options: Mapping[str, Any]) -> str:
    """The ``region`` option, else ``AWS_REGION``/``AWS_DEFAULT_REGION``, else the profile's
    configured region, else ``us-east-1``."""
    region = options.get("region") or os.environ.get("AWS_REGION")
    region = region or os.environ.get("AWS_DEFAULT_REGION")
    if region:
        return str(region)
    profile = options.get("profile") or os.environ.get("AWS_PROFILE")
    if profile:
        configured = _session(profile).get_config_variable("region")
        if configured:
            return str(configured)
    return "us-east-1"


def endpoint_url(model: Model, region: str) -> str:
    """The ConverseStream URL for ``model`` in ``region`` (or at a custom base URL)."""
    model_path = quote(model.id, safe="")
    base = model.base_url.rstrip("/")
    if not base or "amazonaws.com" in base:
        base = f"https://bedrock-runtime.{region}.amazonaws.com"
    return f"{base}/model/{model_path}/converse-stream"


def bearer_token(options: Mapping[str, Any]) -> str | None:
    """A Bedrock API key: the ``api_key`` option (unless the marker), else the env var."""
    key = options.get("api_key")
    if key and key != AUTHENTICATED:
        return str(key)
    return os.environ.get("AWS_BEARER_TOKEN_BEDROCK") or None


_sessions: dict[str | None, Session] = {}


def _session(profile: str | None) -> Session:
    # One botocore session per profile: its config is read once, and refreshable
    # credentials are cached and reused across calls.
    session = _sessions.get(profile)
    if session is None:
        session = _sessions[profile] = Session(profile=profile)
    return session


def _frozen_credentials(profile: str | None) -> Any:
    credentials = _session(profile).get_credentials()
    if credentials is None:
        where = f"profile {profile!r}" if profile else "the standard AWS credential chain"
        raise ProviderError(
            f"No AWS credentials found in {where}: set AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, "
            "AWS_PROFILE, or AWS_BEARER_TOKEN_BEDROCK"
        )
    return credentials.get_frozen_credentials()


async def auth_headers(
    url: str, body: bytes, region: str, options: Mapping[str, Any]
) -> dict[str, str]:
    """The headers that authenticate one request: bearer token or SigV4 signature."""
    token = bearer_token(options)
    if token:
        return {"Authorization": f"Bearer {token}"}
    if os.environ.get("AWS_BEDROCK_SKIP_AUTH") == "1":
        return {}
    profile = options.get("profile")
    # The chain may read files or ask an instance-metadata endpoint: keep it off the loop.
    credentials = await asyncio.to_thread(_frozen_credentials, profile)
    request = AWSRequest(
        method="POST", url=url, data=body, headers={"Content-Type": "application/json"}
    )
    SigV4Auth(credentials, "bedrock", region).add_auth(request)
    return {k: v for k, v in request.headers.items() if k.lower() != "content-type"}


# --------------------------------------------------------------------------- response

_STOP_REASONS: dict[str, StopReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "tool_use": "toolUse",
}

_EXCEPTION_PREFIXES = {
    "internalServerException": "Internal server error",
    "modelStreamErrorException": "Model stream error",
    "validationException": "Validation error",
    "throttlingException": "Throttling error",
    "serviceUnavailableException": "Service unavailable",
}


def map_stop_reason(reason: str) -> StopReason:
    """Bedrock's stop reason; guardrail and content-filter stops are errors."""
    return _STOP_REASONS.get(reason, "error")


class BedrockStreamMapper:
    """Decodes event-stream frames and turns the events into builder calls."""

    __slots__ = ("_blocks", "_buffer", "_builder", "_skipped", "_stopped")

    def __init__(self, builder: MessageBuilder) -> None:
        self._builder = builder
        self._buffer = EventStreamBuffer()
        self._blocks: dict[int, int] = {}  # Bedrock contentBlockIndex -> tau content index
        self._skipped: set[int] = set()  # server-side tool blocks
        self._stopped = False

    def feed_bytes(self, data: bytes) -> None:
        """Decode the complete frames in ``data`` (plus what earlier calls left over)."""
        buffer = self._buffer
        buffer.add_data(data)
        try:
            for frame in buffer:
                self._frame(frame)
        except ParserError as exc:
            raise ProviderError(f"Bedrock event stream is corrupt: {exc}") from None

    def _frame(self, frame: EventStreamMessage) -> None:
        headers = frame.headers
        kind = headers.get(":message-type")
        if kind == "event":
            try:
                payload = jiter.from_json(frame.payload) if frame.payload else {}
            except ValueError:
                raise ProviderError(
                    f"Bedrock sent malformed JSON in a {headers.get(':event-type')} event: "
                    f"{frame.payload[:200]!r}"
                ) from None
            self.event(headers.get(":event-type", ""), payload)
        elif kind == "exception":
            name = headers.get(":exception-type", "")
            try:
                message = json.loads(frame.payload).get("message") or ""
            except ValueError:
                message = frame.payload.decode("utf-8", "replace")
            prefix = _EXCEPTION_PREFIXES.get(name, name or "Bedrock error")
            raise ProviderError(f"{prefix}: {message}")
        else:
            code = headers.get(":error-code", "error")
            raise ProviderError(f"Bedrock error {code}: {headers.get(':error-message', '')}")

    def event(self, name: str, data: Mapping[str, Any]) -> None:
        """Apply one decoded ConverseStream event."""
        builder = self._builder
        if name == "contentBlockDelta":
            self._delta(data.get("contentBlockIndex", 0), data.get("delta") or {})
        elif name == "contentBlockStart":
            start = data.get("start") or {}
            index = data.get("contentBlockIndex", 0)
            tool = start.get("toolUse")
            if tool is None:
                return
            if tool.get("type") == "server_tool_use":
                self._skipped.add(index)
                return
            self._blocks[index] = builder.open_tool_call(tool["toolUseId"], tool["name"])
        elif name == "contentBlockStop":
            block = self._blocks.pop(data.get("contentBlockIndex", 0), None)
            if block is not None:
                builder.close_block(block)
        elif name == "messageStart":
            if data.get("role") != "assistant":
                raise ProviderError(f"Bedrock stream started with role {data.get('role')!r}")
            builder.start()
        elif name == "messageStop":
            self._stopped = True
            reason = data.get("stopReason") or ""
            stop = map_stop_reason(reason)
            builder.message.stop_reason = stop
            if stop == "error":
                builder.message.error_message = f"Bedrock stopped with {reason}"
        elif name == "metadata":
            usage = data.get("usage")
            if usage:
                self._usage(builder.message.usage, usage)

    def _delta(self, index: int, delta: Mapping[str, Any]) -> None:
        builder = self._builder
        if index in self._skipped:
            return
        text = delta.get("text")
        if text is not None:
            if not text:
                return
            block = self._blocks.get(index)
            if block is None:
                block = self._blocks[index] = builder.open_text()
            builder.text_delta(block, text)
            return
        tool = delta.get("toolUse")
        if tool is not None:
            block = self._blocks.get(index)
            if block is None:
                raise ProviderError("Bedrock sent tool input for a block that was never started")
            builder.tool_call_delta(block, tool.get("input") or "")
            return
        reasoning = delta.get("reasoningContent")
        if reasoning is None:
            return  # citations, server tool results: nothing tau models
        redacted = reasoning.get("redactedContent")
        block = self._blocks.get(index)
        if block is None:
            block = self._blocks[index] = builder.open_thinking(redacted=redacted is not None)
        thinking = builder.message.content[block]
        assert isinstance(thinking, ThinkingContent)
        if redacted is not None:
            thinking.redacted = True
            thinking.thinking_signature = (thinking.thinking_signature or "") + redacted
        if reasoning.get("signature"):
            thinking.thinking_signature = reasoning["signature"]
        if reasoning.get("text"):
            builder.thinking_delta(block, reasoning["text"])

    @staticmethod
    def _usage(usage: Usage, data: Mapping[str, Any]) -> None:
        usage.input = data.get("inputTokens") or 0
        usage.output = data.get("outputTokens") or 0
        usage.cache_read = data.get("cacheReadInputTokens") or 0
        usage.cache_write = data.get("cacheWriteInputTokens") or 0
        usage.total_tokens = data.get("totalTokens") or (
            usage.input + usage.output + usage.cache_read + usage.cache_write
        )

    def finish(self) -> None:
        """The body ended: a partial frame or a missing ``messageStop`` is a truncation."""
        # botocore keeps undecoded bytes here; anything left is half a frame.
        leftover = len(getattr(self._buffer, "_data", b""))
        if leftover:
            raise ProviderError(
                f"Bedrock event stream ended in the middle of a frame ({leftover} bytes left)"
            )
        if not self._stopped:
            raise ProviderError("Bedrock event stream ended before messageStop (truncated)")
        if any(isinstance(b, ToolCall) for b in self._builder.message.content) and (
            self._builder.message.stop_reason == "stop"
        ):
            self._builder.message.stop_reason = "toolUse"


# --------------------------------------------------------------------------- entry points


def build_request(model: Model, context: Context, options: Mapping[str, Any]) -> dict[str, Any]:
    """The request body for ``context`` (before the ``on_payload`` hook)."""
    # Unsigned thinking (a cut stream) and other models' thinking are left out; tool-use
    # ids from other providers are made valid for Bedrock.
    messages = transform_messages(context.messages, model, normalize_id_anthropic)
    converted = convert_messages(messages, model)
    return build_body(model, context.system_prompt, context.tools, converted, options)


def stream(
    model: Model, context: Context, options: Mapping[str, Any]
) -> AssistantMessageEventStream:
    """Stream one ConverseStream response; options as in ``ProviderStreamOptions``."""

    async def run(builder: MessageBuilder) -> None:
        from tau.ai.http import open_stream

        region = resolve_region(options)
        url = endpoint_url(model, region)
        body = await apply_on_payload(options, build_request(model, context, options), model)
        content = json.dumps(body, separators=(",", ":")).encode()
        auth = await auth_headers(url, content, region, options)
        headers = request_headers(model, options, auth, _DEFAULT_HEADERS)
        mapper = BedrockStreamMapper(builder)
        async with open_stream(
            options, "POST", url, headers=headers, content=content, expect=_EVENT_STREAM
        ) as response:
            async for chunk in response.chunks():
                mapper.feed_bytes(chunk)
        mapper.finish()

    return launch_stream(model, options, run)


def stream_simple(
    model: Model, context: Context, options: Mapping[str, Any]
) -> AssistantMessageEventStream:
    """:func:`stream` with the unified ``reasoning`` level mapped per pi-ai §4.3."""
    out = base_options(model, options)
    for key in ("region", "profile"):
        if key in options:
            out[key] = options[key]
    level: ThinkingLevel | None = options.get("reasoning")
    if level and is_claude(model) and model.reasoning:
        budgets = dict(options.get("thinking_budgets") or {})
        if not is_adaptive_claude(model):
            max_tokens, budget = adjust_max_tokens_for_thinking(
                out["max_tokens"], model.max_tokens, level, options.get("thinking_budgets")
            )
            out["max_tokens"] = max_tokens
            budgets[clamp_reasoning(level) or "high"] = budget
        out["reasoning"] = level
        out["thinking_budgets"] = budgets
    return stream(model, context, out)
