"""tau.ai: one stateless LLM call, ``(Model, Context, options) -> AssistantMessageEventStream``.

This face holds what a user calls: the entry points (:func:`stream`, :func:`complete`, their
``_simple`` and ``_sync`` variants, and typed output), the data model, the events, the errors,
cancellation, the model catalog, fallback models, the JSON form and tool-argument validation.
Two more faces are public and stable: :mod:`tau.ai.adapters` for provider authors (the
builder, the HTTP driver, SSE and JSON helpers, the registry, the observer seams) and
:mod:`tau.ai.structured` for code that drives typed output itself (an agent loop).

``import tau.ai`` loads only what a first :func:`stream` needs: no adapter, no HTTP library,
no pydantic. Everything else (the catalog, fallback, serialization, validation, typed
output…) loads on first use, and each adapter on the first call for its ``model.api``. A name
that moved to another face still resolves here, with a ``DeprecationWarning`` that names its
new place.
"""

from typing import TYPE_CHECKING, Any

from tau.ai import _lazy, _moved
from tau.ai.core.abort import AbortController, AbortedError, AbortSignal
from tau.ai.core.errors import ProviderConnectionError, ProviderError, ProviderTimeoutError
from tau.ai.core.events import (
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
from tau.ai.core.options import (
    PayloadHook,
    SimpleStreamOptions,
    StreamOptions,
    Timeouts,
    ToolChoice,
)
from tau.ai.core.types import (
    AssistantContent,
    AssistantMessage,
    CacheRetention,
    Context,
    ImageContent,
    Message,
    Model,
    ModelCost,
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
from tau.ai.entry import (
    complete,
    complete_simple,
    complete_sync,
    stream,
    stream_simple,
    stream_sync,
)
from tau.ai.streaming.event_stream import AssistantMessageEventStream, StreamEndedError

_moved.install()

__all__ = [
    "AbortController",
    "AbortSignal",
    "AbortedError",
    "AssistantContent",
    "AssistantMessage",
    "AssistantMessageEvent",
    "AssistantMessageEventStream",
    "CacheRetention",
    "Context",
    "DoneEvent",
    "ErrorEvent",
    "FailedAttempt",
    "FallBackOn",
    "FallbackEventStream",
    "ImageContent",
    "Message",
    "Model",
    "ModelCost",
    "OpenAICompletionsCompat",
    "PayloadHook",
    "ProviderConnectionError",
    "ProviderError",
    "ProviderTimeoutError",
    "SerializationError",
    "Settings",
    "SimpleStreamOptions",
    "StartEvent",
    "StopReason",
    "StreamEndedError",
    "StreamOptions",
    "StructuredOutputError",
    "StructuredResult",
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
    "ToolCallStartEvent",
    "ToolChoice",
    "ToolResultMessage",
    "ToolValidationError",
    "UnknownModelError",
    "Usage",
    "UsageCost",
    "UserContent",
    "UserMessage",
    "add_secret_source",
    "classify_failure",
    "complete",
    "complete_simple",
    "complete_structured",
    "complete_sync",
    "context_chars",
    "default_local_model",
    "dump_context",
    "dump_message",
    "dump_model",
    "fallback_stream_fn",
    "faux",
    "find_model",
    "from_json",
    "get_env_api_key",
    "get_model",
    "get_models",
    "get_providers",
    "is_context_overflow",
    "key_variables",
    "load_context",
    "load_message",
    "load_model",
    "local_model",
    "models_are_equal",
    "redact_secrets",
    "stream",
    "stream_simple",
    "stream_structured",
    "stream_sync",
    "to_json",
    "validate_tool_arguments",
    "validate_tool_call",
]

# Each capability loads on first use: name -> the module that defines it.
_LAZY = {
    "StructuredOutputError": "tau.ai.structured.result",
    "StructuredResult": "tau.ai.structured.result",
    "complete_structured": "tau.ai.structured.run",
    "stream_structured": "tau.ai.structured.run",
    "Settings": "tau.ai.core.settings_types",
    "OpenAICompletionsCompat": "tau.ai.core.compat",
    "UnknownModelError": "tau.ai.lookup.catalog",
    "find_model": "tau.ai.lookup.catalog",
    "get_model": "tau.ai.lookup.catalog",
    "get_models": "tau.ai.lookup.catalog",
    "get_providers": "tau.ai.lookup.catalog",
    "models_are_equal": "tau.ai.lookup.catalog",
    "default_local_model": "tau.ai.lookup.local_models",
    "local_model": "tau.ai.lookup.local_models",
    "get_env_api_key": "tau.ai.lookup.env_keys",
    "key_variables": "tau.ai.lookup.env_keys",
    "FailedAttempt": "tau.ai.capabilities.fallback",
    "FallBackOn": "tau.ai.capabilities.fallback",
    "FallbackEventStream": "tau.ai.capabilities.fallback",
    "classify_failure": "tau.ai.capabilities.fallback",
    "fallback_stream_fn": "tau.ai.capabilities.fallback",
    "SerializationError": "tau.ai.capabilities.serialization",
    "dump_context": "tau.ai.capabilities.serialization",
    "dump_message": "tau.ai.capabilities.serialization",
    "dump_model": "tau.ai.capabilities.serialization",
    "from_json": "tau.ai.capabilities.serialization",
    "load_context": "tau.ai.capabilities.serialization",
    "load_message": "tau.ai.capabilities.serialization",
    "load_model": "tau.ai.capabilities.serialization",
    "to_json": "tau.ai.capabilities.serialization",
    "ToolValidationError": "tau.ai.capabilities.validation",
    "validate_tool_arguments": "tau.ai.capabilities.validation",
    "validate_tool_call": "tau.ai.capabilities.validation",
    "context_chars": "tau.ai.capabilities.size",
    "is_context_overflow": "tau.ai.capabilities.overflow",
    "add_secret_source": "tau.ai.capabilities.secrets",
    "redact_secrets": "tau.ai.capabilities.secrets",
}

# Modules that are public names as a whole: ``from tau.ai import faux``.
_LAZY_MODULES = {"faux": "tau.ai.providers.faux"}

# Names that left this face (deprecated here for one minor version): name -> its new place.
_ADAPTERS = "tau.ai.adapters"
_STRUCTURED = "tau.ai.structured"
_MOVED_NAMES = {
    **dict.fromkeys(
        [
            "INSTALL_HINT",
            "LOCAL_PROVIDER",
            "ABORTED_MESSAGE",
            "ApiProvider",
            "CallObserver",
            "EventDecoder",
            "EventStream",
            "ForeignThinking",
            "FrameDecoder",
            "HttpObserver",
            "IncrementalJsonParser",
            "MessageBuilder",
            "MistralIdNormalizer",
            "OutputSchema",
            "ProviderRequest",
            "StartCall",
            "ToolCallIdNormalizer",
            "ToolChoiceOption",
            "UnknownApiError",
            "apply_on_payload",
            "calculate_cost",
            "describe_error",
            "dump_content",
            "dump_usage",
            "get_api_provider",
            "get_api_providers",
            "get_call_observer",
            "http_observer",
            "launch_http",
            "launch_stream",
            "load_usage",
            "normalize_id_anthropic",
            "normalize_id_openai_completions",
            "normalize_id_responses",
            "one_line",
            "overflow_patterns",
            "parse_streaming_json",
            "register_api_provider",
            "require_api_key",
            "resolve_api_key",
            "run_http_adapter",
            "sanitize_surrogates",
            "set_call_observer",
            "short_hash",
            "transform_messages",
            "unregister_api_providers",
        ],
        _ADAPTERS,
    ),
    **dict.fromkeys(
        [
            "NOTHING",
            "OUTPUT_TOOL_NAME",
            "OutputMode",
            "OutputSpec",
            "OutputValidationError",
            "PartialOutput",
            "StructuredStream",
            "find_json",
            "output_call",
            "output_feedback",
            "read_output",
            "resolve_mode",
            "structured_request",
            "supports_native_output",
        ],
        _STRUCTURED,
    ),
    "DEFAULT_FALL_BACK_ON": "tau.ai.capabilities.fallback",
    "FailureKind": "tau.ai.capabilities.fallback",
    "embedded_gguf": "tau.ai.lookup.local_models",
    "ProviderStreamOptions": "tau.ai.lookup.provider_options",
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
}

if TYPE_CHECKING:
    from tau.ai.capabilities.fallback import (
        FailedAttempt,
        FallbackEventStream,
        FallBackOn,
        classify_failure,
        fallback_stream_fn,
    )
    from tau.ai.capabilities.overflow import is_context_overflow
    from tau.ai.capabilities.secrets import add_secret_source, redact_secrets
    from tau.ai.capabilities.serialization import (
        SerializationError,
        dump_context,
        dump_message,
        dump_model,
        from_json,
        load_context,
        load_message,
        load_model,
        to_json,
    )
    from tau.ai.capabilities.size import context_chars
    from tau.ai.capabilities.validation import (
        ToolValidationError,
        validate_tool_arguments,
        validate_tool_call,
    )
    from tau.ai.core.compat import OpenAICompletionsCompat
    from tau.ai.core.settings_types import Settings
    from tau.ai.lookup.catalog import (
        UnknownModelError,
        find_model,
        get_model,
        get_models,
        get_providers,
        models_are_equal,
    )
    from tau.ai.lookup.env_keys import get_env_api_key, key_variables
    from tau.ai.lookup.local_models import default_local_model, local_model
    from tau.ai.providers import faux
    from tau.ai.structured.result import StructuredOutputError, StructuredResult
    from tau.ai.structured.run import complete_structured, stream_structured


def __getattr__(name: str) -> Any:
    return _lazy.resolve(__name__, globals(), name, _LAZY, _MOVED_NAMES, _LAZY_MODULES)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY) | set(_LAZY_MODULES))
