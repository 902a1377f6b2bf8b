"""Which adapter serves which ``model.api``.

Built-in adapters are registered by module path and imported on first use, so a user of one
provider never imports another's code (or an HTTP library, until a call is made). A failed
import, typically a missing optional extra, becomes an ``error`` event that says what to
install.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from tau.ai.core.options import check_options, option_keys
from tau.ai.core.types import Context, Model
from tau.ai.streaming.event_stream import AssistantMessageEventStream
from tau.ai.streaming.launch import error_stream

StreamFunction: TypeAlias = Callable[
    [Model, Context, Mapping[str, Any]], AssistantMessageEventStream
]
"""``(model, context, options) -> stream``: what an adapter provides, twice (raw and simple)."""


@dataclass(frozen=True, slots=True)
class ApiProvider:
    """The two entry points of one API's adapter, and the options each accepts.

    ``options``/``simple_options`` are the adapter's ``TypedDict``s of options; None accepts
    any key (a custom adapter registered without them).
    """

    api: str
    stream: StreamFunction
    stream_simple: StreamFunction
    source_id: str | None = None
    options: type | None = None
    simple_options: type | None = None
    option_keys: frozenset[str] | None = field(default=None, init=False)
    simple_option_keys: frozenset[str] | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        for name, typed in (
            ("option_keys", self.options),
            ("simple_option_keys", self.simple_options),
        ):
            if typed is not None:
                object.__setattr__(self, name, option_keys(typed))

    def check(self, options: Mapping[str, Any], *, simple: bool = False) -> None:
        """Raise ``TypeError`` for an option this adapter does not take."""
        allowed = self.simple_option_keys if simple else self.option_keys
        if allowed is not None and not allowed.issuperset(options):
            call = "stream_simple()" if simple else "stream()"
            check_options(options, allowed, f"{call} for api {self.api!r}")


class UnknownApiError(LookupError):
    """No adapter is registered for a model's ``api``."""


# api -> (module path, extra that module needs or None)
_BUILTIN: dict[str, tuple[str, str | None]] = {
    "anthropic-messages": ("tau.ai.providers.anthropic.adapter", None),
    "openai-completions": ("tau.ai.providers.openai_completions.adapter", None),
    "openai-responses": ("tau.ai.providers.openai_responses.openai", None),
    "azure-openai-responses": ("tau.ai.providers.openai_responses.azure", None),
    "google-generative-ai": ("tau.ai.providers.google.gemini", None),
    "google-vertex": ("tau.ai.providers.google.vertex", "vertex"),
    "mistral-conversations": ("tau.ai.providers.mistral.adapter", None),
    "bedrock-converse-stream": ("tau.ai.providers.bedrock.adapter", "bedrock"),
    "llama-cpp": ("tau.ai.providers.llama_cpp.adapter", "local"),
    "faux": ("tau.ai.providers.faux", None),
}

_registry: dict[str, ApiProvider] = {}


def register_api_provider(
    api: str,
    stream: StreamFunction,
    stream_simple: StreamFunction | None = None,
    *,
    source_id: str | None = None,
    options: type | None = None,
    simple_options: type | None = None,
) -> None:
    """Serve ``api`` with these functions (replacing any earlier registration).

    ``stream_simple`` defaults to ``stream``: an adapter without provider-specific reasoning
    options can take the simple options as they are. ``options`` and ``simple_options`` are
    the ``TypedDict``s of options each takes: given, any other key is a ``TypeError`` at the
    call; left out, every key is passed on.
    """
    _registry[api] = ApiProvider(
        api, stream, stream_simple or stream, source_id, options, simple_options or options
    )


def unregister_api_providers(source_id: str) -> None:
    """Remove every registration made with ``source_id``."""
    for api in [a for a, p in _registry.items() if p.source_id == source_id]:
        del _registry[api]


def get_api_providers() -> list[str]:
    """Every api that can be served: registered ones and the built-ins."""
    return sorted(set(_registry) | set(_BUILTIN))


def get_api_provider(api: str) -> ApiProvider | None:
    """The adapter for ``api``, importing a built-in on first use; None if unknown."""
    provider = _registry.get(api)
    if provider is not None:
        return provider
    builtin = _BUILTIN.get(api)
    if builtin is None:
        return None
    module_path, extra = builtin
    try:
        module = importlib.import_module(module_path)
    except ImportError as exc:
        return _missing_dependency(api, extra, exc)
    provider = ApiProvider(
        api,
        module.stream,
        module.stream_simple,
        "builtin",
        module.OPTIONS,
        module.SIMPLE_OPTIONS,
    )
    _registry[api] = provider
    return provider


def resolve_api_provider(api: str) -> ApiProvider:
    """Like :func:`get_api_provider`, but an unknown api raises :class:`UnknownApiError`."""
    provider = get_api_provider(api)
    if provider is None:
        known = ", ".join(get_api_providers())
        raise UnknownApiError(f"No API provider registered for api {api!r}; registered: {known}")
    return provider


def _missing_dependency(api: str, extra: str | None, exc: ImportError) -> ApiProvider:
    if extra == "local":
        from tau.ai.lookup.local_models import INSTALL_HINT

        hint = INSTALL_HINT  # the plain extra may build a llama-cpp-python that crashes
    else:
        hint = f"pip install 'tau[{extra}]'" if extra else "reinstall tau"
    message = f"The {api!r} API needs a package that is not installed ({exc}): {hint}"

    def fail(
        model: Model, context: Context, options: Mapping[str, Any]
    ) -> AssistantMessageEventStream:
        return error_stream(model, message)

    return ApiProvider(api, fail, fail)
