"""The provider author's face of tau.ai: what a new adapter, or code that plugs into the call
machinery, is built from. Public, documented and stable like :mod:`tau.ai` itself.

* **Building a stream**: :class:`MessageBuilder` takes the provider's output block by block;
  :func:`launch_stream` runs an ``async def run(builder)`` as a task and keeps the stream
  contract (``start`` first, one terminal event, errors and aborts as events);
  :func:`error_stream` fails at once; :func:`output_cap` bounds what one response may hold;
  :class:`EventStream` is the generic push/pull stream under all of them.
* **An HTTP adapter**: ``build_request(model, context, options) -> ProviderRequest`` with the
  headers from :func:`request_headers` and the key from :func:`resolve_api_key`, a decoder
  (:class:`EventDecoder` for server-sent events, often a :class:`JsonEventDecoder`;
  :class:`FrameDecoder` for binary event streams), and :func:`launch_http` joining them (the
  driver is :func:`run_http_adapter`). JSON in and out: :func:`json_text`,
  :func:`tool_arguments_json`, :func:`parse_json`, :func:`parse_streaming_json`,
  :class:`PathJsonWriter`; :func:`sanitize_surrogates` before sending text.
* **History from other providers**: :func:`transform_messages` and the tool-call id
  normalisers.
* **Registering**: a provider is one :class:`Provider` record (:func:`builder_decoder` makes
  the decoder factory of a decoder that needs only the builder), registered with
  :func:`register_provider` or a ``tau.providers`` entry point; :func:`register_api_provider`
  is the older form (functions, no record). :func:`check_settings` is the check of
  :class:`tau.ai.Settings` that ``Agent`` and the entry points run.
* **Secrets and the local model**: :func:`remember_secret` adds a key an adapter obtained
  (an OAuth token, a signed header) to what :func:`tau.ai.redact_secrets` hides, shown as
  :data:`REDACTED`; :class:`SecretSource` is what :func:`tau.ai.add_secret_source` takes.
  :data:`LOCAL_PROVIDER` and :data:`INSTALL_HINT` name the embedded model's provider and how to
  install it.
* **Observing**: :func:`set_call_observer` and :data:`http_observer`, the seams
  ``tau.telemetry`` uses.

Every name loads on first use, so importing this module costs nothing.
"""

from typing import TYPE_CHECKING, Any

from tau.ai import _lazy

__all__ = [
    "ABORTED_MESSAGE",
    "AUTHENTICATED",
    "INSTALL_HINT",
    "JSON_EVENT_STREAM",
    "LOCAL_PROVIDER",
    "REDACTED",
    "UNKNOWN_ERROR_MESSAGE",
    "ApiProvider",
    "Authorize",
    "BuildRequest",
    "CallObserver",
    "EventDecoder",
    "EventStream",
    "ExplainError",
    "ForeignThinking",
    "FrameDecoder",
    "HttpObserver",
    "IncrementalJsonParser",
    "JsonEventDecoder",
    "JsonPathError",
    "MessageBuilder",
    "MistralIdNormalizer",
    "OutputSchema",
    "PathJsonWriter",
    "Provider",
    "ProviderHTTPError",
    "ProviderRequest",
    "Runner",
    "SSEDecoder",
    "SSEEvent",
    "SecretSource",
    "StartCall",
    "StreamFunction",
    "ToolCallIdNormalizer",
    "ToolChoiceOption",
    "UnknownApiError",
    "apply_on_payload",
    "builder_decoder",
    "calculate_cost",
    "check_options",
    "check_settings",
    "decode_json_data",
    "describe_error",
    "dump_content",
    "dump_usage",
    "error_stream",
    "excerpt",
    "get_api_provider",
    "get_api_providers",
    "get_call_observer",
    "http_observer",
    "json_bytes",
    "json_text",
    "launch_http",
    "launch_stream",
    "load_usage",
    "max_line_bytes",
    "normalize_id_anthropic",
    "normalize_id_openai_completions",
    "normalize_id_responses",
    "one_line",
    "option_keys",
    "output_cap",
    "output_chars_for",
    "overflow_patterns",
    "oversized_event",
    "parse_event_json",
    "parse_json",
    "parse_streaming_json",
    "register_api_provider",
    "register_provider",
    "remember_secret",
    "request_headers",
    "require_api_key",
    "resolve_api_key",
    "run_http_adapter",
    "sanitize_surrogates",
    "set_call_observer",
    "set_given",
    "short_hash",
    "tool_arguments_json",
    "transform_messages",
    "unregister_api_providers",
]

_LAZY = {
    "INSTALL_HINT": "tau.ai.lookup.local_models",
    "LOCAL_PROVIDER": "tau.ai.lookup.local_models",
    "REDACTED": "tau.ai.capabilities.secrets",
    "SecretSource": "tau.ai.capabilities.secrets",
    "remember_secret": "tau.ai.capabilities.secrets",
    "MessageBuilder": "tau.ai.streaming.builder",
    "Runner": "tau.ai.streaming.launch",
    "error_stream": "tau.ai.streaming.launch",
    "launch_stream": "tau.ai.streaming.launch",
    "output_cap": "tau.ai.streaming.output_cap",
    "output_chars_for": "tau.ai.streaming.output_cap",
    "EventStream": "tau.ai.streaming.event_stream",
    "Authorize": "tau.ai.streaming.adapter",
    "BuildRequest": "tau.ai.streaming.adapter",
    "EventDecoder": "tau.ai.streaming.adapter",
    "ExplainError": "tau.ai.streaming.adapter",
    "FrameDecoder": "tau.ai.streaming.adapter",
    "ProviderRequest": "tau.ai.streaming.adapter",
    "apply_on_payload": "tau.ai.streaming.adapter",
    "launch_http": "tau.ai.streaming.adapter",
    "run_http_adapter": "tau.ai.streaming.adapter",
    "set_given": "tau.ai.streaming.adapter",
    "json_bytes": "tau.ai.streaming.json_body",
    "json_text": "tau.ai.streaming.json_body",
    "tool_arguments_json": "tau.ai.streaming.json_body",
    "JsonEventDecoder": "tau.ai.streaming.sse",
    "SSEDecoder": "tau.ai.streaming.sse",
    "SSEEvent": "tau.ai.streaming.sse",
    "decode_json_data": "tau.ai.streaming.sse",
    "max_line_bytes": "tau.ai.streaming.sse",
    "oversized_event": "tau.ai.streaming.sse",
    "parse_event_json": "tau.ai.streaming.sse",
    "parse_json": "tau.ai.streaming.sse",
    "JSON_EVENT_STREAM": "tau.ai.streaming.headers",
    "request_headers": "tau.ai.streaming.headers",
    "IncrementalJsonParser": "tau.ai.streaming.partial_json",
    "parse_streaming_json": "tau.ai.streaming.partial_json",
    "JsonPathError": "tau.ai.streaming.json_path",
    "PathJsonWriter": "tau.ai.streaming.json_path",
    "sanitize_surrogates": "tau.ai.streaming.sanitize",
    "short_hash": "tau.ai.streaming.hash",
    "CallObserver": "tau.ai.streaming.observe",
    "HttpObserver": "tau.ai.streaming.observe",
    "StartCall": "tau.ai.streaming.observe",
    "get_call_observer": "tau.ai.streaming.observe",
    "http_observer": "tau.ai.streaming.observe",
    "set_call_observer": "tau.ai.streaming.observe",
    "ABORTED_MESSAGE": "tau.ai.core.errors",
    "UNKNOWN_ERROR_MESSAGE": "tau.ai.core.errors",
    "ProviderHTTPError": "tau.ai.core.errors",
    "describe_error": "tau.ai.core.errors",
    "excerpt": "tau.ai.core.errors",
    "one_line": "tau.ai.core.errors",
    "OutputSchema": "tau.ai.core.options",
    "ToolChoiceOption": "tau.ai.core.options",
    "check_options": "tau.ai.core.options",
    "option_keys": "tau.ai.core.options",
    "calculate_cost": "tau.ai.core.cost",
    "Provider": "tau.ai.lookup.provider",
    "builder_decoder": "tau.ai.lookup.provider",
    "check_settings": "tau.ai.lookup.registry",
    "register_provider": "tau.ai.lookup.registry",
    "ApiProvider": "tau.ai.lookup.registry",
    "StreamFunction": "tau.ai.lookup.provider",
    "UnknownApiError": "tau.ai.lookup.registry",
    "get_api_provider": "tau.ai.lookup.registry",
    "get_api_providers": "tau.ai.lookup.registry",
    "register_api_provider": "tau.ai.lookup.registry",
    "unregister_api_providers": "tau.ai.lookup.registry",
    "AUTHENTICATED": "tau.ai.lookup.env_keys",
    "require_api_key": "tau.ai.lookup.env_keys",
    "resolve_api_key": "tau.ai.lookup.env_keys",
    "ForeignThinking": "tau.ai.capabilities.transform_messages",
    "MistralIdNormalizer": "tau.ai.capabilities.transform_messages",
    "ToolCallIdNormalizer": "tau.ai.capabilities.transform_messages",
    "normalize_id_anthropic": "tau.ai.capabilities.transform_messages",
    "normalize_id_openai_completions": "tau.ai.capabilities.transform_messages",
    "normalize_id_responses": "tau.ai.capabilities.transform_messages",
    "transform_messages": "tau.ai.capabilities.transform_messages",
    "dump_content": "tau.ai.capabilities.serialization",
    "dump_usage": "tau.ai.capabilities.serialization",
    "load_usage": "tau.ai.capabilities.serialization",
    "overflow_patterns": "tau.ai.capabilities.overflow",
}

if TYPE_CHECKING:
    from tau.ai.capabilities.overflow import overflow_patterns
    from tau.ai.capabilities.secrets import REDACTED, SecretSource, remember_secret
    from tau.ai.capabilities.serialization import dump_content, dump_usage, load_usage
    from tau.ai.capabilities.transform_messages import (
        ForeignThinking,
        MistralIdNormalizer,
        ToolCallIdNormalizer,
        normalize_id_anthropic,
        normalize_id_openai_completions,
        normalize_id_responses,
        transform_messages,
    )
    from tau.ai.core.cost import calculate_cost
    from tau.ai.core.errors import (
        ABORTED_MESSAGE,
        UNKNOWN_ERROR_MESSAGE,
        ProviderHTTPError,
        describe_error,
        excerpt,
        one_line,
    )
    from tau.ai.core.options import OutputSchema, ToolChoiceOption, check_options, option_keys
    from tau.ai.lookup.env_keys import AUTHENTICATED, require_api_key, resolve_api_key
    from tau.ai.lookup.local_models import INSTALL_HINT, LOCAL_PROVIDER
    from tau.ai.lookup.provider import Provider, StreamFunction, builder_decoder
    from tau.ai.lookup.registry import (
        ApiProvider,
        UnknownApiError,
        check_settings,
        get_api_provider,
        get_api_providers,
        register_api_provider,
        register_provider,
        unregister_api_providers,
    )
    from tau.ai.streaming.adapter import (
        Authorize,
        BuildRequest,
        EventDecoder,
        ExplainError,
        FrameDecoder,
        ProviderRequest,
        apply_on_payload,
        launch_http,
        run_http_adapter,
        set_given,
    )
    from tau.ai.streaming.builder import MessageBuilder
    from tau.ai.streaming.event_stream import EventStream
    from tau.ai.streaming.hash import short_hash
    from tau.ai.streaming.headers import JSON_EVENT_STREAM, request_headers
    from tau.ai.streaming.json_body import json_bytes, json_text, tool_arguments_json
    from tau.ai.streaming.json_path import JsonPathError, PathJsonWriter
    from tau.ai.streaming.launch import Runner, error_stream, launch_stream
    from tau.ai.streaming.observe import (
        CallObserver,
        HttpObserver,
        StartCall,
        get_call_observer,
        http_observer,
        set_call_observer,
    )
    from tau.ai.streaming.output_cap import output_cap, output_chars_for
    from tau.ai.streaming.partial_json import IncrementalJsonParser, parse_streaming_json
    from tau.ai.streaming.sanitize import sanitize_surrogates
    from tau.ai.streaming.sse import (
        JsonEventDecoder,
        SSEDecoder,
        SSEEvent,
        decode_json_data,
        max_line_bytes,
        oversized_event,
        parse_event_json,
        parse_json,
    )


def __getattr__(name: str) -> Any:
    return _lazy.resolve(__name__, globals(), name, _LAZY, {})


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
