"""The Responses request body, shared by ``openai-responses`` and ``azure-openai-responses``:
a :class:`~tau.ai.core.types.Context` as Responses ``input`` items and ``tools``.

Replay state lives in the content blocks: a reasoning item is stored whole, as JSON, in
``ThinkingContent.thinking_signature``; a message item's id and phase in
``TextContent.text_signature`` as ``{"v":1,"id":…,"phase":…}``; a function call's ids in
``ToolCall.id`` as ``"<call_id>|<item_id>"``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from tau.ai.capabilities.transform_messages import normalize_id_responses, transform_messages
from tau.ai.core.errors import ProviderError
from tau.ai.core.types import (
    AssistantMessage,
    Context,
    ImageContent,
    Model,
    TextContent,
    ThinkingContent,
    Tool,
    ToolResultMessage,
    UserMessage,
)
from tau.ai.providers.openai_responses.options import ResponsesOptions
from tau.ai.providers.output_schema import json_schema_format
from tau.ai.providers.parts import typed_parts
from tau.ai.streaming.adapter import set_given
from tau.ai.streaming.hash import short_hash
from tau.ai.streaming.json_body import tool_arguments_json
from tau.ai.streaming.sanitize import sanitize_surrogates

JsonDict = dict[str, Any]

_MAX_ITEM_ID = 64

# --------------------------------------------------------------------------- text signatures


def encode_text_signature(item_id: str, phase: str | None) -> str:
    """The ``text_signature`` of a message item: V1 JSON with its id and phase."""
    data: JsonDict = {"v": 1, "id": item_id}
    if phase:
        data["phase"] = phase
    return json.dumps(data, separators=(",", ":"))


def decode_text_signature(signature: str | None) -> tuple[str | None, str | None]:
    """``(item_id, phase)`` from a V1 JSON signature or a legacy plain-id signature."""
    if not signature:
        return None, None
    if signature.startswith("{"):
        try:
            data = json.loads(signature)
        except ValueError:
            return None, None
        if isinstance(data, dict) and data.get("v") == 1:
            item_id = data.get("id")
            phase = data.get("phase")
            return (
                item_id if isinstance(item_id, str) and item_id else None,
                phase if isinstance(phase, str) and phase else None,
            )
        return None, None
    return signature, None


# --------------------------------------------------------------------------- request: messages


def convert_messages(
    model: Model, context: Context, *, include_system_prompt: bool = True
) -> list[JsonDict]:
    """The Responses ``input`` items for ``context`` sent to ``model``.

    The history first goes through the handoff transform: another model's thinking is left
    out, and ``call_id|item_id`` ids from other OpenAI models are re-shaped for this endpoint.
    """
    items: list[JsonDict] = []
    if include_system_prompt and context.system_prompt:
        role = "developer" if model.reasoning else "system"
        items.append({"role": role, "content": sanitize_surrogates(context.system_prompt)})
    messages = transform_messages(context.messages, model, normalize_id_responses)
    for msg_index, message in enumerate(messages):
        if isinstance(message, UserMessage):
            item = _user_item(model, message)
            if item is not None:
                items.append(item)
        elif isinstance(message, AssistantMessage):
            items.extend(_assistant_items(model, message, msg_index))
        else:
            items.append(_tool_result_item(model, message))
    return items


def _image_part(image: ImageContent) -> JsonDict:
    return {
        "type": "input_image",
        "detail": "auto",
        "image_url": f"data:{image.mime_type};base64,{image.data}",
    }


def _user_item(model: Model, message: UserMessage) -> JsonDict | None:
    content = message.content
    if isinstance(content, str):
        parts: list[JsonDict] = [{"type": "input_text", "text": sanitize_surrogates(content)}]
    else:
        parts = typed_parts(content, "input_text", _image_part if model.supports_images else None)
        if not parts:
            return None
    return {"role": "user", "content": parts}


def _reasoning_item(signature: str) -> JsonDict:
    try:
        item = json.loads(signature)
    except ValueError as exc:
        raise ProviderError(
            f"Cannot replay a thinking block: its thinking_signature is not a Responses "
            f"reasoning item ({exc})"
        ) from None
    if not isinstance(item, dict) or item.get("type") != "reasoning":
        raise ProviderError(
            "Cannot replay a thinking block: its thinking_signature is not a Responses "
            "reasoning item"
        )
    return item


def _assistant_items(model: Model, message: AssistantMessage, msg_index: int) -> list[JsonDict]:
    # A reasoning item must be sent right before the item that followed it, or OpenAI answers
    # "Item 'rs_…' of type 'reasoning' was provided without its required following item".
    # So a reasoning item waits here until the next item is known. One still waiting when
    # another reasoning item comes lost its follower (a server-side tool call, which tau
    # does not keep), and one still waiting at the end of the message (the turn stopped
    # after reasoning) has none: neither can be sent.
    out: list[JsonDict] = []
    waiting: JsonDict | None = None
    other_model_same_api = (
        message.provider == model.provider
        and message.api == model.api
        and message.model != model.id
    )
    for block in message.content:
        if isinstance(block, ThinkingContent):
            if block.thinking_signature:
                waiting = _reasoning_item(block.thinking_signature)
            continue
        if isinstance(block, TextContent):
            item_id, phase = decode_text_signature(block.text_signature)
            if not block.text and item_id is None:
                continue
            if item_id is None:
                item_id = f"msg_{msg_index}"
            elif len(item_id) > _MAX_ITEM_ID:
                item_id = f"msg_{short_hash(item_id)}"
            item: JsonDict = {
                "type": "message",
                "role": "assistant",
                "content": [
                    {
                        "type": "output_text",
                        "text": sanitize_surrogates(block.text),
                        "annotations": [],
                    }
                ],
                "status": "completed",
                "id": item_id,
            }
            if phase:
                item["phase"] = phase
        else:
            call_id, _, fc_id = block.id.partition("|")
            item = {
                "type": "function_call",
                "call_id": call_id,
                "name": block.name,
                "arguments": tool_arguments_json(block, ensure_ascii=False),
            }
            # An fc_ id from another model of the same API would make OpenAI look for the
            # reasoning item that produced it, which that model's history does not carry.
            if fc_id and not (other_model_same_api and fc_id.startswith("fc_")):
                item["id"] = fc_id
        if waiting is not None:
            out.append(waiting)
            waiting = None
        out.append(item)
    return out


def _tool_result_item(model: Model, message: ToolResultMessage) -> JsonDict:
    text = "\n".join(
        sanitize_surrogates(block.text)
        for block in message.content
        if isinstance(block, TextContent)
    )
    images = [block for block in message.content if isinstance(block, ImageContent)]
    output: str | list[JsonDict]
    if images and model.supports_images:
        parts: list[JsonDict] = [{"type": "input_text", "text": text}] if text else []
        parts.extend(_image_part(image) for image in images)
        output = parts
    else:
        output = text if text or not images else "(see attached image)"
    return {
        "type": "function_call_output",
        "call_id": message.tool_call_id.partition("|")[0],
        "output": output,
    }


# --------------------------------------------------------------------------- request: tools


def convert_tools(tools: Sequence[Tool], *, strict: bool | None = False) -> list[JsonDict]:
    """Responses ``tools`` entries (``strict`` false: tau validates arguments itself)."""
    return [
        {
            "type": "function",
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.json_schema,
            "strict": strict,
        }
        for tool in tools
    ]


def responses_body(
    model: Model,
    context: Context,
    options: ResponsesOptions,
    *,
    model_name: str | None = None,
) -> JsonDict:
    """The request fields both Responses adapters send (``model_name`` overrides ``model.id``).

    ``store`` is always false: tau sends the whole conversation each turn, and nothing of
    the user's should stay on the provider's side by default.
    """
    payload: JsonDict = {
        "model": model_name or model.id,
        "input": convert_messages(model, context),
        "stream": True,
        "store": False,
    }
    session_id = options.get("session_id")
    if session_id and options.get("cache_retention") != "none":
        payload["prompt_cache_key"] = session_id
    if context.tools:
        payload["tools"] = convert_tools(context.tools)
    set_given(
        payload,
        max_output_tokens=options.get("max_tokens") or None,
        temperature=options.get("temperature"),
        tool_choice=responses_tool_choice(options.get("tool_choice")),
    )
    output = options.get("output_schema")
    if output is not None:
        payload["text"] = {"format": {"type": "json_schema", **json_schema_format(output)}}
    payload.update(reasoning_params(model, options))
    return payload


def responses_tool_choice(choice: Any) -> Any:
    """The ``tool_choice`` field; a tool's name (or Anthropic's spellings) is accepted too, so
    one ``tool_choice`` works across adapters."""
    if choice == "any":
        return "required"
    if isinstance(choice, str) and choice not in ("auto", "none", "required"):
        return {"type": "function", "name": choice}
    if isinstance(choice, dict) and choice.get("type") == "tool" and choice.get("name"):
        return {"type": "function", "name": choice["name"]}
    return choice


def reasoning_params(model: Model, options: ResponsesOptions) -> JsonDict:
    """The ``reasoning`` and ``include`` request fields for a reasoning model.

    ``include`` always asks for the encrypted reasoning: with ``store: false`` it is the only
    way the next turn can hand the model its own reasoning back.
    """
    if not model.reasoning:
        return {}
    # pi appends a "# Juice: 0 !important" developer message when no effort is given, an
    # undocumented trick to suppress reasoning that its own catalog names never trigger;
    # tau sends the model's default instead.
    params: JsonDict = {"include": ["reasoning.encrypted_content"]}
    effort = options.get("reasoning_effort")
    summary = options.get("reasoning_summary")
    if effort or summary:
        params["reasoning"] = {"effort": effort or "medium", "summary": summary or "auto"}
    return params
