"""The provider record: everything tau needs to know about one wire API, in one value.

A provider package declares one :class:`Provider` per api in its ``provider.py``; the registry
(:mod:`tau.ai.lookup.registry`) reads records, never adapter modules, and turns a record into the
stream function its calls run. Third-party packages declare the same record and register it
through the ``tau.providers`` entry point group.

This module imports nothing but the standard library at run time, so reading a record's shape
costs nothing at ``import tau.ai``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

if TYPE_CHECKING:
    from tau.ai.core.errors import ProviderError, ProviderHTTPError
    from tau.ai.core.types import Context, Model, ThinkingBudgets, ThinkingLevel
    from tau.ai.streaming.adapter import Authorize, BuildRequest, EventDecoder, FrameDecoder
    from tau.ai.streaming.builder import MessageBuilder
    from tau.ai.streaming.event_stream import AssistantMessageEventStream

__all__ = [
    "AuthorizeFactory",
    "DecoderFactory",
    "ExplainFactory",
    "Provider",
    "ReasoningMap",
    "StreamFunction",
    "builder_decoder",
    "own_setting_key",
]

StreamFunction: TypeAlias = Callable[["Model", "Context", Any], "AssistantMessageEventStream"]
"""``(model, context, options) -> stream``: what a call runs, with resolved options."""

DecoderFactory: TypeAlias = Callable[
    ["MessageBuilder", "Model", "Context", Any], "EventDecoder | FrameDecoder"
]
"""``(builder, model, context, options) -> decoder``: one per response."""

AuthorizeFactory: TypeAlias = Callable[["Model", Any], "Authorize | None"]
"""``(model, options) -> authorize``: authentication that needs the final body or I/O (a
SigV4 signature, an Application Default Credentials token); None when the request is complete."""

ExplainFactory: TypeAlias = Callable[["ProviderHTTPError", "Model", Any], "ProviderError"]
"""``(error, model, options) -> error``: better text for an HTTP error (the provider's own
details, a hint about the key)."""

ReasoningMap: TypeAlias = Callable[
    ["Model", dict[str, Any], "ThinkingLevel | None", "ThinkingBudgets | None"], None
]
"""``(model, options, level, budgets)``: writes the unified ``reasoning`` level into the
provider's own options, in place (a thinking budget added to ``max_tokens``, an effort…)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Provider:
    """One wire API: its options, keys, request builder, decoder and how to run them.

    An HTTP provider gives ``build_request`` and ``decoder`` (and, where it needs them,
    ``authorize`` and ``explain``): the shared driver sends the request and feeds the decoder.
    A provider that is not plain HTTP (in-process inference, a scripted stand-in) gives its own
    ``stream`` instead. Every function sees resolved options: common keys and its own keys
    without their prefix (see :mod:`tau.ai.core.settings`).
    """

    api: str
    """The ``model.api`` it serves."""
    options: type
    """The ``TypedDict`` of every option its functions read (the common keys it takes, and its
    own, unprefixed)."""
    prefix: str
    """The prefix of its own keys in :class:`tau.ai.Settings` (``"anthropic_"``)."""
    env_keys: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """``model.provider`` -> the environment variables holding its key, the first set wins
    (a provider whose credentials are ambient maps to ``()`` and gives ``credentials``)."""
    credentials: Callable[[], str | None] | None = None
    """Credentials configured without a key variable (Application Default Credentials, the
    AWS chain): a key, :data:`~tau.ai.lookup.env_keys.AUTHENTICATED`, or None. Asked for the
    providers of ``env_keys`` when none of their variables is set."""
    credential_hints: tuple[str, ...] = ()
    """The main variables of that credential chain, named in messages (never read as a key)."""
    build_request: BuildRequest | None = None
    """``(model, context, options) -> ProviderRequest``, pure (no I/O)."""
    decoder: DecoderFactory | None = None
    """Makes the decoder of one response."""
    framing: Literal["sse", "binary"] = "sse"
    """Server-sent events, or a binary event stream (the decoder is then a ``FrameDecoder``)."""
    authorize: AuthorizeFactory | None = None
    explain: ExplainFactory | None = None
    """Better text for an HTTP error."""
    stream: StreamFunction | None = None
    """Its own stream function, instead of the HTTP driver."""
    reasoning: ReasoningMap | None = None
    """Maps the unified ``reasoning`` level; None: the level is ignored."""
    catalog: Callable[[], Sequence[Model]] | None = None
    """Its models, where tau's catalog does not list them (a third-party provider's own)."""
    option_keys: frozenset[str] = field(init=False)
    """The keys of :attr:`options`."""
    common_keys: frozenset[str] = field(init=False)
    """The common settings keys it takes as they are (the reasoning ones go to
    :attr:`reasoning` instead)."""
    own_keys: frozenset[str] = field(init=False)
    """Its own options (the keys of :attr:`options` that are not common settings)."""
    setting_keys: Mapping[str, str] = field(init=False)
    """Each key it reads -> the option it becomes: its common keys, its own keys under their
    prefix, and (for the keyword form of the entry points) its own keys by their own names."""

    def __post_init__(self) -> None:
        from tau.ai.core.options import COMMON_KEYS, SIMPLE_ONLY_KEYS, option_keys

        keys = option_keys(self.options)
        common = keys & COMMON_KEYS - SIMPLE_ONLY_KEYS
        own = keys - COMMON_KEYS
        table = {key: key for key in common}
        for key in own:
            table[own_setting_key(self.prefix, key)] = key
            table[key] = key
        object.__setattr__(self, "option_keys", keys)
        object.__setattr__(self, "common_keys", common)
        object.__setattr__(self, "own_keys", own)
        object.__setattr__(self, "setting_keys", table)

    @property
    def own_setting_keys(self) -> frozenset[str]:
        """Its own keys under their prefix: what it adds to :class:`tau.ai.Settings`."""
        return frozenset(own_setting_key(self.prefix, key) for key in self.own_keys)

    def resolve(self, model: Model, settings: Mapping[str, Any]) -> dict[str, Any]:
        """The options its functions see for one request, from ``settings``.

        The one copy of a request's settings: the common keys it takes, its own keys without
        their prefix (an explicit one wins over what the reasoning map chose), the
        ``max_tokens`` default (:func:`tau.ai.core.settings.request_max_tokens`), and the
        unified ``reasoning`` level mapped. Keys of other providers, and common keys it has no
        use for, are left out.
        """
        from tau.ai.core.settings import request_max_tokens

        table = self.setting_keys
        common = self.common_keys
        out: dict[str, Any] = {}
        own: list[tuple[str, Any]] = []
        for key, value in settings.items():
            name = table.get(key)
            if name is None:
                continue
            if name in common:
                out[name] = value
            else:
                own.append((name, value))
        if "max_tokens" in self.option_keys:
            out["max_tokens"] = request_max_tokens(model, out)
        mapping = self.reasoning
        if mapping is not None:
            mapping(model, out, settings.get("reasoning"), settings.get("thinking_budgets"))
        for name, value in own:
            out[name] = value
        return out

    def run(self) -> StreamFunction:
        """The function a call runs: its own ``stream``, or the HTTP driver on its parts."""
        if self.stream is not None:
            return self.stream
        build_request, make_decoder = self.build_request, self.decoder
        if build_request is None or make_decoder is None:
            raise TypeError(
                f"provider {self.api!r} gives neither stream nor build_request and decoder"
            )
        from tau.ai.core.errors import ProviderError
        from tau.ai.streaming.adapter import launch_http

        authorize, explain, api, framing = self.authorize, self.explain, self.api, self.framing
        binary = framing == "binary"

        def stream(
            model: Model, context: Context, options: Mapping[str, Any]
        ) -> AssistantMessageEventStream:
            def decoder(builder: MessageBuilder) -> Any:
                made = make_decoder(builder, model, context, options)
                # The driver reads frames for a decoder that names its content type: a record
                # whose decoder says otherwise than its framing is refused, not misread.
                if hasattr(made, "content_type") is not binary:
                    raise ProviderError(
                        f"provider {api!r} declares {framing} framing, but its decoder "
                        f"{type(made).__name__} is {'not ' if binary else ''}a FrameDecoder"
                    )
                return made

            return launch_http(
                model,
                context,
                options,
                build_request,
                decoder,
                authorize=None if authorize is None else authorize(model, options),
                explain=None if explain is None else _bound(explain, model, options),
            )

        return stream


def builder_decoder(
    decoder: Callable[[MessageBuilder], EventDecoder | FrameDecoder],
) -> DecoderFactory:
    """The factory of a decoder that needs only the builder (``builder_decoder(MyDecoder)``)."""

    def make(builder: MessageBuilder, model: Model, context: Context, options: Any) -> Any:
        return decoder(builder)

    return make


def _bound(
    explain: ExplainFactory, model: Model, options: Mapping[str, Any]
) -> Callable[[ProviderHTTPError], ProviderError]:
    def bound(exc: ProviderHTTPError) -> ProviderError:
        return explain(exc, model, options)

    return bound


def own_setting_key(prefix: str, option: str) -> str:
    """The :class:`~tau.ai.Settings` key of a provider's own ``option``: ``prefix + option``,
    unless the option's name already starts with the prefix (``azure_api_version``)."""
    return option if option.startswith(prefix) else prefix + option
