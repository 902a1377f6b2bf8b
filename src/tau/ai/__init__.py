"""tau.ai: one stateless LLM call, ``(Model, Context, options) -> AssistantMessageEventStream``.

Importing this package imports no provider adapter and no HTTP library; each adapter loads on
the first call for its ``model.api``. The adapters' option types (``AnthropicOptions``…) are
resolved on first use too, so naming one does not load its adapter either, and so are the
names of typed output (:mod:`tau.ai.structured`).
"""

from typing import TYPE_CHECKING, Any

from tau.ai.abort import AbortController, AbortedError, AbortSignal
from tau.ai.adapter import (
    EventDecoder,
    FrameDecoder,
    ProviderRequest,
    apply_on_payload,
    launch_http,
    run_http_adapter,
)
from tau.ai.builder import MessageBuilder, launch_stream
from tau.ai.catalog import (
    UnknownModelError,
    find_model,
    get_model,
    get_models,
    get_providers,
    models_are_equal,
)
from tau.ai.entry import (
    complete,
    complete_simple,
    complete_sync,
    stream,
    stream_simple,
    stream_sync,
)
from tau.ai.env_keys import get_env_api_key, require_api_key, resolve_api_key
from tau.ai.errors import (
    ABORTED_MESSAGE,
    ProviderConnectionError,
    ProviderError,
    ProviderTimeoutError,
    describe_error,
    one_line,
)
from tau.ai.event_stream import AssistantMessageEventStream, EventStream, StreamEndedError
from tau.ai.events import (
    AssistantMessageEvent,
    DoneEvent,
    ErrorEvent,
    StartEvent,
    TextDeltaEvent,
    TextEndEvent,
    TextStartEvent,
    ThinkingDeltaEvent,
    ThinkingEndEvent,
    ThinkingStartEvent,
    ToolCallDeltaEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
)
from tau.ai.fallback import (
    DEFAULT_FALL_BACK_ON,
    FailedAttempt,
    FailureKind,
    FallbackEventStream,
    FallBackOn,
    classify_failure,
    fallback_stream_fn,
)
from tau.ai.observe import (
    CallObserver,
    HttpObserver,
    StartCall,
    get_call_observer,
    http_observer,
    set_call_observer,
)
from tau.ai.options import (
    OutputSchema,
    PayloadHook,
    SimpleStreamOptions,
    StreamOptions,
    Timeouts,
    ToolChoice,
    ToolChoiceOption,
)
from tau.ai.registry import (
    ApiProvider,
    UnknownApiError,
    get_api_provider,
    get_api_providers,
    register_api_provider,
    unregister_api_providers,
)
from tau.ai.secrets import (
    REDACTED,
    SecretSource,
    add_secret_source,
    redact_secrets,
    remember_secret,
)
from tau.ai.serialization import (
    SerializationError,
    dump_content,
    dump_context,
    dump_message,
    dump_model,
    dump_usage,
    from_json,
    load_context,
    load_message,
    load_model,
    load_usage,
    to_json,
)
from tau.ai.types import (
    AssistantContent,
    AssistantMessage,
    CacheRetention,
    Context,
    ImageContent,
    Message,
    Model,
    ModelCost,
    OpenAICompletionsCompat,
    StopReason,
    TextContent,
    ThinkingBudgets,
    ThinkingContent,
    ThinkingLevel,
    Tool,
    ToolCall,
    ToolResultMessage,
    Usage,
    UsageCost,
    UserContent,
    UserMessage,
)
from tau.ai.utils.cost import calculate_cost
from tau.ai.utils.hash import short_hash
from tau.ai.utils.overflow import is_context_overflow, overflow_patterns
from tau.ai.utils.partial_json import IncrementalJsonParser, parse_streaming_json
from tau.ai.utils.sanitize import sanitize_surrogates
from tau.ai.utils.size import context_chars
from tau.ai.utils.transform_messages import (
    ForeignThinking,
    MistralIdNormalizer,
    ToolCallIdNormalizer,
    normalize_id_anthropic,
    normalize_id_openai_completions,
    normalize_id_responses,
    transform_messages,
)
from tau.ai.utils.validation import (
    ToolValidationError,
    validate_tool_arguments,
    validate_tool_call,
)

__all__ = [
    "ABORTED_MESSAGE",
    "DEFAULT_FALL_BACK_ON",
    "INSTALL_HINT",
    "LOCAL_PROVIDER",
    "NOTHING",
    "OUTPUT_TOOL_NAME",
    "REDACTED",
    "AbortController",
    "AbortSignal",
    "AbortedError",
    "AnthropicOptions",
    "AnthropicSimpleOptions",
    "ApiProvider",
    "AssistantContent",
    "AssistantMessage",
    "AssistantMessageEvent",
    "AssistantMessageEventStream",
    "AzureOpenAIResponsesOptions",
    "AzureOpenAIResponsesSimpleOptions",
    "BedrockOptions",
    "BedrockSimpleOptions",
    "CacheRetention",
    "CallObserver",
    "Context",
    "DoneEvent",
    "ErrorEvent",
    "EventDecoder",
    "EventStream",
    "FailedAttempt",
    "FailureKind",
    "FallBackOn",
    "FallbackEventStream",
    "ForeignThinking",
    "FrameDecoder",
    "GoogleOptions",
    "GoogleSimpleOptions",
    "GoogleThinking",
    "GoogleVertexOptions",
    "GoogleVertexSimpleOptions",
    "HttpObserver",
    "ImageContent",
    "IncrementalJsonParser",
    "Message",
    "MessageBuilder",
    "MistralIdNormalizer",
    "MistralOptions",
    "MistralSimpleOptions",
    "Model",
    "ModelCost",
    "OpenAICompletionsCompat",
    "OpenAICompletionsOptions",
    "OpenAICompletionsSimpleOptions",
    "OpenAIResponsesOptions",
    "OpenAIResponsesSimpleOptions",
    "OutputMode",
    "OutputSchema",
    "OutputSpec",
    "OutputValidationError",
    "PartialOutput",
    "PayloadHook",
    "ProviderConnectionError",
    "ProviderError",
    "ProviderRequest",
    "ProviderStreamOptions",
    "ProviderTimeoutError",
    "SecretSource",
    "SerializationError",
    "SimpleStreamOptions",
    "StartCall",
    "StartEvent",
    "StopReason",
    "StreamEndedError",
    "StreamOptions",
    "StructuredOutputError",
    "StructuredResult",
    "StructuredStream",
    "TextContent",
    "TextDeltaEvent",
    "TextEndEvent",
    "TextStartEvent",
    "ThinkingBudgets",
    "ThinkingContent",
    "ThinkingDeltaEvent",
    "ThinkingEndEvent",
    "ThinkingLevel",
    "ThinkingStartEvent",
    "Timeouts",
    "Tool",
    "ToolCall",
    "ToolCallDeltaEvent",
    "ToolCallEndEvent",
    "ToolCallIdNormalizer",
    "ToolCallStartEvent",
    "ToolChoice",
    "ToolChoiceOption",
    "ToolResultMessage",
    "ToolValidationError",
    "UnknownApiError",
    "UnknownModelError",
    "Usage",
    "UsageCost",
    "UserContent",
    "UserMessage",
    "add_secret_source",
    "apply_on_payload",
    "calculate_cost",
    "classify_failure",
    "complete",
    "complete_simple",
    "complete_structured",
    "complete_sync",
    "context_chars",
    "default_local_model",
    "describe_error",
    "dump_content",
    "dump_context",
    "dump_message",
    "dump_model",
    "dump_usage",
    "embedded_gguf",
    "fallback_stream_fn",
    "faux",
    "find_json",
    "find_model",
    "from_json",
    "get_api_provider",
    "get_api_providers",
    "get_call_observer",
    "get_env_api_key",
    "get_model",
    "get_models",
    "get_providers",
    "http_observer",
    "is_context_overflow",
    "launch_http",
    "launch_stream",
    "load_context",
    "load_message",
    "load_model",
    "load_usage",
    "local_model",
    "models_are_equal",
    "normalize_id_anthropic",
    "normalize_id_openai_completions",
    "normalize_id_responses",
    "one_line",
    "output_call",
    "output_feedback",
    "overflow_patterns",
    "parse_streaming_json",
    "read_output",
    "redact_secrets",
    "register_api_provider",
    "remember_secret",
    "require_api_key",
    "resolve_api_key",
    "resolve_mode",
    "run_http_adapter",
    "sanitize_surrogates",
    "set_call_observer",
    "short_hash",
    "stream",
    "stream_simple",
    "stream_structured",
    "stream_sync",
    "structured_request",
    "supports_native_output",
    "to_json",
    "transform_messages",
    "unregister_api_providers",
    "validate_tool_arguments",
    "validate_tool_call",
]

# Names resolved on first use: each adapter's option types live beside the adapter, and
# importing them loads no adapter (only its options module); the local-model helpers import
# pathlib and the faux provider is an adapter, neither needed by ``import tau.ai``.
_LAZY = {
    "INSTALL_HINT": "tau.ai.local_models",
    "LOCAL_PROVIDER": "tau.ai.local_models",
    "default_local_model": "tau.ai.local_models",
    "embedded_gguf": "tau.ai.local_models",
    "local_model": "tau.ai.local_models",
    "AnthropicOptions": "tau.ai.providers.anthropic.options",
    "AnthropicSimpleOptions": "tau.ai.providers.anthropic.options",
    "BedrockOptions": "tau.ai.providers.bedrock.options",
    "BedrockSimpleOptions": "tau.ai.providers.bedrock.options",
    "GoogleOptions": "tau.ai.providers.google.options",
    "GoogleSimpleOptions": "tau.ai.providers.google.options",
    "GoogleThinking": "tau.ai.providers.google.options",
    "GoogleVertexOptions": "tau.ai.providers.google.options",
    "GoogleVertexSimpleOptions": "tau.ai.providers.google.options",
    "MistralOptions": "tau.ai.providers.mistral.options",
    "MistralSimpleOptions": "tau.ai.providers.mistral.options",
    "OpenAICompletionsOptions": "tau.ai.providers.openai_completions.options",
    "OpenAICompletionsSimpleOptions": "tau.ai.providers.openai_completions.options",
    "AzureOpenAIResponsesOptions": "tau.ai.providers.openai_responses.options",
    "AzureOpenAIResponsesSimpleOptions": "tau.ai.providers.openai_responses.options",
    "OpenAIResponsesOptions": "tau.ai.providers.openai_responses.options",
    "OpenAIResponsesSimpleOptions": "tau.ai.providers.openai_responses.options",
    "ProviderStreamOptions": "tau.ai.provider_options",
    "OUTPUT_TOOL_NAME": "tau.ai.structured.spec",
    "OutputSpec": "tau.ai.structured.spec",
    "OutputValidationError": "tau.ai.structured.spec",
    "OutputMode": "tau.ai.structured.modes",
    "output_call": "tau.ai.structured.modes",
    "output_feedback": "tau.ai.structured.modes",
    "read_output": "tau.ai.structured.modes",
    "resolve_mode": "tau.ai.structured.modes",
    "structured_request": "tau.ai.structured.modes",
    "supports_native_output": "tau.ai.structured.modes",
    "PartialOutput": "tau.ai.structured.extract",
    "NOTHING": "tau.ai.structured.extract",
    "find_json": "tau.ai.structured.extract",
    "StructuredOutputError": "tau.ai.structured.result",
    "StructuredResult": "tau.ai.structured.result",
    "StructuredStream": "tau.ai.structured.run",
    "complete_structured": "tau.ai.structured.run",
    "stream_structured": "tau.ai.structured.run",
}

# Modules resolved on first use, public as a whole: ``from tau.ai import faux``.
_LAZY_MODULES = {"faux": "tau.ai.providers.faux"}

if TYPE_CHECKING:
    from tau.ai.local_models import (
        INSTALL_HINT,
        LOCAL_PROVIDER,
        default_local_model,
        embedded_gguf,
        local_model,
    )
    from tau.ai.provider_options import ProviderStreamOptions
    from tau.ai.providers import faux
    from tau.ai.providers.anthropic.options import AnthropicOptions, AnthropicSimpleOptions
    from tau.ai.providers.bedrock.options import BedrockOptions, BedrockSimpleOptions
    from tau.ai.providers.google.options import (
        GoogleOptions,
        GoogleSimpleOptions,
        GoogleThinking,
        GoogleVertexOptions,
        GoogleVertexSimpleOptions,
    )
    from tau.ai.providers.mistral.options import MistralOptions, MistralSimpleOptions
    from tau.ai.providers.openai_completions.options import (
        OpenAICompletionsOptions,
        OpenAICompletionsSimpleOptions,
    )
    from tau.ai.providers.openai_responses.options import (
        AzureOpenAIResponsesOptions,
        AzureOpenAIResponsesSimpleOptions,
        OpenAIResponsesOptions,
        OpenAIResponsesSimpleOptions,
    )
    from tau.ai.structured.extract import NOTHING, PartialOutput, find_json
    from tau.ai.structured.modes import (
        OutputMode,
        output_call,
        output_feedback,
        read_output,
        resolve_mode,
        structured_request,
        supports_native_output,
    )
    from tau.ai.structured.result import StructuredOutputError, StructuredResult
    from tau.ai.structured.run import StructuredStream, complete_structured, stream_structured
    from tau.ai.structured.spec import OUTPUT_TOOL_NAME, OutputSpec, OutputValidationError


def __getattr__(name: str) -> Any:
    import importlib

    module = _LAZY.get(name)
    if module is not None:
        value = getattr(importlib.import_module(module), name)
    elif name in _LAZY_MODULES:
        value = importlib.import_module(_LAZY_MODULES[name])
    else:
        raise AttributeError(f"module 'tau.ai' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY) | set(_LAZY_MODULES))
